"""Reads behind the annotate page: the state its form starts from, and what it shows around it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from documents.models import Sentence
from review.evaluation.types import split_evidence_key
from review.models import Annotation, Assignment
from review.selectors import annotation as annotation_selectors

# How many of the corpus's documents the "open a document" list offers (by external id).
DOCUMENT_CHOICES = 500
RUBRIC_SCORES = ("1", "2", "3", "4", "5")


@dataclass(frozen=True)
class AnnotateState:
    """What the annotator has chosen so far; the page's form carries it between searches and opens."""

    answerability: str = ""
    evidence: tuple[int, ...] = ()  # sentence pks
    opened: tuple[int, ...] = ()  # document pks
    reference_answer: str = ""
    question_type: str = ""
    skip_reason: str = ""
    query: str = ""
    prefilled: bool = False
    rubric_description: str = ""
    # score ("1".."5") -> what an answer with that score looks like; empty scores are left out.
    rubric_scale: dict[str, str] = field(default_factory=dict, hash=False)

    def rubric(self) -> dict | None:
        """GoldCase.rubric's shape; None without a score (a description alone is no scale)."""
        scale = {score: text for score, text in self.rubric_scale.items() if text.strip()}
        if not scale:
            return None
        description = self.rubric_description.strip()
        return {**({"description": description} if description else {}), "scale": scale}


def sentence_pks(corpus, keys) -> dict[str, int]:
    """Evidence keys -> the pk of the live sentence under each (keys whose sentence is gone are left out)."""
    documents = {split_evidence_key(key)[0] for key in keys}
    rows = Sentence.objects.filter(document__corpus=corpus, document__external_id__in=documents).values_list(
        "pk", "document__external_id", "label"
    )
    live = {f"{doc}#{label}": pk for pk, doc, label in rows}
    return {key: live[key] for key in keys if key in live}


def _documents_of(readable, external_ids) -> tuple[int, ...]:
    return tuple(readable.filter(external_id__in=list(external_ids)).values_list("pk", flat=True))


def initial_state(assignment: Assignment, readable, suggestion) -> AnnotateState:
    """The form as the annotator left it (an answered item), else GroundedQA's suggestion, else blank."""
    corpus = assignment.task.benchmark.corpus
    previous = (
        Annotation.objects.filter(assignment=assignment).first()
        if assignment.status == Assignment.Status.DONE
        else None
    )
    if previous is not None:
        rubric = previous.rubric or {}
        return AnnotateState(
            answerability=previous.answerability,
            evidence=tuple(sentence_pks(corpus, previous.evidence).values()),
            opened=_documents_of(
                readable,
                [*previous.opened_documents, *(split_evidence_key(k)[0] for k in previous.evidence)],
            ),
            reference_answer=previous.reference_answer,
            question_type=previous.question_type,
            prefilled=previous.prefilled,
            rubric_description=str(rubric.get("description", "")),
            rubric_scale={str(k): str(v) for k, v in (rubric.get("scale") or {}).items()},
        )
    if suggestion is None:
        return AnnotateState()
    return AnnotateState(
        answerability=suggestion.answerability,
        evidence=tuple(sentence_pks(corpus, suggestion.evidence).values()),
        opened=_documents_of(readable, [split_evidence_key(key)[0] for key in suggestion.evidence]),
        reference_answer=suggestion.text,
        prefilled=True,
    )


def with_opened(state: AnnotateState, document: str) -> AnnotateState:
    """The state with one more document opened (a digit string from the page; anything else is ignored)."""
    if not document.isdigit():
        return state
    return replace(state, opened=tuple(dict.fromkeys([*state.opened, int(document)])))


def annotate_page(*, assignment: Assignment, state: AnnotateState, readable, suggestion) -> dict:
    """Everything the annotate page shows besides the form's own values."""
    corpus = assignment.task.benchmark.corpus
    opened = list(readable.filter(pk__in=state.opened).order_by("external_id"))
    opened_pks = {d.pk for d in opened}
    # Sentences of documents not opened yet; those of opened ones are clicked in their document.
    found = [
        s
        for s in (annotation_selectors.evidence_search(corpus, state.query) if state.query else [])
        if s.document_id not in opened_pks
    ]
    by_document: dict[int, list] = {}
    sentences = Sentence.objects.filter(document__in=opened).order_by("document__external_id", "ordinal")
    for row in sentences.only("pk", "label", "text", "document_id"):
        by_document.setdefault(row.document_id, []).append(row)
    return {
        "assignment": assignment,
        "task": assignment.task,
        "state": state,
        "selected": set(state.evidence),
        "opened": [{"document": d, "sentences": by_document.get(d.pk, [])} for d in opened],
        "choices": readable.exclude(pk__in=opened_pks)
        .only("pk", "external_id", "title", "corpus")
        .order_by("external_id")[:DOCUMENT_CHOICES],
        "labels": Annotation.Answerability.choices,
        "rubric_rows": [(score, state.rubric_scale.get(score, "")) for score in RUBRIC_SCORES],
        "found": found,
        "suggestion": suggestion,
        "suggested": set(sentence_pks(corpus, suggestion.evidence).values()) if suggestion else set(),
    }
