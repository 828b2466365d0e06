"""The pipeline run: built once, stored as versioned JSON, read back the same; old traces still read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from documents.parsing.types import ParsedDocument, ParsedSentence
from qa.pipeline.config.presets import get_preset
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.run import RUN_FORMAT_VERSION, PipelineRun, load_run
from qa.pipeline.flow.runner import (
    RETRIEVAL,
    Held,
    PipelineError,
    answer_question,
    answer_stage,
    ranking_from_run,
    retrieve_stage,
    run_stages,
    run_step,
)
from qa.pipeline.search.embedding import HashingEmbedder
from qa.pipeline.search.memory_index import InMemoryCorpusIndex

# Traces written by the code before PipelineRun (format version 1), kept as stored.
V1_TRACES = json.loads((Path(__file__).parents[1] / "data" / "traces_v1.json").read_text())


def document(external_id: str, title: str, sentences: list[str]) -> ParsedDocument:
    parsed, position = [], 0
    for text in sentences:
        parsed.append(ParsedSentence(text, position, position + len(text)))
        position += len(text) + 1
    return ParsedDocument(external_id, title, " ".join(sentences), tuple(parsed))


DOCS = [
    document(
        "factbook/oman",
        "Oman",
        [
            "Qaboos overthrew his father in 1970 and ruled as sultan.",
            "After protests in 2011 the sultan enacted political reforms.",
            "He expanded the powers of the elected council.",
            "Oman has a population of 3.2 million people.",
            "The capital is Muscat.",
        ],
    ),
    document("news/census", "Census report", ["The population of Oman is 4.1 million people."]),
    document("news/mali", "Mali", ["Soldiers staged a coup in Mali.", "Elections were postponed."]),
]
REFORMS = "What political reforms did the sultan enact after the 2011 protests?"


@pytest.fixture(scope="module")
def index():
    return InMemoryCorpusIndex(DOCS, HashingEmbedder(), chunk_size=3, chunk_overlap=1)


def pipeline_for(preset: str, index):
    return build_pipeline(get_preset(preset), index=index, clients=ModelClients(embedder=HashingEmbedder()))


def test_a_run_records_every_stage_and_reads_back_unchanged_from_json(index):
    run = answer_question(REFORMS, pipeline=pipeline_for("default", index))
    assert run.version == RUN_FORMAT_VERSION and run.failure is None
    assert run.retrieval.reranker == "EvidenceReranker"
    assert run.retrieval.candidates[0].scores["bm25"] > 0 and "rerank" in run.retrieval.reranked[0].scores
    assert run.answering.outcome == "verified" and run.answer.verified
    assert "political reforms" in run.answer.text
    assert {"retrieval", "rerank", "generation", "answer"} <= set(run.timings)
    stored = json.loads(json.dumps(run.to_json()))  # what a JSONField holds
    assert stored["version"] == RUN_FORMAT_VERSION
    assert PipelineRun.from_json(stored) == run


def test_the_stages_in_two_processes_give_the_answer_of_one(index):
    pipeline = pipeline_for("default", index)
    in_one = answer_question(REFORMS, pipeline=pipeline)
    retrieved, _ = retrieve_stage(pipeline, PipelineRun(question=REFORMS, preset="default"))
    handed_over = PipelineRun.from_json(json.loads(json.dumps(retrieved.to_json())))
    in_two = answer_stage(pipeline, handed_over, ranking_from_run(handed_over, index))
    assert in_two.answer == in_one.answer
    assert [a.sentences for a in in_two.answering.attempts] == [
        a.sentences for a in in_one.answering.attempts
    ]


class EveryStageElsewhere:
    """A stage executor like a Celery worker per stage: each stage starts from the run as stored JSON,
    with its passages looked up again, and no stage follows in the same process."""

    def __init__(self, pipeline, asked: PipelineRun, index) -> None:
        self.pipeline, self.asked, self.index, self.executed = pipeline, asked, index, []

    def runs_here(self, stage) -> bool:
        return False

    def execute(self, stage, held):
        self.executed.append(stage)
        run = PipelineRun.from_json(json.loads(json.dumps((held.run if held else self.asked).to_json())))
        ranked = () if stage == RETRIEVAL else ranking_from_run(run, self.index)
        return run_step(stage, Held(self.pipeline, run, ranked))


def test_the_runner_gives_the_same_answer_wherever_each_stage_executes(index):
    """The answer an analyst reads does not depend on the executor: one process (bench, tests)
    or every stage handed over as stored JSON (the workers)."""
    pipeline = pipeline_for("default", index)
    in_one = answer_question(REFORMS, pipeline=pipeline)
    elsewhere = EveryStageElsewhere(pipeline, PipelineRun(question=REFORMS, preset="default"), index)
    held, waiting = run_stages(elsewhere)
    stages_run = [RETRIEVAL]
    while waiting is not None:  # each left stage is "sent" and run by the next worker
        stages_run.append(waiting)
        held, waiting = run_stages(elsewhere, waiting, held)
    assert elsewhere.executed == stages_run == ["retrieval", "generation", "citation", "verification"]
    assert held.run.answer == in_one.answer
    assert "political reforms" in held.run.answer.text
    assert [r.stage for r in held.run.stage_runs] == [r.stage for r in in_one.stage_runs]


def test_a_preset_that_needs_missing_parts_says_what_stood_in(index):
    run = answer_question("What is the population of Oman?", pipeline=pipeline_for("verify", index))
    assert run.substitutions == (
        "reranker: cross-encoder -> evidence (QA_RERANKER_MODEL is not set)",
        "generator: llm -> extractive (no LLM configured)",
        "citations: llm -> embedding (no LLM configured)",
        "verifier: llm -> lexical (no LLM configured)",
    )
    assert run.answering.config.generator == "extractive"
    with pytest.raises(PipelineError, match="QA_LLM_PROVIDER"):
        answer_question("Who rules Oman?", pipeline=pipeline_for("llm-only", index))


def test_an_old_trace_reads_as_a_run_with_every_stage_it_recorded():
    stored = V1_TRACES["default_answered"]
    run = load_run(stored["trace"], question=stored["question"])
    assert run.version == 1 and run.question == stored["question"] and run.failure is None
    assert run.retrieval.unit == "chunk" and run.retrieval.reranker == "EvidenceReranker"
    assert run.retrieval.candidates[0].key == stored["trace"]["retrieval"]["candidates"][0]["key"]
    assert run.retrieval.reranked[0].scores["rerank"] == stored["trace"]["rerank"]["candidates"][0]["score"]
    (attempt,) = run.answering.attempts
    assert attempt.verified and attempt.verification.verdicts[0].label == "supported"
    assert " ".join(s.text for s in attempt.sentences) == stored["answer"]
    assert run.answering.config.extractive_focus_document is True
    assert run.timings["rewrite"] >= 0 and "answer" in run.timings
    # Saved again, it is written in the current format.
    assert PipelineRun.from_json(run.to_json()).retrieval == run.retrieval


def test_an_old_trace_keeps_its_substitutions_and_tells_which_stage_failed():
    substituted = V1_TRACES["verify_substituted"]
    assert len(load_run(substituted["trace"]).substitutions) == 4
    for name, stage in (("failed_in_generation", "generation"), ("failed_in_retrieval", "retrieval")):
        stored = V1_TRACES[name]
        run = load_run(stored["trace"], question=stored["question"], error=stored["error"])
        assert (run.failure.stage, run.failure.message) == (stage, stored["error"])
    assert load_run({}).retrieval is None  # a question still queued


def test_a_trace_from_an_unknown_format_is_refused_not_misread():
    with pytest.raises(ValueError, match="version"):
        load_run({"version": RUN_FORMAT_VERSION + 1})


def test_basic_hands_the_llm_the_three_nearest_chunks_and_advanced_reranks_ten(index):
    from tests.qa.pipeline.answering_fakes import ScriptedLLM, user_message

    def answer_from_context(messages):
        return "The sultan expanded the powers of the elected council [1]."

    for name, reranker in (("basic", ""), ("advanced", "EvidenceReranker")):
        llm = ScriptedLLM([answer_from_context])
        clients = ModelClients(embedder=HashingEmbedder(), llm=llm)
        run = answer_question(
            REFORMS, pipeline=build_pipeline(get_preset(name), index=index, clients=clients)
        )
        assert run.failure is None, name
        context = user_message(llm.calls[0])
        # One LLM call sees three retrieved chunks (the corpus has more than three).
        assert len(run.answering.attempts[0].passages) == 3, name
        assert len(llm.calls) == 1 and "elected council" in context
        assert (run.retrieval.reranker or "") == reranker, name
        if name == "advanced":
            assert len(run.retrieval.candidates) == min(10, len(index.passages("chunk")))
            assert any("cross-encoder" in note for note in run.substitutions)


def test_vanilla_needs_an_llm_like_llm_only(index):
    with pytest.raises(PipelineError, match="QA_LLM_PROVIDER"):
        answer_question(REFORMS, pipeline=pipeline_for("vanilla", index))
