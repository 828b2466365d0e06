"""Benchmarks: create one, add one gold case (creating the benchmark if needed),
or import a validated ImportPlan in one transaction.

The files are read and validated first (review.benchmark_files), so an import
either writes everything or nothing. Importing again into the same benchmark
updates changed cases (with a revision), adds new ones and leaves the rest;
the benchmark's version goes up once per import that changed anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from documents.models import Corpus, Document, Team
from documents.services import Submitted, corpus_create, document_stage
from qa.models import Answer
from review import selectors
from review.benchmark_files import CaseSpec, ImportPlan
from review.errors import BenchmarkCorpusMismatch, BenchmarkExists, BenchmarkInvalid, BenchmarkNotFound
from review.models import Benchmark, GoldCase
from review.services.gold import (
    apply_changes,
    bump_version,
    gold_case_annotate,
    gold_case_from_answer,
    lock_benchmark,
    record_revision,
)


@dataclass(frozen=True)
class ImportResult:
    benchmark: Benchmark
    corpus: Corpus
    created: int
    revised: int
    unchanged: int
    staged: list[Submitted] = field(default_factory=list)

    @property
    def documents_to_embed(self) -> list[int]:
        """New or changed documents, and any an earlier import left waiting for a worker."""
        return [
            submitted.document.pk
            for submitted in self.staged
            if submitted.changed or submitted.document.status != Document.Status.READY
        ]


def benchmark_create(
    *,
    name: str,
    corpus: Corpus,
    user=None,
    description: str = "",
    source_format: str = "",
    source_path: str = "",
) -> Benchmark:
    name = (name or "").strip()
    if not name:
        raise BenchmarkInvalid("A benchmark needs a name.")
    if Benchmark.objects.filter(name=name).exists():
        raise BenchmarkExists(f"A benchmark named {name!r} already exists.")
    return Benchmark.objects.create(
        name=name,
        corpus=corpus,
        description=description,
        source_format=source_format,
        source_path=source_path[:1000],
        created_by=user,
    )


@dataclass(frozen=True)
class Annotation:
    """A benchmark question an annotator wrote on one document, with its evidence sentences."""

    document: Document
    question: str
    evidence_sentence_ids: tuple[int, ...]
    reference_answer: str
    answerable: bool
    rubric: dict | None = None


def gold_case_add(
    *,
    benchmark_name: str,
    corpus,
    split: str,
    user,
    new: bool | None = None,
    answer: Answer | None = None,
    annotation: Annotation | None = None,
) -> GoldCase:
    """Add a gold case to the named benchmark of the user's teams, creating it on ``corpus`` if needed.

    ``new``: True creates the benchmark (refused if the name is taken), False
    needs it to exist, None creates it when missing. The case is a reviewed
    ``answer`` or an annotator's ``annotation``. One transaction: a refused
    case leaves no new benchmark behind.
    """
    if (answer is None) == (annotation is None):
        raise ValueError("gold_case_add takes an answer or an annotation, not both or neither")
    with transaction.atomic():
        benchmark = None if new else selectors.benchmarks_for_user(user).filter(name=benchmark_name).first()
        if benchmark is None and new is False:
            raise BenchmarkNotFound(f"No benchmark named {benchmark_name!r} on your teams' corpora.")
        if benchmark is None:
            benchmark = benchmark_create(name=benchmark_name, corpus=corpus, user=user)
        if answer is not None:
            return gold_case_from_answer(answer=answer, benchmark=benchmark, split=split, user=user)
        return gold_case_annotate(
            benchmark=benchmark,
            document=annotation.document,
            question=annotation.question,
            evidence_sentence_ids=annotation.evidence_sentence_ids,
            reference_answer=annotation.reference_answer,
            answerable=annotation.answerable,
            split=split,
            user=user,
            rubric=annotation.rubric,
        )


def _case_fields(spec: CaseSpec) -> dict:
    return {
        "question": spec.question,
        "split": spec.split,
        "gold_documents": list(spec.gold_documents),
        "gold_evidence": list(spec.gold_evidence),
        "evidence_texts": dict(spec.evidence_texts),
        "reference_answer": spec.reference_answer,
        "answerable": spec.answerable,
        "rubric": spec.rubric,
    }


def _corpus(name: str, team_name: str) -> Corpus:
    corpus = Corpus.objects.filter(name=name).first()
    if corpus is None:
        team, _ = Team.objects.get_or_create(name=team_name)
        corpus = corpus_create(name=name, team=team)
    return corpus


def benchmark_import(
    *,
    name: str,
    plan: ImportPlan,
    corpus_name: str,
    source_format: str,
    source_path: str = "",
    team_name: str = "Analysts",
    user=None,
    enqueue: bool = True,
) -> ImportResult:
    """Stage the plan's documents into the corpus (created if missing) and write its cases.

    With ``enqueue`` the workers embed the staged documents after commit;
    without it the caller embeds them (``ImportResult.documents_to_embed``).
    """
    with transaction.atomic():
        corpus = _corpus(corpus_name, team_name)
        benchmark = lock_benchmark(_import_target(name, corpus, user, source_format, source_path))
        filename = Path(source_path).name if source_path else ""
        staged = [
            document_stage(
                corpus=corpus,
                parsed=document,
                filename=filename,
                uploaded_by=user,
                enqueue=enqueue,
                bulk=True,
            )
            for document in plan.documents
        ]
        new, changed = _write_cases(
            benchmark, corpus, plan, user=user, note=f"imported from {filename or source_format}"
        )
        if source_path and benchmark.source_path != str(source_path)[:1000]:
            benchmark.source_format, benchmark.source_path = source_format, str(source_path)[:1000]
            benchmark.save(update_fields=["source_format", "source_path", "updated_at"])
    return ImportResult(
        benchmark=benchmark,
        corpus=corpus,
        created=len(new),
        revised=len(changed),
        unchanged=len(plan.cases) - len(new) - len(changed),
        staged=staged,
    )


def _import_target(name: str, corpus: Corpus, user, source_format: str, source_path: str) -> Benchmark:
    """The benchmark an import writes to: created on ``corpus``, or the existing one if it is on it."""
    benchmark = Benchmark.objects.filter(name=name).first()
    if benchmark is None:
        return benchmark_create(
            name=name, corpus=corpus, user=user, source_format=source_format, source_path=str(source_path)
        )
    if benchmark.corpus_id != corpus.pk:
        raise BenchmarkCorpusMismatch(
            f"Benchmark {name!r} is on corpus {benchmark.corpus.name!r}, not {corpus.name!r}."
        )
    return benchmark


def _write_cases(
    benchmark: Benchmark, corpus: Corpus, plan: ImportPlan, *, user, note: str
) -> tuple[list, list]:
    """Create the plan's new cases and revise the changed ones under one new benchmark version.

    Returns (new specs, (case, spec) pairs changed); an import that changes nothing bumps nothing.
    """
    existing = {
        (case.split, case.case_id): case
        for case in GoldCase.objects.select_for_update().filter(benchmark=benchmark)
    }
    new = [spec for spec in plan.cases if (spec.split, spec.case_id) not in existing]
    changed = [
        (existing[spec.split, spec.case_id], spec)
        for spec in plan.cases
        if (spec.split, spec.case_id) in existing
        and any(getattr(existing[spec.split, spec.case_id], k) != v for k, v in _case_fields(spec).items())
    ]
    if not (new or changed):
        return new, changed
    version = bump_version(benchmark)
    for spec in new:
        case = GoldCase.objects.create(
            benchmark=benchmark,
            corpus=corpus,
            case_id=spec.case_id,
            provenance=GoldCase.Provenance.IMPORTED,
            metadata=spec.metadata,
            created_by=user,
            **_case_fields(spec),
        )
        record_revision(case, benchmark_version=version, user=user, note=note)
    for case, spec in changed:
        case.metadata = spec.metadata
        apply_changes(case, _case_fields(spec), benchmark_version=version, user=user, note=note)
    return new, changed
