"""Loaders for the benchmark corpora in /work/shared/data (see each SOURCE.md).

analyst-bench: ``corpus/<folder>/<name>.txt``; the document id is the path
under corpus/ without ".txt", which is what the questions' ``doc_id`` uses.
CLAPNQ: JSONL lines, one passage each; every distinct passage is a document.
"""

from __future__ import annotations

import datetime
import hashlib
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from qa.pipeline.core.lexicon import MONTHS
from qa.pipeline.core.segment import segment

from .assemble import TITLE_MAX_CHARS, document_from_sentences, document_from_text, shorten
from .formats import parse_bytes
from .jsonl import jsonl_file
from .plaintext import decode_text
from .types import ParsedDocument, ParseError

_DATE_IN_NAME = re.compile(r"(\d{4})[-_](\d{2})[-_](\d{2})")
# Daily Mail articles in CNN/DailyMail open with a byline such as
# "By . Hugo Gye . PUBLISHED: . 06:55 EST, 28 August 2013 . | . UPDATED: . 14:29 EST, 28 August 2013 . "
_DAILY_MAIL_BYLINE = re.compile(
    r"^(?:By \..*?)?(?:PUBLISHED: \..*?\d{4} \. \| \. )?UPDATED: \..*?\d{4} \. ", re.S
)
# The byline's first date is the article's; "UPDATED" alone when it was never republished.
_DAILY_MAIL_DATE = re.compile(
    r"^(?:By \..*?)?(?:PUBLISHED|UPDATED): \. [\d:]+ \w+, (\d{1,2}) (\w+) (\d{4}) \.", re.S
)
_MONTHS = {name: number for number, name in enumerate(MONTHS, start=1)}


def iter_analyst_bench_corpus(root: Path) -> Iterator[ParsedDocument]:
    """Every document of analyst-bench, in sorted path order."""
    corpus = Path(root) / "corpus"
    if not corpus.is_dir():
        raise ParseError(f"{root} has no corpus/ folder; pass the analyst-bench directory.")
    for path in sorted(corpus.rglob("*.txt"), key=lambda p: p.relative_to(corpus).as_posix()):
        yield _analyst_bench_document(path, path.relative_to(corpus).with_suffix("").as_posix())


def iter_analyst_bench_gold(root: Path) -> Iterator[ParsedDocument]:
    """Only the gold documents (corpus/gold/), with their own sentence ids."""
    for path in sorted((Path(root) / "corpus" / "gold").glob("*.txt")):
        yield _gold_document(path, f"gold/{path.stem}", f"gold/{path.name}")


def analyst_bench_gold_ids(root: Path) -> list[str]:
    """The doc_ids the questions ask about, in first-asked order, each once."""
    ids: dict[str, None] = {}
    for path in sorted((Path(root) / "questions").glob("*.jsonl")):
        for _, where, record in jsonl_file(path):
            doc_id = record.get("doc_id")
            if not isinstance(doc_id, str) or not doc_id:
                raise ParseError(f"{where}: the question has no doc_id.")
            ids.setdefault(doc_id, None)
    return list(ids)


def iter_clapnq(paths: Path | Sequence[Path]) -> Iterator[ParsedDocument]:
    """One document per distinct passage across all files, with CLAPNQ's own sentences."""
    seen: set[tuple[str, str]] = set()
    for path in [paths] if isinstance(paths, (str, Path)) else paths:
        path = Path(path)
        for _, where, record in jsonl_file(path):
            passages = record.get("passages")
            if not isinstance(passages, list):
                raise ParseError(f'{where}: expected a "passages" list.')
            for passage in passages:
                title, text, sentences = _clapnq_passage(passage, where)
                if (title, text) in seen:
                    continue
                seen.add((title, text))
                fields = {"external_id": clapnq_passage_id(title, text), "filename": where, "title": title}
                if sentences:
                    yield document_from_sentences(sentences, text=text, source="clapnq", **fields)
                else:
                    yield document_from_text(text, source="clapnq", **fields)


def clapnq_passage_id(title: str, text: str) -> str:
    """A stable id for a CLAPNQ passage: "clapnq/<slug of title>-<8 hex of sha1(title, text)>".

    Stored documents and imported questions both use it, so the formula must
    not change once a corpus has been ingested.
    """
    digest = hashlib.sha1(f"{title}\x00{text}".encode()).hexdigest()[:8]
    return f"clapnq/{_slug(title)}-{digest}"


def _analyst_bench_document(path: Path, doc_id: str) -> ParsedDocument:
    folder = doc_id.split("/", 1)[0]
    filename = f"{doc_id}.txt"
    if folder == "gold":
        return _gold_document(path, doc_id, filename)
    text = decode_text(path.read_bytes(), filename)
    published = _date_in_name(path.stem)
    if folder == "cia-world-factbook":
        first_line, _, body = text.partition("\n")
        url = first_line.removeprefix("url:").strip() if first_line.startswith("url:") else ""
        # Two entries (Akrotiri, Dhekelia) are only the url line; they stay in
        # the corpus, as in the benchmark, with that line as their text.
        if url and body.strip():
            text = body
        # Each line is one "Section: Subsection: value" record: never join two.
        return document_from_text(
            text,
            external_id=doc_id,
            filename=filename,
            title=_factbook_country(path.stem),
            source=folder,
            url=url,
            published=published,
            hard_line_breaks=True,
        )
    title = _DAILY_MAIL_BYLINE.sub("", text.lstrip(), count=1) if folder == "abisee" else ""
    if folder == "abisee" and published is None:
        published = _byline_date(text.lstrip()[:400])
    return document_from_text(
        text,
        external_id=doc_id,
        filename=filename,
        title=_first_sentence(title),
        source=folder,
        published=published,
    )


def _gold_document(path: Path, doc_id: str, filename: str) -> ParsedDocument:
    # Gold files are pre-segmented JSON despite their .txt name, read like any upload;
    # their sentence ids are what the questions' evidence ids refer to, so every one needs its id.
    parsed = parse_bytes(path.read_bytes(), filename, external_id=doc_id)
    if len(parsed) != 1 or any(sentence.label is None for sentence in parsed[0].sentences):
        raise ParseError(f'{filename}: not a gold document with sentences [{{"sid", "text"}}].')
    document = parsed[0]
    if path.stem.startswith("the-world-factbook-by-cia__"):
        country = _factbook_country(path.stem)
        title = f"{country} (history)" if path.stem.endswith("_history") else country
    else:
        title = _first_sentence(document.sentences[0].text)
    return replace(document, title=title, source="gold", published=_date_in_name(path.stem))


def _byline_date(head: str) -> datetime.date | None:
    match = _DAILY_MAIL_DATE.match(head)
    month = _MONTHS.get(match.group(2).lower()) if match else None
    if match is None or month is None:
        return None
    try:
        return datetime.date(int(match.group(3)), month, int(match.group(1)))
    except ValueError:
        return None


def _factbook_country(stem: str) -> str:
    name = stem.split("__", 1)[-1].removesuffix("_history")
    return name.replace("_", " ")


def _first_sentence(text: str) -> str:
    spans = segment(text[:2000])
    return shorten(text[spans[0][0] : spans[0][1]], TITLE_MAX_CHARS) if spans else ""


def _date_in_name(stem: str) -> datetime.date | None:
    match = _DATE_IN_NAME.search(stem)
    if not match:
        return None
    try:
        return datetime.date(*(int(part) for part in match.groups()))
    except ValueError:
        return None


def _clapnq_passage(passage: object, where: str) -> tuple[str, str, list[str]]:
    if not isinstance(passage, dict):
        raise ParseError(f"{where}: a passage must be a JSON object.")
    title, text, sentences = passage.get("title", ""), passage.get("text"), passage.get("sentences", [])
    if not isinstance(title, str) or not isinstance(text, str) or not text.strip():
        raise ParseError(f'{where}: a passage needs a "title" string and a non-empty "text" string.')
    if not isinstance(sentences, list) or not all(isinstance(sentence, str) for sentence in sentences):
        raise ParseError(f'{where}: a passage\'s "sentences" must be a list of strings.')
    return title, text, sentences


def _slug(title: str) -> str:
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")
    return slug[:60].rstrip("-") or "passage"
