"""The values the evaluation metrics take and return.

Plain Python only: this package must import with Django absent, so the Django
side gathers gold cases and predictions into these values and stores the
numbers that come back.

Evidence keys
-------------
A cited or gold sentence is named by ``"<document id>#<sentence label>"``, for
example ``"gold/the-world-factbook-by-cia__Oman_history#S9"`` (see
:func:`evidence_key`). The label is the sentence's own name in its source
("S9" in the analyst-bench gold documents, which is what the questions'
``evidence_sentences`` list). Qualifying the label with its document keeps a
citation of "S9" in some other document (say the full Factbook entry that
near-duplicates the gold one) from counting as the gold "S9". Plain labels
would silently give that credit.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def evidence_key(document_id: str, label: str) -> str:
    return f"{document_id}#{label}"


def split_evidence_key(key: str) -> tuple[str, str]:
    """Return ``(document_id, label)``; a key without ``#`` is a bare label."""
    document_id, sep, label = key.rpartition("#")
    return (document_id, label) if sep else ("", key)


@dataclass(frozen=True)
class GoldCase:
    case_id: str
    question: str
    gold_documents: tuple[str, ...]  # document external ids; any of them counts as a hit
    gold_evidence: tuple[str, ...]  # evidence keys ("doc_id#S13"), see evidence_key
    reference_answer: str
    answerable: bool
    rubric: dict | None = field(default=None, hash=False, compare=False)


@dataclass(frozen=True)
class Prediction:
    case_id: str
    answer: str
    refused: bool
    retrieved_documents: tuple[str, ...]  # best first; repeats (chunk hits) are allowed
    cited_evidence: tuple[str, ...]  # evidence keys, same scheme as GoldCase.gold_evidence
    # Texts of the cited sentences, for EvidenceScore. Left empty, the texts are
    # looked up by key in the gold sentence texts given to evaluate(); a cited
    # sentence outside the gold documents then contributes no words.
    cited_texts: tuple[str, ...] = ()
    support_score: float | None = None  # share of answer sentences judged supported, 0..1
    answer_score: float | None = None  # LLM judge, 1..5; None when no judge ran
    confidence: float | None = None  # the answer's calibrated probability of being right
    stage_latency: dict[str, float] = field(default_factory=dict, hash=False, compare=False)
    # The kind of reply (qa.pipeline.checks.answerability's answer kinds); "" before replies had kinds.
    kind: str = ""


@dataclass(frozen=True)
class EvaluationResult:
    metrics: dict[str, float | None] = field(hash=False)
    per_case: list[dict] = field(hash=False)
