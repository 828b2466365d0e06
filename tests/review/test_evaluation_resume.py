"""A run resumed after its worker died mid-case asks that case no second question.

The dead worker is staged, not killed (tests/review/test_evaluation_faults.py kills a real one at
a random point): the run's case in progress asked its question through the real in-process
pipeline and the run was put back in its queue, as the reaper does, before the case's result was
stored. Resuming it must leave one question per case.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from bench.fault_jobs import evaluation_benchmark
from qa.models import Question
from review import selectors
from review.models import EvaluationCaseResult, EvaluationRun
from review.services.evaluation import default_answer_fn, evaluation_run_create, evaluation_run_execute
from tests.qa.conftest import COUNTRY_PROFILE, PORT_REPORT, ingest_texts

pytestmark = pytest.mark.django_db(transaction=True)


def _run_killed_mid_first_case(corpus, embedder, analyst):
    ingest_texts(corpus, embedder, {"port-report": PORT_REPORT, "country-profile": COUNTRY_PROFILE})
    benchmark = evaluation_benchmark(corpus, name="resume", cases=2)
    run = evaluation_run_create(benchmark=benchmark, preset="default", user=analyst, enqueue=False)
    first = selectors.run_cases(run)[0]
    asked, _ = default_answer_fn(
        corpus=corpus,
        text=first.question,
        preset=run.preset,
        user=analyst,
        config=run.preset_config,
        run_id=run.pk,
    )
    return run, first, asked


def test_a_resumed_run_adopts_the_answered_question_of_the_case_it_was_killed_in(corpus, embedder, analyst):
    run, first, asked = _run_killed_mid_first_case(corpus, embedder, analyst)
    assert asked.status == "done" and EvaluationRun.objects.get(pk=run.pk).asking_id == asked.pk

    evaluation_run_execute(run_id=run.pk, judge=None)

    run.refresh_from_db()
    assert run.status == "done" and run.progress_done == 2
    assert Question.objects.filter(user=analyst, is_evaluation=True).count() == 2  # not 3
    result = EvaluationCaseResult.objects.get(run=run, gold_case=first)
    assert result.question_id == asked.pk and result.prediction["answer"]


def test_a_resumed_run_replaces_the_unfinished_question_its_dead_worker_left(corpus, embedder, analyst):
    run, first, asked = _run_killed_mid_first_case(corpus, embedder, analyst)
    # As the worker left it when killed in generation: running, and its lease, renewed by the same
    # dead worker, not quite run out yet when the run (whose lease did) is resumed.
    Question.objects.filter(pk=asked.pk).update(
        status="running", stage="generation", lease_expires_at=timezone.now() + timedelta(seconds=5)
    )

    evaluation_run_execute(run_id=run.pk, judge=None)

    assert not Question.objects.filter(pk=asked.pk).exists()
    assert Question.objects.filter(user=analyst, is_evaluation=True).count() == 2
    result = EvaluationCaseResult.objects.get(run=run, gold_case=first)
    assert result.question.status == "done" and result.prediction["answer"]
