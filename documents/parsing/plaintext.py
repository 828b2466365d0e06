"""Decode uploaded bytes as text, refusing binaries and non-UTF-8 with a reason."""

from __future__ import annotations

import re

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
