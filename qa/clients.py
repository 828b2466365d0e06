"""Model clients built once per process from settings: the only place the
pipeline's Protocols meet Django settings. A misconfigured model fails with
ConfigurationError naming the setting to change."""

from __future__ import annotations

import functools

from django.conf import settings

from documents.embedding import get_embedder
from qa.pipeline.embedding import ModelNotAvailable
from qa.pipeline.llm import LLMError, build_llm

__all__ = ["ConfigurationError", "get_embedder", "get_llm_or_none", "get_reranker"]


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
        return build_llm("llama_cpp", model_path=settings.QA_LLM_MODEL)
    except LLMError as exc:
        raise ConfigurationError(f"QA_LLM_PROVIDER={provider}: {exc}") from exc


@functools.cache
def _cross_encoder(name: str):
    from qa.pipeline.rerank import CrossEncoderReranker

    try:
        return CrossEncoderReranker(name, setting="QA_RERANKER_MODEL")
    except ModelNotAvailable as exc:
        raise ConfigurationError(str(exc)) from exc


def get_reranker(kind: str, index) -> tuple[object | None, str | None]:
    """The reranker a preset asks for, and a note when another one stands in for it.

    "cross-encoder" uses QA_RERANKER_MODEL. No cross-encoder weights install
    offline, so without that setting the evidence reranker (which needs only
    the embedding model) stands in, and the run's trace says so.
    """
    from qa.pipeline.rerank import EvidenceReranker

    if kind == "none":
        return None, None
    if kind == "cross-encoder":
        if settings.QA_RERANKER_MODEL:
            return _cross_encoder(settings.QA_RERANKER_MODEL), None
        note = "reranker: cross-encoder -> evidence (QA_RERANKER_MODEL is not set)"
        return EvidenceReranker(index, get_embedder()), note
    return EvidenceReranker(index, get_embedder()), None
