"""Generation, citation and verification one stage at a time, the run stored as JSON between them
(as the Celery tasks hand it on), answer what the stages in one call answer."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from qa.pipeline.config.presets import get_preset
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.run import PipelineRun
from qa.pipeline.flow.runner import answer_question, ranking_from_run, retrieve_stage
from qa.pipeline.flow.stages import PipelineError, next_stage, run_stage
from qa.pipeline.search.embedding import HashingEmbedder
from tests.qa.pipeline.answering_fakes import ScriptedLLM
from tests.qa.pipeline.test_run import REFORMS, index  # noqa: F401 - the module's corpus fixture

HARBOUR = "What did Qaboos do after the 2011 protests?"


def stored(run: PipelineRun) -> PipelineRun:
    """What the next task reads back from the Question row."""
    return PipelineRun.from_json(json.loads(json.dumps(run.to_json())))


def untimed(attempts):
    return [replace(a, timings={}) for a in attempts]


def stage_by_stage(pipeline, question: str) -> tuple[PipelineRun, list[str]]:
    retrieved, _ = retrieve_stage(pipeline, PipelineRun(question=question, preset=pipeline.config.name))
    run, order = stored(retrieved), []
    while (stage := next_stage(run)) is not None:
        order.append(stage)
        run = stored(run_stage(stage, pipeline, run, ranking_from_run(run, pipeline.index), worker="w:1"))
    return run, order


@pytest.mark.parametrize(
    "question", [REFORMS, HARBOUR, "How many moons does Jupiter have?"], ids=["answered", "other", "refused"]
)
def test_each_stage_in_its_own_task_gives_the_answer_of_one_call(index, question):  # noqa: F811
    pipeline = build_pipeline(
        get_preset("default"), index=index, clients=ModelClients(embedder=HashingEmbedder())
    )
    in_one = answer_question(question, pipeline=pipeline)
    in_stages, order = stage_by_stage(pipeline, question)

    assert in_stages.answer == in_one.answer
    assert untimed(in_stages.answering.attempts) == untimed(in_one.answering.attempts)
    assert in_stages.progress is None  # the hand-over state is dropped once answered
    assert [r.stage for r in in_stages.stage_runs] == order
    assert all(r.worker == "w:1" and r.seconds >= 0 for r in in_stages.stage_runs)


def test_a_failed_verification_sends_the_run_back_to_generation_for_the_next_passage(index):  # noqa: F811
    llm = ScriptedLLM(["Qaboos ruled [1].", "A1: NOT_SUPPORTED", "He enacted reforms [1].", "A1: SUPPORTED"])
    rag = get_preset("rag")
    # Chunks, one per attempt; the LLM both writes and judges.
    config = replace(
        rag,
        retrieval=replace(get_preset("default").retrieval, rerank_depth=0),
        answer=replace(rag.answer, verifier="llm", max_attempts=2),
    )
    pipeline = build_pipeline(config, index=index, clients=ModelClients(embedder=HashingEmbedder(), llm=llm))
    run, order = stage_by_stage(pipeline, REFORMS)

    assert order == ["generation", "citation", "verification"] * 2
    assert [r.attempt for r in run.stage_runs] == [1, 1, 1, 2, 2, 2]
    assert run.answer.verified and run.answer.text.startswith("He enacted reforms")
    assert [a.outcome for a in run.answering.attempts] == ["not verified", "verified"]


def test_a_stage_run_out_of_turn_is_refused(index):  # noqa: F811
    pipeline = build_pipeline(
        get_preset("default"), index=index, clients=ModelClients(embedder=HashingEmbedder())
    )
    retrieved, _ = retrieve_stage(pipeline, PipelineRun(question=REFORMS))
    with pytest.raises(PipelineError, match="waits for generation"):
        run_stage("verification", pipeline, retrieved, ranking_from_run(retrieved, index))
