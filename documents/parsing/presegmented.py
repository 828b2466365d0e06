"""JSON and JSONL documents whose author already split the sentences.

A document object looks like the analyst-bench gold files::

    {"doc_id": "...", "title": "...", "url": "...", "published": "2022-07-21",
     "sentences": [{"sid": "S1", "text": "..."}, "a plain string works too"]}

A "text" string without "sentences" is segmented like a .txt upload. Such a
document is recognised by its content, whatever the file is called: the
analyst-bench gold files are JSON named ``.txt`` (``presegmented_value``).
"""

from __future__ import annotations

import datetime
import json
from typing import Any

from .assemble import document_from_sentences, document_from_text
from .jsonl import jsonl_values
from .plaintext import decode_text
from .types import EmptyDocument, ParsedDocument, ParseError

_ID_KEYS = ("doc_id", "id", "external_id")
_LABEL_KEYS = ("sid", "id", "label")


def presegmented_value(text: str) -> Any | None:
    """The JSON value of ``text`` if it is one document object, or a list of them, with "sentences"."""
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    records = value if isinstance(value, list) else [value]
    if records and all(isinstance(r, dict) and isinstance(r.get("sentences"), list) for r in records):
        return value
    return None


def parse_json(data: bytes, filename: str, base_id: str) -> list[ParsedDocument]:
    text = decode_text(data, filename)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"{filename} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
        ) from exc
    return documents_from_json(value, filename, base_id)


def documents_from_json(value: Any, filename: str, base_id: str) -> list[ParsedDocument]:
    """A document object, or a list of them, parsed from JSON (see the module docstring)."""
    if isinstance(value, list):
        records = [(f"{filename}, document {i}", f"{base_id}-{i}", item) for i, item in enumerate(value, 1)]
        if len(records) == 1:
            records = [(records[0][0], base_id, value[0])]
    else:
        records = [(filename, base_id, value)]
    return _unique(
        [
            (where, _record_document(record, where, default_id, filename))
            for where, default_id, record in records
        ],
        filename,
    )


def parse_jsonl(data: bytes, filename: str, base_id: str) -> list[ParsedDocument]:
    text = decode_text(data, filename)
    documents = []
    for line_number, where, record in jsonl_values(text, filename, objects_only=False):
        documents.append((where, _record_document(record, where, f"{base_id}-{line_number}", filename)))
    return _unique(documents, filename)


def _record_document(record: Any, where: str, default_id: str, filename: str) -> ParsedDocument:
    if not isinstance(record, dict):
        raise ParseError(f"{where}: expected a JSON object describing a document, got {_json_type(record)}.")
    external_id = _first_scalar(record, _ID_KEYS) or default_id
    fields = {
        "external_id": external_id,
        "filename": where,
        "title": _optional_string(record, "title", where),
        "source": filename,
        "url": _optional_string(record, "url", where),
        "published": _published(record, where),
    }
    sentences = record.get("sentences")
    if sentences is None:
        text = record.get("text")
        if not isinstance(text, str):
            raise ParseError(f'{where}: a document needs a "sentences" list (or a "text" string).')
        return document_from_text(text, **fields)
    if not isinstance(sentences, list):
        raise ParseError(f'{where}: "sentences" must be a list, got {_json_type(sentences)}.')
    texts, labels = [], []
    for number, sentence in enumerate(sentences, 1):
        if isinstance(sentence, str):
            texts.append(sentence)
            labels.append(None)
        elif isinstance(sentence, dict) and isinstance(sentence.get("text"), str):
            texts.append(sentence["text"])
            labels.append(_first_scalar(sentence, _LABEL_KEYS))
        else:
            raise ParseError(
                f'{where}: sentence {number} must be a string or an object with a "text" string.'
            )
    text = record.get("text") if isinstance(record.get("text"), str) else None
    return document_from_sentences(texts, labels=labels, text=text, **fields)


def _unique(documents: list[tuple[str, ParsedDocument]], filename: str) -> list[ParsedDocument]:
    """Refuse a file that names two documents alike: the second would overwrite the first."""
    first_use: dict[str, str] = {}
    for where, document in documents:
        if document.external_id in first_use:
            raise ParseError(
                f"{where}: the id {document.external_id!r} is already used by "
                f"{first_use[document.external_id]}; every document needs its own id."
            )
        first_use[document.external_id] = where
    if not documents:
        raise EmptyDocument(f"{filename} contains no documents.")
    return [document for _, document in documents]


def _first_scalar(record: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = record.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()
    return None


def _optional_string(record: dict, key: str, where: str) -> str:
    value = record.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ParseError(f'{where}: "{key}" must be a string, got {_json_type(value)}.')
    return value


def _published(record: dict, where: str) -> datetime.date | None:
    value = record.get("published") or record.get("date")
    if value is None or value == "":
        return None
    try:
        return datetime.date.fromisoformat(str(value)[:10])
    except ValueError:
        raise ParseError(f'{where}: published date {value!r} is not a date like "2022-07-21".') from None


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}
    return names.get(type(value), "a number")
