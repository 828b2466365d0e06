"""Evaluation runs: ask every gold case through a preset, store what came back, score it.

Answers come from ``qa.services.answer_now_with_run`` (in-process, persisted as
usual Question/Answer rows marked ``is_evaluation``: the review queue and the
histories leave them out unless a filter asks for them, and an analyst who
reviews one sends a correction back into the gold case). The run's user asks
them; a run always has one. Each case is scored from the pipeline run itself
(``review.evaluation.predictions``); the prediction is stored per case so a
resumed run can score the cases answered before. The numbers come from
``review.evaluation.evaluate``; this module only gathers inputs and stores results.

A run is claimed atomically (queued -> running) so two workers never run it
twice; each case's result is stored under (run, gold case) as soon as it is
answered, so a run picked up again after a crash resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from groundedqa_site import jobs
from qa import presets
from qa.models import Answer, Question
from qa.pipeline.flow.run import PipelineRun, load_run
from qa.services import answer_now_with_run
from review import selectors
from review.errors import EvaluationInvalid
from review.evaluation import Prediction, evaluate
from review.evaluation.classes import class_metrics
from review.evaluation.predictions import prediction_from_run
from review.evaluation.reference import SPLITS
from review.models import Benchmark, EvaluationCaseResult, EvaluationRun, GoldCase
from review.services.judge import configured_judge, judge_score

logger = logging.getLogger(__name__)

CONVENTIONS = ("report", "stated")
RUN_EVALUATION_TASK = "review.tasks.run_evaluation"
FROM_SETTINGS = object()

# Answers one question: the persisted Question and the pipeline run (None when it failed first).
AnswerFn = Callable[..., tuple[Question, PipelineRun | None]]


def default_answer_fn(
    *,
    corpus,
    text: str,
    preset: str,
    user,
    history=None,
    config: dict | None = None,
    run_id: int | None = None,
) -> tuple[Question, PipelineRun | None]:
    """Answer in process; ``config`` (the run's stored configuration) instead of resolving the name again.

    ``run_id``: the run asking, which records the question as its case in progress before the
    stages run (``EvaluationRun.asking``), so a resumed run adopts it (``_earlier_question``)."""

    def record(question: Question) -> None:
        EvaluationRun.objects.filter(pk=run_id).update(asking=question)

    return answer_now_with_run(
        corpus=corpus,
        text=text,
        preset=preset,
        user=user,
        is_evaluation=True,
        history=history,
        config=presets.config_from_dict(config) if config else None,
        on_created=record if run_id is not None else None,
    )


def conversation_history(case: GoldCase) -> list[tuple[str, str]]:
    """A multi-turn case's earlier turns as (user turn, agent reply) pairs, oldest first."""
    turns = (case.metadata or {}).get("conversation") or []
    pairs: list[tuple[str, str]] = []
    for turn in turns:
        if turn.get("speaker") == "user":
            pairs.append((turn.get("text", ""), ""))
        elif pairs:
            pairs[-1] = (pairs[-1][0], turn.get("text", ""))
    return pairs


def preset_names() -> tuple[str, ...]:
    """The built-in presets (``--preset all``); a team's own are named one at a time."""
    return tuple(presets.PRESET_NAMES)


def preset_config(name: str, *, team=None) -> dict:
    """The preset's full configuration as JSON-ready data, stored with the run.

    ``team``: the benchmark corpus's team, whose own presets are found by name too.
    """
    return json.loads(json.dumps(presets.resolve(name, team=team).to_dict(), default=str))


def evaluation_run_create(
    *,
    benchmark: Benchmark,
    preset: str,
    user,
    split: str = "",
    limit: int | None = None,
    convention: str = "report",
    config: dict | None = None,
    enqueue: bool = True,
) -> EvaluationRun:
    """A queued run; with ``enqueue`` a worker on the evaluation queue starts it after commit.

    ``config`` skips the preset lookup (for callers that bring their own
    answer function, such as tests). ``user`` owns the run and asks its
    questions.
    """
    if user is None:
        raise EvaluationInvalid("An evaluation run needs the user it belongs to; none is created for it.")
    split = split or ""
    if split and split not in SPLITS:
        raise EvaluationInvalid(f"Unknown split {split!r}; use one of {', '.join(SPLITS)}, or none for all.")
    if limit is not None and limit < 1:
        raise EvaluationInvalid("The limit must be at least 1.")
    if convention not in CONVENTIONS:
        raise EvaluationInvalid(f"Unknown convention {convention!r}; use one of {', '.join(CONVENTIONS)}.")
    if config is None:
        config = preset_config(preset, team=benchmark.corpus.team)
    cases = GoldCase.objects.filter(benchmark=benchmark, **({"split": split} if split else {}))
    total = min(cases.count(), limit or 10**9)
    if total == 0:
        raise EvaluationInvalid(
            f"Benchmark {benchmark.name!r} has no cases{f' in split {split}' if split else ''}."
        )
    with transaction.atomic():
        run = EvaluationRun.objects.create(
            benchmark=benchmark,
            benchmark_version=Benchmark.objects.get(pk=benchmark.pk).version,
            preset=preset,
            preset_config=config,
            split=split,
            case_limit=limit,
            convention=convention,
            progress_total=total,
            created_by=user,
            resend_at=jobs.lease_until() if enqueue else None,
        )
        if enqueue:
            run_id = run.pk
            transaction.on_commit(lambda: jobs.enqueue(RUN_EVALUATION_TASK, run_id))
    return run


def _claim(run_id: int) -> str | None:
    """Queued -> running under a lease; the lease owner, or None when another worker has it."""
    now = timezone.now()
    owner = jobs.new_owner()
    claimed = EvaluationRun.objects.filter(status=EvaluationRun.Status.QUEUED, pk=run_id).update(
        status=EvaluationRun.Status.RUNNING,
        started_at=Coalesce("started_at", Value(now)),
        updated_at=now,
        **jobs.lease_taken(owner, now),
    )
    return owner if claimed else None


def evaluation_runs_reap(*, now=None) -> int:
    """Re-queue runs whose worker died (lease expired); fail those that died too often; resend due ones.

    A re-queued run resumes where it stopped: finished cases are kept.
    """
    now = now or timezone.now()
    lease = timedelta(seconds=settings.JOB_LEASE_SECONDS)
    expired = EvaluationRun.objects.filter(
        Q(lease_expires_at__lt=now) | Q(lease_expires_at__isnull=True, updated_at__lt=now - lease),
        status=EvaluationRun.Status.RUNNING,
    )
    touched = 0
    for pk, attempts, owner in expired.values_list("pk", "attempts", "lease_owner"):
        row = EvaluationRun.objects.filter(pk=pk, status=EvaluationRun.Status.RUNNING, lease_owner=owner)
        if jobs.attempts_exhausted(attempts):
            touched += row.update(
                status=EvaluationRun.Status.FAILED,
                finished_at=now,
                updated_at=now,
                error=f"The worker running this evaluation stopped {attempts} times (killed, out of memory "
                "or restarted), so it was given up; the cases answered so far are kept.",
                **jobs.RELEASED,
            )
        else:
            touched += row.update(
                status=EvaluationRun.Status.QUEUED, resend_at=now, updated_at=now, **jobs.RELEASED
            )
    due = EvaluationRun.objects.filter(status=EvaluationRun.Status.QUEUED, resend_at__lte=now)
    for pk in due.values_list("pk", flat=True):
        if EvaluationRun.objects.filter(pk=pk, status=EvaluationRun.Status.QUEUED).update(
            resend_at=jobs.lease_until(now)
        ):
            jobs.enqueue(RUN_EVALUATION_TASK, pk)
            touched += 1
    return touched


def evaluation_run_execute(
    *,
    run_id: int,
    answer_fn: AnswerFn | None = None,
    judge=FROM_SETTINGS,
    on_progress: Callable[[int], None] | None = None,
) -> EvaluationRun | None:
    """Answer and score every case of a queued run; None when the run was not claimable."""
    owner = _claim(run_id)
    if owner is None:
        logger.info("evaluation run %s: not claimable (done, running elsewhere or gone)", run_id)
        return None
    run = EvaluationRun.objects.select_related("benchmark", "created_by", "asking").get(pk=run_id)
    if answer_fn is None:
        answer_fn = functools.partial(default_answer_fn, config=run.preset_config, run_id=run.pk)
    with jobs.heartbeat(EvaluationRun, run_id, owner):
        return _execute(run, answer_fn, judge, on_progress)


def _execute(run: EvaluationRun, answer_fn: AnswerFn, judge, on_progress) -> EvaluationRun:
    run_id = run.pk
    try:
        if run.created_by is None:
            raise EvaluationInvalid("The run's user was deleted; its questions have nobody to ask them.")
        judge = configured_judge() if judge is FROM_SETTINGS else judge
        cases = selectors.run_cases(run)
        done = set(EvaluationCaseResult.objects.filter(run=run).values_list("gold_case_id", flat=True))
        EvaluationRun.objects.filter(pk=run.pk).update(
            progress_total=len(cases), progress_done=len(done), updated_at=timezone.now()
        )
        if on_progress and done:
            on_progress(len(done))
        for case in cases:
            if case.pk in done:
                continue
            _answer_case(run, case, answer_fn, judge)
            EvaluationRun.objects.filter(pk=run.pk).update(
                progress_done=F("progress_done") + 1, updated_at=timezone.now()
            )
            if on_progress:
                on_progress(1)
        return _finish(run, cases)
    except Exception as exc:  # noqa: BLE001 - the failure is reported on the run, where its owner looks
        logger.exception("evaluation run %s failed", run_id)
        EvaluationRun.objects.filter(pk=run.pk).update(
            **jobs.RELEASED,
            status=EvaluationRun.Status.FAILED,
            error=f"{type(exc).__name__}: {exc}",
            finished_at=timezone.now(),
            updated_at=timezone.now(),
        )
        run.refresh_from_db()
        return run


def _earlier_question(run: EvaluationRun, case: GoldCase) -> Question | None:
    """The question this run asked for ``case`` before its worker died mid-case, if it finished.

    One the dead worker left unfinished is deleted, since the case is asked again: it holds no
    answer, and a run must leave one question per case. That holds even for one a QA worker took
    over meanwhile (the reaper re-queues a dead worker's question): that worker would answer a
    multi-turn case without the conversation the run passes in, and its fenced writes find no row,
    so it drops what it had. The question's own lease is no guide: it was renewed by the same dead
    worker as the run's, and can outlive the run's by a heartbeat."""
    earlier = run.asking
    if earlier is None or earlier.corpus_id != case.corpus_id or earlier.text != case.question.strip():
        return None
    if EvaluationCaseResult.objects.filter(run=run, question=earlier).exists():
        return None  # another case with the same text, already scored
    if earlier.status == Question.Status.DONE:
        return earlier
    Question.objects.filter(pk=earlier.pk).delete()
    return None


def _answer_case(run: EvaluationRun, case: GoldCase, answer_fn: AnswerFn, judge) -> EvaluationCaseResult:
    question, pipeline_run, answer, error = None, None, None, ""
    try:
        question = _earlier_question(run, case)
        if question is not None:
            logger.info("evaluation run %s: case %s adopts question %s", run.pk, case, question.pk)
            pipeline_run = load_run(question.trace, question=question.text)
        else:
            # A multi-turn case (MTRAG-UN) is asked as the follow-up it is, after its earlier turns.
            history = conversation_history(case)
            question, pipeline_run = answer_fn(
                corpus=case.corpus,
                text=case.question,
                preset=run.preset,
                user=run.created_by,
                **({"history": history} if history else {}),
            )
    except Exception as exc:  # noqa: BLE001 - one unanswered case scores as a failure; the run goes on
        logger.exception("evaluation run %s: case %s could not be answered", run.pk, case)
        error = f"{type(exc).__name__}: {exc}"
    if question is not None:
        answer = Answer.objects.filter(question=question).first()
    case_id = selectors.evaluation_case_id(case)
    prediction = prediction_from_run(case_id, pipeline_run) if pipeline_run is not None else None
    if question is not None and prediction is None:
        error = question.error or f"the question ended {question.status} without an answer"
    if prediction is not None and judge is not None:
        score, problem = judge_score(
            judge,
            question=case.question,
            answer=prediction.answer,
            reference=case.reference_answer,
            rubric=case.rubric,
        )
        prediction = dataclasses.replace(prediction, answer_score=score)
        error = error or problem
    result, _ = EvaluationCaseResult.objects.update_or_create(
        run=run,
        gold_case=case,
        defaults={
            "gold_revision": case.revision,
            "question": question,
            "answer": answer,
            "prediction": prediction_to_json(prediction) if prediction is not None else {},
            "error": error,
        },
    )
    return result


def prediction_to_json(prediction: Prediction) -> dict:
    """The stored form of a case's prediction (its case id is the result row's gold case)."""
    data = dataclasses.asdict(prediction)
    del data["case_id"]
    return json.loads(json.dumps(data))


def prediction_from_json(case_id: str, data: dict) -> Prediction:
    return Prediction(
        case_id=case_id,
        answer=data["answer"],
        refused=data["refused"],
        retrieved_documents=tuple(data["retrieved_documents"]),
        cited_evidence=tuple(data["cited_evidence"]),
        cited_texts=tuple(data["cited_texts"]),
        support_score=data["support_score"],
        answer_score=data["answer_score"],
        confidence=data.get("confidence"),  # absent from predictions stored before it existed
        stage_latency=data["stage_latency"],
        kind=data.get("kind", ""),  # absent from predictions stored before reply kinds
    )


def _score(run: EvaluationRun, cases: list[GoldCase], results: dict) -> tuple[dict, dict]:
    """The run's metrics over ``cases`` (from its stored answers) and each case's row, by case id."""
    gold_texts: dict[str, str] = {}
    for case in cases:
        gold_texts.update(case.evidence_texts or {})
    predictions = [
        prediction_from_json(selectors.evaluation_case_id(case), results[case.pk].prediction)
        for case in cases
        if case.pk in results and results[case.pk].prediction
    ]
    outcome = evaluate(
        [selectors.gold_value(case) for case in cases], predictions, gold_texts, convention=run.convention
    )
    metrics = dict(outcome.metrics)
    classes = selectors.class_cases(cases)
    if classes:
        by_id = {p.case_id: p for p in predictions}
        metrics.update({f"class_{k}": v for k, v in class_metrics(classes, by_id).items()})
    return metrics, {row["case_id"]: row for row in outcome.per_case}


# Gold an annotation task produced: annotators agreed, or a reviewer adjudicated their disagreement.
ANNOTATED_GOLD = ("adjudicated", "agreed")


def run_metrics_on_annotated_gold(run: EvaluationRun) -> tuple[dict, int]:
    """A finished run's metrics over only the cases whose gold came from an annotation task, at the
    revision the run scored (nothing is stored), and how many cases that is."""
    results = {
        r.gold_case_id: r
        for r in EvaluationCaseResult.objects.filter(run=run).select_related("gold_case")
        if r.gold_case.provenance in ANNOTATED_GOLD and r.gold_case.revision == r.gold_revision
    }
    cases = [result.gold_case for result in results.values()]
    if not cases:
        return {}, 0
    metrics, _ = _score(run, cases, results)
    return metrics, len(cases)


def _finish(run: EvaluationRun, cases: list[GoldCase]) -> EvaluationRun:
    results = {r.gold_case_id: r for r in EvaluationCaseResult.objects.filter(run=run)}
    metrics, rows = _score(run, cases, results)
    for case in cases:
        if case.pk in results:
            results[case.pk].metrics = rows[selectors.evaluation_case_id(case)]
    EvaluationCaseResult.objects.bulk_update(results.values(), ["metrics"])
    failed = [result for result in results.values() if not result.prediction]
    run.metrics = metrics
    run.progress_done = len(cases)
    if failed and len(failed) == len(cases):
        # Nothing was answered (say, a preset that needs an LLM on a site without one):
        # the zeros would measure the setup, not the pipeline.
        run.status = EvaluationRun.Status.FAILED
        run.error = f"All {len(cases)} case(s) got no answer; the first: {failed[0].error}"
    else:
        run.status = EvaluationRun.Status.DONE
        run.error = ""
        if failed:
            run.error = f"{len(failed)} of {len(cases)} case(s) got no answer; see their results."
    run.finished_at = timezone.now()
    run.lease_owner, run.lease_expires_at = "", None
    run.save(
        update_fields=[
            "metrics",
            "status",
            "progress_done",
            "error",
            "finished_at",
            "updated_at",
            "lease_owner",
            "lease_expires_at",
        ]
    )
    return run
