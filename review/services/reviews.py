"""Review decisions: accept, flag with a reason, or correct an answer.

Decisions are append-only and numbered per answer. A reviewer decides on the
state they saw (``base_version``: the number of decisions then); if someone
decided in the meantime the new decision is refused with ReviewConflict, which
carries the newer decisions, instead of silently burying them. The check runs
under a row lock on the answer, so two reviewers deciding at the same moment
are serialised and the second one sees the first's decision; the unique
(answer, version) constraint would catch any path that skipped the lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction

from audit.services import audit_record
from documents.models import Sentence
from qa.models import Answer
from review import selectors
from review.errors import AnswerGone, ReviewConflict, ReviewInvalid
from review.models import Review, ReviewCitation, ReviewSentence
from review.selectors import AnswerContent, CitedSentence, ContentSentence
from review.services.gold import gold_cases_follow_correction


@dataclass(frozen=True)
class CorrectionSentence:
    """A sentence of a corrected answer and the Sentence ids it cites."""

    text: str
    citations: tuple[int, ...] = ()


def answer_accept(*, answer: Answer, reviewer, base_version: int, comment: str = "") -> Review:
    return review_decide(
        answer=answer,
        reviewer=reviewer,
        action=Review.Action.ACCEPT,
        base_version=base_version,
        comment=comment,
    )


def answer_flag(*, answer: Answer, reviewer, base_version: int, reason: str, comment: str = "") -> Review:
    return review_decide(
        answer=answer,
        reviewer=reviewer,
        action=Review.Action.FLAG,
        base_version=base_version,
        reason=reason,
        comment=comment,
    )


def answer_correct(
    *,
    answer: Answer,
    reviewer,
    base_version: int,
    text: str | None = None,
    sentences: Sequence[CorrectionSentence] | None = None,
    reason: str = "",
    comment: str = "",
    refused: bool | None = None,
) -> Review:
    return review_decide(
        answer=answer,
        reviewer=reviewer,
        action=Review.Action.CORRECT,
        base_version=base_version,
        text=text,
        sentences=sentences,
        reason=reason,
        comment=comment,
        refused=refused,
    )


def review_decide(
    *,
    answer: Answer,
    reviewer,
    action: str,
    base_version: int,
    reason: str = "",
    comment: str = "",
    text: str | None = None,
    sentences: Sequence[CorrectionSentence] | None = None,
    refused: bool | None = None,
) -> Review:
    """Record one decision made on ``base_version``; ReviewConflict if that is stale."""
    reason, comment = (reason or "").strip(), (comment or "").strip()
    _validate(
        action=action,
        base_version=base_version,
        reason=reason,
        comment=comment,
        text=text,
        sentences=sentences,
    )
    # Resolved before the lock: a bad sentence id is the client's error, not a conflict.
    cited = _resolve_citations(answer, sentences) if sentences is not None else None
    with transaction.atomic():
        if not Answer.objects.select_for_update().filter(pk=answer.pk).exists():
            raise AnswerGone("The answer no longer exists.")
        current = selectors.answer_version(answer)
        if base_version < current:
            raise ReviewConflict(
                base_version=base_version,
                current_version=current,
                newer=selectors.reviews_after(answer, base_version),
            )
        if base_version > current:
            raise ReviewInvalid(
                f"base_version {base_version} is ahead of the answer, which has {current} decision(s)."
            )
        before = selectors.answer_current_content(answer) if action == Review.Action.CORRECT else None
        review = Review.objects.create(
            answer=answer,
            version=current + 1,
            action=action,
            reason=reason,
            comment=comment,
            reviewer=reviewer,
        )
        if action == Review.Action.CORRECT:
            content = _correction_content(before, text=text, sentences=sentences, cited=cited)
            if refused is None:
                refused = answer.refused and not content.citations
            _store_correction(review, content, refused=refused)
            after = selectors.answer_current_content(answer)
            if set(after.evidence_keys) != set(before.evidence_keys) or after.text != before.text:
                gold_cases_follow_correction(review=review, before=before, after=after)
        _audit_review(review, answer)
    return review


def _audit_review(review: Review, answer: Answer) -> None:
    question = answer.question
    audit_record(
        actor=review.reviewer,
        action=f"answer.{review.action}",
        target_type="answer",
        target_id=answer.pk,
        target_label=f"answer to “{question.text[:200]}” (corpus {question.corpus.name})",
        team_id=question.corpus.team_id,
        detail={"version": review.version, "reason": review.reason, "comment": review.comment},
    )


def _validate(*, action, base_version, reason, comment, text, sentences) -> None:
    if action not in Review.Action.values:
        raise ReviewInvalid(f"Unknown action {action!r}; use one of {', '.join(Review.Action.values)}.")
    if not isinstance(base_version, int) or isinstance(base_version, bool) or base_version < 0:
        raise ReviewInvalid(
            "base_version must be the number of decisions you saw (0 for an unreviewed answer)."
        )
    if reason and reason not in Review.Reason.values:
        raise ReviewInvalid(f"Unknown reason {reason!r}; use one of {', '.join(Review.Reason.values)}.")
    if action == Review.Action.FLAG and not reason:
        raise ReviewInvalid(f"A flag needs a reason: one of {', '.join(Review.Reason.values)}.")
    if action == Review.Action.ACCEPT and reason:
        raise ReviewInvalid("An accepted answer takes no reason; flag it instead.")
    if reason == Review.Reason.OTHER and not comment:
        raise ReviewInvalid('The reason "other" needs a comment saying what is wrong.')
    if action == Review.Action.CORRECT:
        if text is None and sentences is None:
            raise ReviewInvalid("A correction needs the corrected text or sentences.")
        if text is not None and not text.strip() and not sentences:
            raise ReviewInvalid("The corrected answer text is empty.")
        for number, sentence in enumerate(sentences or (), 1):
            if not sentence.text.strip():
                raise ReviewInvalid(f"Corrected sentence {number} has no text.")
    elif text is not None or sentences is not None:
        raise ReviewInvalid("Text and sentences go with a correction only.")


def _resolve_citations(answer: Answer, sentences: Sequence[CorrectionSentence]) -> dict[int, CitedSentence]:
    """Copies of the cited sentences; every id must be a sentence of the answer's corpus."""
    wanted = {sentence_id for sentence in sentences for sentence_id in sentence.citations}
    rows = Sentence.objects.filter(
        pk__in=wanted, document__corpus_id=answer.question.corpus_id
    ).select_related("document")
    found = {
        row.pk: CitedSentence(row.pk, row.document.external_id, row.document.title, row.label, row.text)
        for row in rows
    }
    missing = sorted(wanted - set(found))
    if missing:
        raise ReviewInvalid(
            f"Sentence id(s) {', '.join(map(str, missing))} are not sentences of corpus "
            f"{answer.question.corpus.name!r}."
        )
    return found


def _correction_content(
    before: AnswerContent,
    *,
    text: str | None,
    sentences: Sequence[CorrectionSentence] | None,
    cited: dict[int, CitedSentence] | None,
) -> AnswerContent:
    """The corrected answer; what the correction leaves out stays as it was."""
    if sentences is None:
        kept = before.sentences
    else:
        kept = tuple(
            ContentSentence(
                text=sentence.text.strip(),
                citations=tuple(cited[i] for i in dict.fromkeys(sentence.citations)),
            )
            for sentence in sentences
        )
    if text is None or not text.strip():
        text = " ".join(sentence.text for sentence in kept) if sentences is not None else before.text
    return AnswerContent(text=text.strip(), sentences=kept, refused=before.refused, correction_version=None)


def _store_correction(review: Review, content: AnswerContent, *, refused: bool) -> None:
    review.text = content.text
    review.refused = refused
    review.save(update_fields=["text", "refused"])
    for ordinal, sentence in enumerate(content.sentences):
        row = ReviewSentence.objects.create(review=review, ordinal=ordinal, text=sentence.text)
        ReviewCitation.objects.bulk_create(
            ReviewCitation(
                review_sentence=row,
                ordinal=index,
                sentence_id=cited.sentence_id,
                document_external_id=cited.document_external_id,
                document_title=cited.document_title[:500],
                label=cited.label,
                text=cited.text,
            )
            for index, cited in enumerate(sentence.citations)
        )
