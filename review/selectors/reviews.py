"""Reads of reviews: an answer's history, its current content, and the review queue.

Team scoping lives here: every answer a user reaches goes through
``answers_for_user``, which keeps only answers on corpora of the user's teams.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import F, IntegerField, OuterRef, Prefetch, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.http import Http404

from documents.selectors import corpora_for_user
from qa.models import Answer, AnswerSentence, Citation
from qa.selectors import by_origin
from review.evaluation import evidence_key
from review.evaluation.metrics import unique_in_order
from review.models import Review, ReviewCitation, ReviewSentence

QUEUE_STATUSES = ("unreviewed", "flagged", "accepted", "corrected", "reviewed")


@dataclass(frozen=True)
class CitedSentence:
    sentence_id: int | None
    document_external_id: str
    document_title: str
    label: str
    text: str

    @property
    def key(self) -> str:
        return evidence_key(self.document_external_id, self.label)


@dataclass(frozen=True)
class ContentSentence:
    text: str
    citations: tuple[CitedSentence, ...]


@dataclass(frozen=True)
class AnswerContent:
    """What an answer says now: its latest correction, or the answer as generated."""

    text: str
    sentences: tuple[ContentSentence, ...]
    refused: bool
    correction_version: int | None  # None: nobody corrected the answer

    @property
    def citations(self) -> tuple[CitedSentence, ...]:
        seen: dict[str, CitedSentence] = {}
        for sentence in self.sentences:
            for cited in sentence.citations:
                seen.setdefault(cited.key, cited)
        return tuple(seen.values())

    @property
    def evidence_keys(self) -> tuple[str, ...]:
        return tuple(cited.key for cited in self.citations)

    @property
    def evidence_texts(self) -> dict[str, str]:
        return {cited.key: cited.text for cited in self.citations}

    @property
    def documents(self) -> tuple[str, ...]:
        return unique_in_order(cited.document_external_id for cited in self.citations)


def answers_for_user(user) -> QuerySet[Answer]:
    return Answer.objects.filter(question__corpus__in=corpora_for_user(user)).select_related(
        "question", "question__corpus", "question__user"
    )


def answer_get_for_user(user, pk) -> Answer:
    """The answer, or Http404 when it does not exist or lies on another team's corpus."""
    answer = answers_for_user(user).filter(pk=pk).first()
    if answer is None:
        raise Http404("No such answer.")
    return answer


def _with_content(qs: QuerySet[Review]) -> QuerySet[Review]:
    return qs.select_related("reviewer").prefetch_related(
        Prefetch(
            "sentences",
            queryset=ReviewSentence.objects.prefetch_related(
                Prefetch("citations", queryset=ReviewCitation.objects.order_by("ordinal"))
            ).order_by("ordinal"),
        )
    )


def review_history(answer: Answer) -> QuerySet[Review]:
    """Every decision on the answer, oldest first."""
    return _with_content(Review.objects.filter(answer=answer)).order_by("version")


def reviews_after(answer: Answer, version: int) -> list[Review]:
    """The decisions made after ``version``, oldest first (what a stale reviewer missed)."""
    return list(review_history(answer).filter(version__gt=version))


def answer_version(answer: Answer) -> int:
    """The number of decisions on the answer: what a new decision's base_version must be."""
    latest = (
        Review.objects.filter(answer=answer).order_by("-version").values_list("version", flat=True).first()
    )
    return latest or 0


def latest_review(answer: Answer) -> Review | None:
    return Review.objects.filter(answer=answer).select_related("reviewer").order_by("-version").first()


def answer_current_content(answer: Answer) -> AnswerContent:
    correction = (
        _with_content(Review.objects.filter(answer=answer, action=Review.Action.CORRECT))
        .order_by("-version")
        .first()
    )
    if correction is not None:
        return review_content(correction, answer=answer)
    sentences = AnswerSentence.objects.filter(answer=answer).prefetch_related(
        Prefetch("citations", queryset=Citation.objects.order_by("ordinal"))
    )
    return AnswerContent(
        text=answer.text,
        sentences=tuple(
            ContentSentence(
                text=sentence.text,
                citations=tuple(
                    CitedSentence(c.sentence_id, c.document_external_id, c.document_title, c.label, c.text)
                    for c in sentence.citations.all()
                ),
            )
            for sentence in sentences.order_by("ordinal")
        ),
        refused=answer.refused,
        correction_version=None,
    )


def review_content(review: Review, *, answer: Answer) -> AnswerContent:
    """The answer as a correction left it (prefetched with review_history)."""
    sentences = tuple(
        ContentSentence(
            text=sentence.text,
            citations=tuple(
                CitedSentence(c.sentence_id, c.document_external_id, c.document_title, c.label, c.text)
                for c in sentence.citations.all()
            ),
        )
        for sentence in review.sentences.all()
    )
    refused = review.refused if review.refused is not None else answer.refused
    return AnswerContent(review.text, sentences, refused, review.version)


def review_queue(
    user,
    *,
    status: str | None = None,
    corpus=None,
    preset: str | None = None,
    reviewer=None,
    least_confident_first: bool = False,
    origin: str = "asked",
    assigned_to=None,
):
    """Answers to review, oldest first, with their latest decision annotated.

    ``status``: unreviewed (no decision), flagged, accepted or corrected (by the
    latest decision), reviewed (any decision). ``corpus`` is a corpus id or
    name; ``reviewer`` a user id or username and matches whoever made the
    latest decision. ``least_confident_first`` orders by the answer's confidence,
    lowest first, so analysts review where GroundedQA is least sure.
    ``origin``: answers to questions people asked (the
    default), to an evaluation run's questions, or all. ``assigned_to``: a user
    id or username; only the answers the split review queue handed to them.
    """
    latest = Review.objects.filter(answer=OuterRef("pk")).order_by("-version")
    qs = answers_for_user(user).annotate(
        review_count=Coalesce(Subquery(latest.values("version")[:1]), Value(0), output_field=IntegerField()),
        latest_action=Subquery(latest.values("action")[:1]),
        latest_reason=Subquery(latest.values("reason")[:1]),
        latest_reviewer_id=Subquery(latest.values("reviewer_id")[:1]),
        latest_reviewer=Subquery(latest.values("reviewer__username")[:1]),
        latest_reviewed_at=Subquery(latest.values("created_at")[:1]),
        assigned_reviewer=F("review_assignment__reviewer__username"),
    )
    qs = by_origin(qs, origin or "asked", prefix="question__")
    if status == "unreviewed":
        qs = qs.filter(latest_action__isnull=True)
    elif status == "reviewed":
        qs = qs.filter(latest_action__isnull=False)
    elif status in ("flagged", "accepted", "corrected"):
        action = {"flagged": "flag", "accepted": "accept", "corrected": "correct"}[status]
        qs = qs.filter(latest_action=action)
    elif status:
        raise ValueError(f"unknown queue status {status!r}")
    if corpus not in (None, ""):
        key = str(corpus)
        qs = (
            qs.filter(question__corpus__pk=int(key))
            if key.isdigit()
            else qs.filter(question__corpus__name=key)
        )
    if preset:
        qs = qs.filter(question__preset=preset)
    if reviewer not in (None, ""):
        key = str(reviewer)
        qs = qs.filter(latest_reviewer_id=int(key)) if key.isdigit() else qs.filter(latest_reviewer=key)
    if assigned_to not in (None, ""):
        key = str(assigned_to)
        qs = (
            qs.filter(review_assignment__reviewer_id=int(key))
            if key.isdigit()
            else qs.filter(review_assignment__reviewer__username=key)
        )
    if least_confident_first:
        # Answers without a confidence (older ones, presets without the model) come last.
        return qs.order_by(F("confidence").asc(nulls_last=True), "created_at", "pk")
    return qs.order_by("created_at", "pk")
