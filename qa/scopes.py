"""The date range and sources a question is limited to: checked against its corpus, stored on it.

The filter itself runs inside the corpus index's searches (qa/adapters.py,
documents/lexical.py); this module turns what an analyst typed into a
``DocumentScope`` or a ``QuestionInvalid`` that says what to change.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence

from documents.models import Corpus, Document
from qa.errors import QuestionInvalid
from qa.models import Question
from qa.pipeline.reading.dates import MAX_SOURCES, DocumentScope


def corpus_sources(corpus: Corpus) -> list[str]:
    """The sources of a corpus's documents, sorted (what the source filter offers)."""
    rows = Document.objects.filter(corpus=corpus).exclude(source="").values_list("source", flat=True)
    return sorted(set(rows.distinct()))


def scope_for(
    *,
    corpus: Corpus,
    published_from: datetime.date | None = None,
    published_to: datetime.date | None = None,
    sources: Sequence[str] = (),
) -> DocumentScope | None:
    """The scope to search, or None for the whole corpus; QuestionInvalid when it cannot match."""
    if len(sources) > MAX_SOURCES:
        raise QuestionInvalid(f"At most {MAX_SOURCES} sources can be chosen; {len(sources)} were.")
    try:
        scope = DocumentScope(published_from, published_to, tuple(sources))
    except ValueError as exc:
        raise QuestionInvalid(f"The date range is empty: 'from' must not be after 'to' ({exc}).") from exc
    if scope.sources:
        known = corpus_sources(corpus)
        unknown = [source for source in scope.sources if source not in known]
        if unknown:
            offered = ", ".join(known) or "none: its documents name no source"
            raise QuestionInvalid(
                f"Corpus {corpus.name!r} has no documents from {', '.join(map(repr, unknown))}. "
                f"Its sources: {offered}."
            )
    return scope or None


def question_scope(question: Question) -> DocumentScope | None:
    scope = DocumentScope(question.published_from, question.published_to, tuple(question.sources or ()))
    return scope or None


def scope_fields(scope: DocumentScope | None) -> dict[str, object]:
    """The Question fields that store ``scope``."""
    if scope is None:
        return {}
    return {
        "published_from": scope.published_from,
        "published_to": scope.published_to,
        "sources": list(scope.sources),
    }
