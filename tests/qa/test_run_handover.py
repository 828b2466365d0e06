"""The retrieval stage hands the run to generation through the Question row, as versioned JSON."""

from __future__ import annotations

import pytest

from qa import presets, services
from qa.models import Question
from qa.pipeline.flow.run import RUN_FORMAT_VERSION, PipelineRun
from tests.qa.pipeline.test_run import V1_TRACES


def queued_for_generation(analyst, corpus, trace) -> Question:
    return Question.objects.create(
        user=analyst,
        corpus=corpus,
        text="What political reforms did the sultan enact?",
        preset="default",
        config=presets.get_preset("default").to_dict(),
        status=Question.Status.QUEUED,
        stage="generation",
        trace=trace,
    )


@pytest.mark.django_db
def test_a_question_retrieved_before_the_upgrade_fails_with_a_reason_not_a_crash(analyst, corpus):
    question = queued_for_generation(analyst, corpus, V1_TRACES["failed_in_generation"]["trace"])
    assert services.question_answer_stages(question_id=question.pk) is None
    question.refresh_from_db()
    assert question.status == Question.Status.FAILED
    assert "ask the question again" in question.error
    # The failure is recorded in the run, in the current format, at the stage it happened.
    run = PipelineRun.from_json(question.trace)
    assert run.version == RUN_FORMAT_VERSION and run.failure.stage == "generation"


@pytest.mark.django_db
def test_generation_before_retrieval_is_refused(analyst, corpus):
    question = queued_for_generation(analyst, corpus, PipelineRun(question="Q?").to_json())
    assert services.question_answer_stages(question_id=question.pk) is None
    question.refresh_from_db()
    assert question.error == "Generation started before retrieval finished."
