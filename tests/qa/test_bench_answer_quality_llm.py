"""bench.answer_quality --llm local: the LLM presets measured without a database, with the site's client."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from bench.answer_quality import local_llm, parse_args, result_path
from tests.qa.pipeline.test_llm_clients import fake_params


class RecordingServer:
    """Stands in for xllamacpp.Server (outside the project): records how it was built."""

    built: list[RecordingServer] = []

    def __init__(self, params):
        self.params = params
        RecordingServer.built.append(self)

    def handle_chat_completions(self, body):
        return {"choices": [{"message": {"role": "assistant", "content": "Score: 4"}}]}


@pytest.fixture
def recording_xllamacpp(monkeypatch):
    RecordingServer.built = []
    module = types.ModuleType("xllamacpp")
    module.CommonParams = fake_params
    module.Server = RecordingServer
    monkeypatch.setitem(sys.modules, "xllamacpp", module)


@pytest.fixture
def gguf(tmp_path) -> Path:
    path = tmp_path / "qwen.gguf"
    path.write_bytes(b"GGUF")
    return path


def test_the_local_client_uses_one_thread_unless_told(recording_xllamacpp, gguf):
    """A bench shares the machine: one thread by default, QA_LLM_THREADS as the site reads it."""
    llm = local_llm({"QA_LLM_MODEL": str(gguf)})
    assert llm.name == "llama-cpp:qwen.gguf"
    assert llm.complete([{"role": "user", "content": "Rate it."}]) == "Score: 4"
    assert RecordingServer.built[-1].params.cpuparams.n_threads == 1
    assert RecordingServer.built[-1].params.model.path == str(gguf)

    local_llm({"QA_LLM_MODEL": str(gguf), "QA_LLM_THREADS": "2"}).complete([{"role": "user", "content": "x"}])
    assert RecordingServer.built[-1].params.cpuparams_batch.n_threads == 2


def test_a_missing_model_stops_the_bench_naming_the_setting(recording_xllamacpp, tmp_path):
    with pytest.raises(SystemExit, match=r"absent\.gguf.*QA_LLM_MODEL"):
        local_llm({"QA_LLM_MODEL": str(tmp_path / "absent.gguf")})


def test_judging_needs_the_llm_and_presets_run_in_the_order_given(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--judge"])
    assert "--judge needs --llm local" in capsys.readouterr().err
    args = parse_args(["--llm", "local", "--preset", "vanilla", "basic", "advanced", "--judge"])
    assert args.preset == ["vanilla", "basic", "advanced"] and args.judge
    assert parse_args([]).preset == ["default"] and parse_args([]).llm == "none"


def test_each_preset_has_its_own_results_file(tmp_path):
    assert result_path(tmp_path, "analyst-bench", "train", "local_llm", "llm-cite") == (
        tmp_path / "analyst_bench_train_local_llm_llm-cite.json"
    )
    assert result_path(tmp_path, "clapnq", "dev", "", "default").name == "clapnq_dev_default.json"


MARENIA = (
    "Marenia is a small kingdom on the northern coast. Its capital is Port Alder, a harbour city of "
    "120,000 people. The kingdom exports timber and salted fish."
)


def test_a_case_the_llm_fails_on_is_scored_as_no_answer_and_the_bench_goes_on(capsys):
    """One LLM error (the rag prompt that overflowed the context once stopped a 24-question run)
    costs that case, not the run: it is scored as unanswered, its error kept in the results."""
    from bench.answer_quality import report
    from documents.parsing.assemble import document_from_text
    from qa.pipeline.config.presets import get_preset
    from qa.pipeline.core.llm import LLMError
    from qa.pipeline.search.embedding import SentenceTransformerEmbedder
    from qa.pipeline.search.memory_index import InMemoryCorpusIndex
    from review.evaluation.types import GoldCase
    from tests.qa.pipeline.answering_fakes import ScriptedLLM

    embedder = SentenceTransformerEmbedder()
    document = document_from_text(MARENIA, external_id="marenia", filename="marenia.txt")
    index = InMemoryCorpusIndex([document], embedder)
    cases = [
        GoldCase(
            f"c{n}", "What is the capital of Marenia?", ("marenia",), ("marenia:S2",), "Port Alder", True
        )
        for n in (1, 2)
    ]
    llm = ScriptedLLM([LLMError("the prompt does not fit the context"), "The capital is Port Alder."])
    result = report("vanilla", cases, {}, index, embedder, get_preset("vanilla"), False, "report", llm=llm)
    first, second = result["cases"]
    assert first["error"] == "LLMError: the prompt does not fit the context"
    assert first["answer"] == "" and not first["refused"]
    assert second["error"] == "" and "Port Alder" in second["answer"]
    assert "c1: no answer (LLMError: the prompt does not fit the context)" in capsys.readouterr().out
