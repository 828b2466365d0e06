"""QA_NLI_MODEL and QA_SPAN_READER_MODEL: the site loads what they name, and a name that cannot load
stops `manage.py check` and the worker's start with the setting named."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from groundedqa_site.celery import load_named_models
from qa import clients
from tests.qa.pipeline.tiny_models import save_tiny_nli, save_tiny_span_reader
from tests.test_settings import run_check


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    return {
        "QA_NLI_MODEL": save_tiny_nli(tmp_path_factory.mktemp("nli")),
        "QA_SPAN_READER_MODEL": save_tiny_span_reader(tmp_path_factory.mktemp("squad2")),
    }


@pytest.mark.parametrize("setting", ["QA_NLI_MODEL", "QA_SPAN_READER_MODEL"])
def test_manage_py_check_fails_on_a_model_that_cannot_load_naming_the_setting(tmp_path, setting):
    result = run_check(**{setting: str(tmp_path / "not-a-model")})
    assert result.returncode != 0
    assert "qa.E002" in result.stderr
    assert f"{setting}={tmp_path / 'not-a-model'} could not be loaded" in result.stderr


def test_manage_py_check_passes_with_models_that_load(tiny_models):
    result = run_check(**tiny_models)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("setting", ["QA_NLI_MODEL", "QA_SPAN_READER_MODEL"])
def test_a_worker_does_not_start_with_a_model_that_cannot_load(settings, tmp_path, setting):
    setattr(settings, setting, str(tmp_path / "not-a-model"))
    with pytest.raises(SystemExit, match=rf"worker not started: {setting}=.*not-a-model could not be loaded"):
        load_named_models(sender=None)


def test_the_sites_model_clients_carry_the_named_models(settings, tiny_models):
    for setting, path in tiny_models.items():
        setattr(settings, setting, path)
    load_named_models(sender=None)  # starts: both load
    models = clients.model_clients()
    assert models.nli.name == tiny_models["QA_NLI_MODEL"]
    assert models.span_reader.name == tiny_models["QA_SPAN_READER_MODEL"]
    assert 0.0 <= models.nli.entailment([("Oman has 3.2 million people.", "Oman is populous.")])[0] <= 1.0
    settings.QA_NLI_MODEL = settings.QA_SPAN_READER_MODEL = ""
    assert clients.model_clients().nli is None and clients.model_clients().span_reader is None


def worker_consuming(*queues):
    queues_ = SimpleNamespace(consume_from=dict.fromkeys(queues))
    return SimpleNamespace(app=SimpleNamespace(amqp=SimpleNamespace(queues=queues_)))


def test_only_workers_that_answer_load_the_named_models(settings, tmp_path):
    settings.QA_NLI_MODEL = str(tmp_path / "not-a-model")
    load_named_models(sender=worker_consuming("maintenance"))  # the maintenance worker starts
    with pytest.raises(SystemExit, match="QA_NLI_MODEL="):
        load_named_models(sender=worker_consuming("verification", "generation"))


@pytest.mark.django_db
def test_the_api_trace_carries_the_entailment_and_span_of_each_answer_sentence(
    settings, tiny_models, analyst, westmere
):
    from rest_framework.test import APIClient

    from qa import services

    for setting, path in tiny_models.items():
        setattr(settings, setting, path)
    question = services.answer_now(
        corpus=westmere, text="How many staff did the port authority employ?", preset="default", user=analyst
    )
    client = APIClient()
    client.force_authenticate(analyst)
    body = client.get(f"/api/questions/{question.pk}/").json()
    assert body["status"] == "done", body["error"]
    assert f"verifier: lexical -> nli ({tiny_models['QA_NLI_MODEL']})" in body["trace"]["substitutions"]
    attempt = body["trace"]["answering"]["attempts"][-1]
    verdicts = attempt["verification"]["verdicts"]
    judged = [v["entailment"] for v in verdicts if v["entailment"] is not None]  # cited sentences
    assert judged and all(0.0 <= p <= 1.0 for p in judged)
    spans = [(s["text"], v["span"]) for s, v in zip(attempt["sentences"], verdicts, strict=True) if v["span"]]
    assert spans and all(text[span["start"] : span["end"]] == span["text"] for text, span in spans)


@pytest.mark.parametrize("threads, expected", [(1, 1), (0, None)])
def test_qa_llm_threads_reaches_the_local_llm(settings, monkeypatch, tmp_path, threads, expected):
    from tests.qa.pipeline.test_llm_clients import FakeServer, fake_params

    module = SimpleNamespace(CommonParams=fake_params, Server=FakeServer)
    monkeypatch.setitem(__import__("sys").modules, "xllamacpp", module)
    FakeServer.instances, FakeServer.replies = [], [{"choices": [{"message": {"content": "local"}}]}]
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    settings.QA_LLM_PROVIDER, settings.QA_LLM_MODEL, settings.QA_LLM_THREADS = "llamacpp", str(gguf), threads
    clients.get_llm_or_none.cache_clear()
    try:
        assert clients.get_llm_or_none().complete([{"role": "user", "content": "hi"}]) == "local"
    finally:
        clients.get_llm_or_none.cache_clear()
    params = FakeServer.instances[0].params
    assert params.cpuparams.n_threads == params.cpuparams_batch.n_threads == (expected or -1)


def test_the_reader_weights_setting_reaches_the_stages_through_the_sites_models(settings, tmp_path):
    # The pipeline reads no environment: QA_READER_WEIGHTS reaches the answerability judge only
    # through qa.clients' models, so a file that is not there fails the first judged question
    # with the setting named, not a later one and not silently with the shipped reader.
    from qa.pipeline.config.presets import get_preset
    from qa.pipeline.flow.factory import ModelClients, build_pipeline
    from qa.pipeline.flow.runner import answer_question
    from qa.pipeline.search.embedding import HashingEmbedder, ModelNotAvailable
    from qa.pipeline.search.memory_index import InMemoryCorpusIndex
    from tests.qa.pipeline.test_run import DOCS, REFORMS

    missing = tmp_path / "no-reader.safetensors"
    settings.QA_READER_WEIGHTS = str(missing)
    clients.pipeline_models.cache_clear()
    try:
        site = ModelClients(embedder=HashingEmbedder(), models=clients.pipeline_models())
        index = InMemoryCorpusIndex(DOCS, HashingEmbedder(), chunk_size=3, chunk_overlap=1)
        pipeline = build_pipeline(get_preset("default"), index=index, clients=site)
        with pytest.raises(ModelNotAvailable, match="QA_READER_WEIGHTS") as raised:
            answer_question(REFORMS, pipeline=pipeline)
        assert str(missing) in str(raised.value)
        # Without the setting the shipped reader reads, and the same question is answered.
        settings.QA_READER_WEIGHTS = ""
        clients.pipeline_models.cache_clear()
        site = ModelClients(embedder=HashingEmbedder(), models=clients.pipeline_models())
        run = answer_question(
            REFORMS, pipeline=build_pipeline(get_preset("default"), index=index, clients=site)
        )
        assert run.trust.answerability.signals.reader_answerable > 0.0
    finally:
        clients.pipeline_models.cache_clear()


def test_shipped_names_the_projects_own_span_reader_which_guesses(settings):
    """QA_SPAN_READER_MODEL=shipped loads the reader whose file is in the repository (no download);
    its spans are pointers, shown as guesses."""
    settings.QA_SPAN_READER_MODEL = "shipped"
    load_named_models(sender=None)
    reader = clients.model_clients().span_reader
    assert reader.guesses and reader.name == "shipped span reader (span_reader.safetensors)"
    assert run_check(QA_SPAN_READER_MODEL="shipped").returncode == 0
