"""Model clients built once per process from settings: the only place the
pipeline's Protocols meet Django settings. A misconfigured model fails with
ConfigurationError naming the setting to change."""

from __future__ import annotations

import functools

from django.conf import settings

from documents.embedding import get_embedder, model_named
from documents.models import EmbeddingSpace
from qa.pipeline.core.llm import LLMError, build_llm
from qa.pipeline.core.model_parts import PipelineModels, build_models
from qa.pipeline.flow.factory import ModelClients
from qa.pipeline.search.embedding import ModelNotAvailable

__all__ = [
    "ConfigurationError",
    "get_embedder",
    "get_llm_or_none",
    "model_clients",
    "named_models",
    "pipeline_models",
]


class ConfigurationError(Exception):
    """A model or provider named in settings cannot be used; the message names the setting."""


@functools.cache
def get_llm_or_none():
    """The configured LLM client, or None when QA_LLM_PROVIDER is "none"."""
    provider = settings.QA_LLM_PROVIDER
    try:
        if provider == "none":
            return None
        if provider == "groq":
            options = {"api_key": settings.GROQ_API_KEY, "timeout": settings.QA_LLM_TIMEOUT_SECONDS}
            if settings.QA_LLM_MODEL:
                options["model"] = settings.QA_LLM_MODEL
            if settings.QA_LLM_BASE_URL:
                options["base_url"] = settings.QA_LLM_BASE_URL
            return build_llm("groq", **options)
        if provider == "openai":
            if not settings.QA_LLM_BASE_URL or not settings.QA_LLM_MODEL:
                raise ConfigurationError(
                    "QA_LLM_PROVIDER=openai needs QA_LLM_BASE_URL "
                    "(e.g. http://localhost:11434/v1) and QA_LLM_MODEL."
                )
            return build_llm(
                "openai",
                base_url=settings.QA_LLM_BASE_URL,
                model=settings.QA_LLM_MODEL,
                api_key=settings.QA_LLM_API_KEY or None,
                timeout=settings.QA_LLM_TIMEOUT_SECONDS,
            )
        if not settings.QA_LLM_MODEL:
            raise ConfigurationError("QA_LLM_PROVIDER=llamacpp needs QA_LLM_MODEL, the path of a .gguf file.")
        return build_llm(
            "llama_cpp", model_path=settings.QA_LLM_MODEL, n_threads=settings.QA_LLM_THREADS or None
        )
    except LLMError as exc:
        raise ConfigurationError(f"QA_LLM_PROVIDER={provider}: {exc}") from exc


@functools.cache
def _cross_encoder(name: str):
    from qa.pipeline.search.rerank import CrossEncoderReranker

    try:
        return CrossEncoderReranker(name, setting="QA_RERANKER_MODEL")
    except ModelNotAvailable as exc:
        raise ConfigurationError(str(exc)) from exc


@functools.cache
def _named_model(setting: str, name: str):
    """The model ``name`` for ``setting``, loaded once per process."""
    from qa.pipeline.checks.nli import NLI_SETTING, TransformersEntailmentModel
    from qa.pipeline.checks.spans import OUR_SPAN_READER, SPAN_READER_SETTING, TransformersSpanReader
    from qa.pipeline.reading.reader import SpanReader

    loaders = {NLI_SETTING: TransformersEntailmentModel, SPAN_READER_SETTING: TransformersSpanReader}
    try:
        if setting == SPAN_READER_SETTING and name == OUR_SPAN_READER:
            return SpanReader(threads=settings.QA_READER_THREADS, setting=setting)  # it guesses
        return loaders[setting](name, setting=setting)
    except ModelNotAvailable as exc:
        raise ConfigurationError(str(exc)) from exc


def named_models() -> dict[str, object]:
    """The models a user named by setting (QA_NLI_MODEL, QA_SPAN_READER_MODEL), loaded; a setting
    left empty is absent. Raises ConfigurationError naming the first setting whose model cannot
    be loaded: the worker's start and ``manage.py check`` call this, so a wrong name stops them
    instead of failing every question."""
    wanted = {"QA_NLI_MODEL": settings.QA_NLI_MODEL, "QA_SPAN_READER_MODEL": settings.QA_SPAN_READER_MODEL}
    return {setting: _named_model(setting, name) for setting, name in wanted.items() if name}


@functools.cache
def pipeline_models() -> PipelineModels:
    """The taggers, the passage reader (QA_READER_WEIGHTS, QA_READER_THREADS) and the trust and
    turn-kind models, built once per process; the reader and the taggers load on first use, so a
    missing QA_READER_WEIGHTS file fails the first question judged, naming the setting."""
    return build_models(
        reader_weights=settings.QA_READER_WEIGHTS or None, reader_threads=settings.QA_READER_THREADS
    )


def search_embedder(space: EmbeddingSpace | None):
    """The question encoder of a corpus's embedding space; None for the site's model."""
    if space is None or space.in_columns:
        return None
    try:
        return model_named(space.model).query
    except ModelNotAvailable as exc:
        raise ConfigurationError(
            f"The corpus is embedded with {space.model!r}, which cannot be loaded here: {exc}. Install it "
            "or re-embed the corpus with an installed model (python manage.py reembed)."
        ) from exc


def model_clients(space: EmbeddingSpace | None = None) -> ModelClients:
    """The configured models, for ``qa.pipeline.flow.factory.build_pipeline``; ``space`` is the
    embedding space of the corpus searched (None: the site's model).

    The cross-encoder loads only when a preset asks for one: most never do,
    and a broken QA_RERANKER_MODEL should fail only the runs that use it.
    Without the setting the evidence reranker stands in and the run says so.
    """
    name = settings.QA_RERANKER_MODEL
    named = named_models()
    return ModelClients(
        embedder=get_embedder(),
        llm=get_llm_or_none(),
        cross_encoder=(lambda: _cross_encoder(name)) if name else None,
        search_embedder=search_embedder(space),
        nli=named.get("QA_NLI_MODEL"),
        span_reader=named.get("QA_SPAN_READER_MODEL"),
        models=pipeline_models(),
    )
