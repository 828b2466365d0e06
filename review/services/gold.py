"""Gold cases: from reviewed answers, from annotators, and revised by later corrections.

Every change to a case writes a GoldCaseRevision with the full new state and
bumps its benchmark's version under a row lock on the benchmark, so versions
and case ids handed out concurrently never collide.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction
from django.db.models import Q

from documents.models import Document, Sentence
from qa.models import Answer
from review import selectors
from review.benchmark_files import rubric_problem
from review.errors import GoldCaseInvalid
from review.evaluation import evidence_key
from review.models import Benchmark, GoldCase, GoldCaseRevision, Review
from review.selectors import AnswerContent

SNAPSHOT_FIELDS = (
    "question",
    "split",
    "gold_documents",
    "gold_evidence",
    "evidence_texts",
    "reference_answer",
    "answerable",
    "rubric",
)


def gold_snapshot(case: GoldCase) -> dict:
    return {field: getattr(case, field) for field in SNAPSHOT_FIELDS}


def validate_split(split: str) -> None:
    if split not in GoldCase.Split.values:
        raise GoldCaseInvalid(f"Unknown split {split!r}; use one of {', '.join(GoldCase.Split.values)}.")


def validate_rubric(rubric) -> None:
    """None, or a JSON object whose scale (``rubric["scale"]`` or the object itself) scores 1-5."""
    problem = rubric_problem(rubric)
    if problem:
        raise GoldCaseInvalid(problem[0].upper() + problem[1:] + ".")


def lock_benchmark(benchmark: Benchmark) -> Benchmark:
    """The benchmark row, locked until the transaction ends (call inside one)."""
    return Benchmark.objects.select_for_update().get(pk=benchmark.pk)


def bump_version(benchmark: Benchmark) -> int:
    benchmark.version += 1
    benchmark.save(update_fields=["version", "updated_at"])
    return benchmark.version


def record_revision(case: GoldCase, *, benchmark_version: int, user, note: str, source_review=None) -> None:
    GoldCaseRevision.objects.create(
        gold_case=case,
        revision=case.revision,
        benchmark_version=benchmark_version,
        snapshot=gold_snapshot(case),
        note=note[:300],
        source_review=source_review,
        changed_by=user,
    )


def apply_changes(
    case: GoldCase, changes: dict, *, benchmark_version: int, user, note: str, source_review=None
) -> bool:
    """Set the changed fields, bump the case's revision and record it; False when nothing changed."""
    changed = {field: value for field, value in changes.items() if getattr(case, field) != value}
    if not changed:
        return False
    for field, value in changed.items():
        setattr(case, field, value)
    case.revision += 1
    case.save()
    record_revision(
        case, benchmark_version=benchmark_version, user=user, note=note, source_review=source_review
    )
    return True


def _create(benchmark: Benchmark, *, version: int, user, note: str, **fields) -> GoldCase:
    case = GoldCase.objects.create(benchmark=benchmark, corpus=benchmark.corpus, created_by=user, **fields)
    record_revision(case, benchmark_version=version, user=user, note=note)
    return case


def gold_case_from_answer(*, answer: Answer, benchmark: Benchmark, split: str, user) -> GoldCase:
    """The reviewed answer, as its latest decision left it, as a gold case (one per answer and benchmark)."""
    validate_split(split)
    latest = selectors.latest_review(answer)
    if latest is None or latest.action not in (Review.Action.ACCEPT, Review.Action.CORRECT):
        state = "unreviewed" if latest is None else "flagged"
        raise GoldCaseInvalid(
            f"Only an accepted or corrected answer can become a gold case; this one is {state}."
        )
    if answer.question.corpus_id != benchmark.corpus_id:
        raise GoldCaseInvalid(
            f"Benchmark {benchmark.name!r} is on corpus {benchmark.corpus.name!r}, "
            f"the answer on {answer.question.corpus.name!r}."
        )
    content = selectors.answer_current_content(answer)
    fields = {
        "question": answer.question.text,
        "split": split,
        "gold_documents": list(content.documents),
        "gold_evidence": list(content.evidence_keys),
        "evidence_texts": content.evidence_texts,
        "reference_answer": content.text,
        "answerable": not content.refused,
        "rubric": None,
    }
    note = f"from answer {answer.pk}, review v{latest.version} ({latest.action})"
    with transaction.atomic():
        locked = lock_benchmark(benchmark)
        existing = GoldCase.objects.select_for_update().filter(benchmark=locked, source_answer=answer).first()
        if existing is not None:
            if any(getattr(existing, field) != value for field, value in fields.items()):
                version = bump_version(locked)
                apply_changes(
                    existing, fields, benchmark_version=version, user=user, note=note, source_review=latest
                )
            return existing
        version = bump_version(locked)
        return _create(
            locked,
            version=version,
            user=user,
            note=note,
            case_id=f"answer-{answer.pk}",
            provenance=GoldCase.Provenance.REVIEW,
            source_answer=answer,
            metadata={"question_id": answer.question_id, "preset": answer.question.preset},
            **fields,
        )


def gold_case_annotate(
    *,
    benchmark: Benchmark,
    document: Document,
    question: str,
    evidence_sentence_ids: Sequence[int],
    reference_answer: str,
    answerable: bool,
    split: str,
    user,
    rubric: dict | None = None,
) -> GoldCase:
    """A benchmark question written by an annotator, with evidence sentences of one document."""
    validate_split(split)
    validate_rubric(rubric)
    question = (question or "").strip()
    if not question:
        raise GoldCaseInvalid("The question is empty.")
    if document.corpus_id != benchmark.corpus_id:
        raise GoldCaseInvalid(f"Document {document.external_id!r} is not in the benchmark's corpus.")
    wanted = list(dict.fromkeys(evidence_sentence_ids))
    sentences = list(Sentence.objects.filter(document=document, pk__in=wanted).order_by("ordinal"))
    missing = sorted(set(wanted) - {s.pk for s in sentences})
    if missing:
        raise GoldCaseInvalid(
            f"Sentence id(s) {', '.join(map(str, missing))} are not sentences of {document.external_id!r}."
        )
    if answerable and not sentences:
        raise GoldCaseInvalid("An answerable question needs at least one evidence sentence.")
    keys = [evidence_key(document.external_id, s.label) for s in sentences]
    with transaction.atomic():
        locked = lock_benchmark(benchmark)
        number = (
            GoldCase.objects.filter(benchmark=locked, provenance=GoldCase.Provenance.ANNOTATED).count() + 1
        )
        while GoldCase.objects.filter(benchmark=locked, split=split, case_id=f"n{number:03d}").exists():
            number += 1
        version = bump_version(locked)
        return _create(
            locked,
            version=version,
            user=user,
            note="annotated",
            case_id=f"n{number:03d}",
            split=split,
            question=question,
            gold_documents=[document.external_id],
            gold_evidence=keys,
            evidence_texts={key: s.text for key, s in zip(keys, sentences, strict=True)},
            reference_answer=(reference_answer or "").strip(),
            answerable=answerable,
            rubric=rubric,
            provenance=GoldCase.Provenance.ANNOTATED,
        )


def gold_cases_follow_correction(
    *, review: Review, before: AnswerContent, after: AnswerContent
) -> list[GoldCase]:
    """Carry a correction into the gold cases built on the answer (call inside the review's transaction).

    A case made from this answer takes the corrected text, citations and
    refusal; a case whose evaluation produced this answer takes the corrected
    citations as its gold evidence when they changed (its reference answer was
    written by someone else and stays).
    """
    answer = review.answer
    evidence_changed = set(before.evidence_keys) != set(after.evidence_keys)
    cases = GoldCase.objects.filter(Q(source_answer=answer) | Q(results__answer=answer)).distinct()
    revised = []
    for case in cases.select_related("benchmark"):
        changes: dict = {}
        if evidence_changed:
            changes["gold_evidence"] = list(after.evidence_keys)
            changes["evidence_texts"] = after.evidence_texts
            if after.documents:
                changes["gold_documents"] = list(after.documents)
        if case.source_answer_id == answer.pk:
            changes["reference_answer"] = after.text
            changes["answerable"] = not after.refused
        benchmark = lock_benchmark(case.benchmark)
        case = GoldCase.objects.select_for_update().get(pk=case.pk)
        if not any(getattr(case, field) != value for field, value in changes.items()):
            continue
        version = bump_version(benchmark)
        note = f"review v{review.version} of answer {answer.pk} by {review.reviewer.get_username()}"
        apply_changes(
            case, changes, benchmark_version=version, user=review.reviewer, note=note, source_review=review
        )
        revised.append(case)
    return revised
