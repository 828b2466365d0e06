"""Annotation tasks over the questions analysts asked, not only over a benchmark's imported questions.

The asked questions (those of a corpus, chosen by their answers' review state) are copied into a
benchmark as gold cases with provenance "asked", each linked to its answer (``source_answer``, so
a task with pre-fill starts from it); the task is then an ordinary task over those cases, and what
the annotators agree on or a reviewer adjudicates is written into them, as for any task.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction

from review import selectors as review_selectors
from review.errors import AnnotationInvalid
from review.models import AnnotationTask, Benchmark, GoldCase, Review
from review.services.annotation import annotation_task_create
from review.services.benchmarks import benchmark_create
from review.services.gold import bump_version, lock_benchmark, record_revision

# Which asked questions a task takes, by their answer's latest review decision.
ASKED_QUESTIONS = {
    "reviewed": "reviewed",
    "flagged": "flagged",
    "unreviewed": "unreviewed",
    "all": None,
}
# A task is read by people: more items than this would never be finished.
MAX_ASKED_ITEMS = 500


def _case_fields(answer) -> dict:
    """An accepted or corrected answer's content is the case's starting gold; any other starts empty."""
    latest = review_selectors.latest_review(answer)
    decided = latest is not None and latest.action in (Review.Action.ACCEPT, Review.Action.CORRECT)
    fields = {
        "question": answer.question.text,
        "split": GoldCase.Split.TEST,
        "gold_documents": [],
        "gold_evidence": [],
        "evidence_texts": {},
        "reference_answer": "",
        "answerable": True,
    }
    if decided:
        content = review_selectors.answer_current_content(answer)
        fields.update(
            gold_documents=list(content.documents),
            gold_evidence=list(content.evidence_keys),
            evidence_texts=content.evidence_texts,
            reference_answer=content.text,
            answerable=not content.refused,
        )
    fields["metadata"] = {
        "question_id": answer.question_id,
        "preset": answer.question.preset,
        "review_state": "unreviewed" if latest is None else latest.action,
    }
    return fields


def asked_questions_to_benchmark(
    *, corpus, questions: str, benchmark_name: str, user, limit: int | None = None
) -> tuple[Benchmark, list[str]]:
    """The asked questions chosen, as cases of the named benchmark (made if new); their case ids.

    Asking again reuses the case an answer already has in the benchmark, so two tasks over the same
    questions share their gold. The caller checked the user's role on the corpus's team.
    """
    if questions not in ASKED_QUESTIONS:
        raise AnnotationInvalid(f"Choose which asked questions: {', '.join(ASKED_QUESTIONS)}.")
    answers = list(
        review_selectors.review_queue(
            user, status=ASKED_QUESTIONS[questions], corpus=corpus.pk, origin="asked"
        ).defer("retrieved_documents", "question__trace", "question__config")[
            : min(limit or MAX_ASKED_ITEMS, MAX_ASKED_ITEMS)
        ]
    )
    if not answers:
        raise AnnotationInvalid(f"No question asked on corpus {corpus.name!r} is {questions}.")
    with transaction.atomic():
        benchmark = Benchmark.objects.filter(name=(benchmark_name or "").strip()).first()
        if benchmark is None:
            benchmark = benchmark_create(
                name=benchmark_name,
                corpus=corpus,
                user=user,
                description=f"Questions analysts asked on {corpus.name}, annotated in tasks.",
            )
        elif benchmark.corpus_id != corpus.pk:
            raise AnnotationInvalid(
                f"Benchmark {benchmark.name!r} is on corpus {benchmark.corpus.name!r}, not {corpus.name!r}."
            )
        locked = lock_benchmark(benchmark)
        have = dict(
            GoldCase.objects.filter(benchmark=locked, source_answer__in=answers).values_list(
                "source_answer_id", "case_id"
            )
        )
        new = [answer for answer in answers if answer.pk not in have]
        if new:
            version = bump_version(locked)
            for answer in new:
                case = GoldCase.objects.create(
                    benchmark=locked,
                    corpus=locked.corpus,
                    created_by=user,
                    case_id=f"answer-{answer.pk}",
                    provenance=GoldCase.Provenance.ASKED,
                    source_answer=answer,
                    **_case_fields(answer),
                )
                record_revision(
                    case, benchmark_version=version, user=user, note=f"asked question {answer.question_id}"
                )
                have[answer.pk] = case.case_id
    return locked, [have[answer.pk] for answer in answers]


def annotation_task_over_asked(
    *,
    corpus,
    questions: str,
    benchmark_name: str,
    name: str,
    annotators: Sequence,
    overlap: int = 2,
    guidelines: str = "",
    prefill: bool = False,
    limit: int | None = None,
    user,
) -> AnnotationTask:
    """A task whose items are the team's asked questions; nothing is written if the task is refused."""
    with transaction.atomic():
        benchmark, case_ids = asked_questions_to_benchmark(
            corpus=corpus, questions=questions, benchmark_name=benchmark_name, user=user, limit=limit
        )
        return annotation_task_create(
            benchmark=benchmark,
            name=name,
            annotators=annotators,
            overlap=overlap,
            guidelines=guidelines,
            case_ids=case_ids,
            prefill=prefill,
            user=user,
        )
