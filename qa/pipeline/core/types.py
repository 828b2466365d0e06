"""The small frozen values that flow between pipeline stages.

Everything here is plain Python: no Django, no Celery, no ORM. The one adapter
module (``qa/adapters.py``) turns database rows into these values; tests build
them by hand.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

Unit = Literal["document", "chunk", "sentence"]
SupportLabel = Literal["supported", "partial", "unsupported"]

SUPPORTED: SupportLabel = "supported"
PARTIAL: SupportLabel = "partial"
UNSUPPORTED: SupportLabel = "unsupported"


@dataclass(frozen=True)
class SourceSentence:
    """One sentence of a stored document: the thing an answer cites."""

    id: int  # unique within the corpus (the database primary key in production)
    document_id: str  # the document's external id, e.g. "gold/..._Oman_history"
    document_title: str
    ordinal: int  # 0-based position in the document
    label: str  # "S7" where the source names its sentences, else str(ordinal + 1)
    text: str
    start: int = 0  # character offsets into the document text
    end: int = 0
    # Its place in the document's structure (qa.pipeline.core.roles): the role of its block, the
    # headings above it ("FAQ > Is zlib thread-safe?"), its page where the format has pages.
    role: str = "paragraph"
    section: str = ""
    page: int | None = None


@dataclass(frozen=True)
class Passage:
    """A retrieval unit: a whole document, a window of sentences, or one sentence."""

    key: str  # unique within the corpus and unit, e.g. "chunk:812"
    unit: Unit
    document_id: str
    document_title: str
    text: str
    sentences: tuple[SourceSentence, ...]
    # The document's publication date and source (qa.pipeline.reading.dates prefers a period a question
    # names).
    published: datetime.date | None = None
    source: str = ""


@dataclass(frozen=True)
class ScoredPassage:
    """A passage with the score that ranked it and every earlier stage's score.

    ``scores`` keys are stage names ("bm25", "dense", "fused", "rerank"); a
    stage that did not see the passage leaves its key out.
    """

    passage: Passage
    score: float
    scores: dict[str, float] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class AnswerSentence:
    text: str
    citations: tuple[SourceSentence, ...]
    support: SupportLabel = UNSUPPORTED
    # What the sentence says that its citation does not, in plain words (qa.pipeline.checks.mismatch);
    # "" when nothing differs. ``contradicted``: the citation says otherwise, not merely less.
    mismatch: str = ""
    contradicted: bool = False
    # How the sentence bears on the question (qa.pipeline.checks.relation): "answers", "background",
    # "off_question"; "" before it is judged (and in runs stored before it was). The score is the
    # signal it was read from, kept for the trace.
    relation: str = ""
    relation_score: float | None = None
    # The LLM judge's P(the sentence answers the question), an input of the relation where it was
    # asked (qa.pipeline.checks.relation); ``relation_note``: why the judge gave none (its failure).
    relation_judge: float | None = None
    relation_note: str = ""


@dataclass(frozen=True)
class Answer:
    """What the pipeline returns for one question.

    A refusal has ``refused=True``, one sentence saying there is insufficient
    evidence, and no citations. ``disagreement`` is set when well-supported
    sentences from different documents conflict; ``note`` then says so.
    """

    sentences: tuple[AnswerSentence, ...]
    refused: bool = False
    disagreement: bool = False
    verified: bool = False
    note: str = ""
    retrieved_documents: tuple[str, ...] = ()  # document ids, best first
    # Calibrated probability that this answer is right (a refusal: that refusing is right);
    # None when the preset runs no confidence model.
    confidence: float | None = None
    # One of qa.pipeline.checks.answerability's answer kinds: "partial" (what the sources support, and
    # ``missing`` names the rest) or "underspecified" (a clarifying question, nothing cited).
    # "" reads as "unanswerable" for a refusal and "answerable" otherwise (runs stored before kinds).
    kind: str = ""
    missing: tuple[str, ...] = ()

    @classmethod
    def refusal(
        cls,
        note: str,
        retrieved_documents: Sequence[str] = (),
        *,
        confidence: float | None = None,
        kind: str = "",
        missing: tuple[str, ...] = (),
    ) -> Answer:
        """A refusal: the one insufficient-evidence sentence, no citations, and why in ``note``."""
        return cls(
            sentences=(AnswerSentence(REFUSAL_TEXT, (), UNSUPPORTED),),
            refused=True,
            note=note,
            retrieved_documents=tuple(retrieved_documents),
            confidence=confidence,
            kind=kind,
            missing=missing,
        )

    @property
    def text(self) -> str:
        """The answer as one paragraph. A quoted heading ("Floods close roads in southern
        Westmere") ends with a full stop here so it does not run into the next sentence; each
        sentence keeps its exact source text."""
        return " ".join(_as_ended(s.text) for s in self.sentences)

    @property
    def cited_sentences(self) -> tuple[SourceSentence, ...]:
        seen: dict[int, SourceSentence] = {}
        for sentence in self.sentences:
            for cited in sentence.citations:
                seen.setdefault(cited.id, cited)
        return tuple(seen.values())


def _as_ended(sentence: str) -> str:
    text = sentence.rstrip()
    return text if not text or text[-1] in ".!?:;\"'\u201d)]" else f"{text}."


REFUSAL_TEXT = "Insufficient evidence: the corpus does not support an answer to this question."
