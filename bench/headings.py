"""What parsing makes headings and code of, in real files: Debian's text documentation by default.

    .venv/bin/python -m bench.headings [--list] [PATH ...]
    .venv/bin/python -m bench.headings --list $(find /usr/share/doc -name '*.html' -size +3k)

With no PATH it reads the text files Debian installs under /usr/share/doc (READMEs, FAQs and
.txt files, gzipped or not; no HTML, Markdown or Debian packaging notes), files no set was tuned
on. It prints how many files it read and how many of their sentences each role holds. ``--list``
prints every heading and code sentence (file, role, text), one a line: run it on two versions of
the parser (a worktree each) and compare the lists to see what a change reads differently.
"""

from __future__ import annotations

import argparse
import gzip
import sys
from collections import Counter
from pathlib import Path, PurePath

from documents.parsing import parse_bytes
from documents.parsing.formats import SUPPORTED_EXTENSIONS
from documents.parsing.types import ParseError

DOC_ROOT = Path("/usr/share/doc")
LISTED_ROLES = ("heading", "code")


def debian_text_files(root: Path = DOC_ROOT) -> list[Path]:
    """The plain-text documentation under ``root``, in sorted order."""
    names = ("README", "FAQ", ".txt")
    skipped = ("html", "debian", ".md")
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file()
        and any(name in path.name for name in names)
        and not any(skip in path.as_posix().lower() for skip in skipped)
    )


def read_text_file(path: Path) -> tuple[bytes, str]:
    """The file's bytes (unzipped) and a name that parses it: its own for a format uploads take
    (.html, .md ...), else as plain text ("README", "FAQ")."""
    data = path.read_bytes()
    name = path.name
    if name.endswith(".gz"):
        data, name = gzip.decompress(data), name.removesuffix(".gz")
    return data, name if PurePath(name).suffix.lower() in SUPPORTED_EXTENSIONS else f"{name}.txt"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.headings", description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="files (default: /usr/share/doc's text files)")
    parser.add_argument("--list", action="store_true", help="print every heading and code sentence")
    args = parser.parse_args(argv)
    paths = args.paths or debian_text_files()
    counts: Counter[str] = Counter()
    read = 0
    for path in paths:
        try:
            data, name = read_text_file(path)
            documents = parse_bytes(data, name)
        except (OSError, ParseError, gzip.BadGzipFile) as exc:
            print(f"skipped {path}: {exc}", file=sys.stderr)
            continue
        read += 1
        for document in documents:
            for sentence in document.sentences:
                counts[sentence.role] += 1
                if args.list and sentence.role in LISTED_ROLES:
                    print(f"{path}\t{sentence.role}\t{sentence.text!r}")
    total = sum(counts.values())
    print(f"{read} files, {total} sentences: " + ", ".join(f"{role} {n}" for role, n in counts.most_common()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
