"""The one place a preset and the model clients become a runnable pipeline.

``build_pipeline`` picks the reranker, generator, citer and verifier a preset
names, and replaces the parts that cannot run here (a preset asking for an
LLM on a site without one, a cross-encoder with no weights configured) with
their no-LLM, no-weights counterparts. Every replacement is listed in
``Pipeline.substitutions``, which the run records, so a run never silently
pretends to be something else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from qa.pipeline.checks.answerability import LLMAnswerability, SignalAnswerability
from qa.pipeline.checks.judged_claims import JudgedVerifier
from qa.pipeline.checks.nli import NLIVerifier
from qa.pipeline.checks.spans import SpanReadingVerifier
from qa.pipeline.checks.trust import TrustConfig, answerability_judge, sentence_judge
from qa.pipeline.config.answering_config import AnswerConfig
from qa.pipeline.config.presets import PipelineConfig
from qa.pipeline.core.model_parts import PipelineModels, default_models
from qa.pipeline.core.protocols import LLM, CorpusIndex, Embedder, EntailmentModel, Retriever, SpanReader
from qa.pipeline.dialogue.turn_kind import load_turn_model
from qa.pipeline.flow.answer_parts import AnswerParts, build_answer_parts
from qa.pipeline.search.embedding import RecentVectors
from qa.pipeline.search.pairwise import LLMPairwiseReranker
from qa.pipeline.search.rechunk import RechunkedIndex
from qa.pipeline.search.rerank import EvidenceReranker, Reranker
from qa.pipeline.search.retrievers import RetrieverModels, build_retriever


@dataclass(frozen=True)
class ModelClients:
    """The models a site has. ``cross_encoder`` loads the configured cross-encoder (None: none is)."""

    embedder: Embedder
    llm: LLM | None = None
    cross_encoder: Callable[[], Reranker] | None = None
    # Why no cross-encoder is available, for the substitution note.
    no_cross_encoder: str = "QA_RERANKER_MODEL is not set"
    # Encodes questions for the index's stored vectors when another model than ``embedder`` made
    # them (a corpus re-embedded with its own model). ``embedder`` still serves the stages that
    # compare texts they encode themselves (citations, verification), whose thresholds are its own.
    search_embedder: Embedder | None = None
    # Models a user named (QA_NLI_MODEL, QA_SPAN_READER_MODEL), loaded by the caller: the NLI
    # model labels claim support in place of the lexical verifier; the span reader marks the
    # exact answer in each answer sentence.
    nli: EntailmentModel | None = None
    span_reader: SpanReader | None = None
    # The taggers, the passage reader and the trust and turn-kind models, built once per process
    # from the site's settings (qa.clients.pipeline_models); None: the shipped ones
    # (``model_parts.default_models``), for benches and tests that have no site.
    models: PipelineModels | None = None

    @property
    def searcher(self) -> Embedder:
        return self.search_embedder or self.embedder


@dataclass(frozen=True)
class Pipeline:
    """A preset's parts, built once. ``answer_parts`` is None for a preset that does not retrieve."""

    config: PipelineConfig
    index: CorpusIndex
    embedder: Embedder
    llm: LLM | None
    reranker: Reranker | None
    answer_parts: AnswerParts | None
    substitutions: tuple[str, ...] = ()
    # The first-stage retriever the preset names (None: the preset does not retrieve).
    retriever: Retriever | None = None
    # ModelClients.search_embedder: encodes searches of an index made by another model than ``embedder``.
    search_embedder: Embedder | None = None
    # The reading models every stage that judges or tags reads (never loaded by a stage itself).
    models: PipelineModels = field(default_factory=default_models)

    def answerability(self, trust: TrustConfig | None = None) -> SignalAnswerability | LLMAnswerability:
        """The answerability judge of ``trust`` (the preset's by default), with this pipeline's LLM
        and models, skipping the verdict rules the preset switches off (``answer.rules_off``)."""
        chosen = trust if trust is not None else self.config.trust
        return answerability_judge(chosen, self.llm, self.models, self.config.answer.rules_off)


def build_pipeline(config: PipelineConfig, *, index: CorpusIndex, clients: ModelClients) -> Pipeline:
    # The stages encode the same sentences several times over; one memory per embedder serves them all.
    clients = replace(
        clients,
        embedder=RecentVectors.around(clients.embedder),
        search_embedder=clients.search_embedder and RecentVectors.around(clients.search_embedder),
    )
    if config.retrieval is not None and config.retrieval.chunker is not None:
        index = RechunkedIndex(index, config.retrieval.chunker)
    reranker, reranker_notes = _reranker(config, index, clients)
    answer_config, answer_notes = effective_answer_config(config.answer, clients.llm)
    answer_config = replace(answer_config, min_retrieval_confidence=config.min_retrieval_confidence)
    parts, retriever = None, None
    if config.retrieval is None:
        answer_notes = []  # answered by the LLM alone, or not at all: nothing stands in
    else:
        parts = build_answer_parts(answer_config, clients.embedder, clients.llm)
        parts, model_notes = _with_named_models(parts, clients, config)
        answer_notes = answer_notes + model_notes
        retriever = build_retriever(config.retrieval.retriever_spec, index, RetrieverModels(clients.searcher))
    return Pipeline(
        config=config,
        index=index,
        embedder=clients.embedder,
        llm=clients.llm,
        reranker=reranker,
        answer_parts=parts,
        substitutions=tuple(reranker_notes + answer_notes + _trust_notes(config, clients)),
        retriever=retriever,
        search_embedder=clients.search_embedder,
        models=_build_models(config, clients),
    )


def _trust_notes(config: PipelineConfig, clients: ModelClients) -> list[str]:
    trust = config.trust
    if trust is None or clients.llm is not None:
        return []
    notes = []
    if trust.llm_judge:
        notes.append("answerability: signals + LLM judge -> signals (no LLM configured)")
    if trust.llm_judge_relevance:
        notes.append("sentence relation: score + LLM judge -> score (no LLM configured)")
    if trust.llm_judge_claims and config.retrieval is not None:
        notes.append("claim support: verifier + LLM judge -> verifier (no LLM configured)")
    return notes


def _build_models(config: PipelineConfig, clients: ModelClients) -> PipelineModels:
    """The clients' models, with the turn-kind model a preset names in place of the site's (a
    bench's ablation: ``TurnsConfig.learned_model``)."""
    models = clients.models or default_models()
    if config.turns is not None and config.turns.learned_model:
        models = replace(models, turn_kind=load_turn_model(config.turns.learned_model))
    return models


def _reranker(
    config: PipelineConfig, index: CorpusIndex, clients: ModelClients
) -> tuple[Reranker | None, list[str]]:
    """The reranker a preset asks for; the evidence reranker (embedding model only) stands in for
    a cross-encoder when none is configured, since no cross-encoder weights install offline."""
    if config.reranker == "none":
        return None, []
    if config.reranker == "llm-pairwise":
        evidence = EvidenceReranker(index, clients.searcher)
        if clients.llm is None:
            return evidence, ["reranker: llm-pairwise -> evidence (no LLM configured)"]
        return LLMPairwiseReranker(clients.llm, inner=evidence), []
    if config.reranker == "cross-encoder":
        if clients.cross_encoder is not None:
            return clients.cross_encoder(), []
        note = f"reranker: cross-encoder -> evidence ({clients.no_cross_encoder})"
        return EvidenceReranker(index, clients.searcher), [note]
    return EvidenceReranker(index, clients.searcher), []


def _with_named_models(
    parts: AnswerParts, clients: ModelClients, config: PipelineConfig
) -> tuple[AnswerParts, list[str]]:
    """The answer parts with the user's named models in place; the notes say what replaced what,
    so the run names the model that labelled its sentences. A preset that asks for the LLM
    verifier keeps it: the NLI model replaces only the lexical one. The LLM judge of claim
    support (``TrustConfig.llm_judge_claims``) reads every verifier's verdicts."""
    verifier, notes = parts.verifier, []
    if clients.nli is not None and parts.config.verifier == "lexical":
        verifier = NLIVerifier(clients.nli, lexical=verifier)
        notes.append(f"verifier: lexical -> nli ({clients.nli.name})")
    judge = sentence_judge(config.trust, clients.llm, "claims")
    if judge is not None:
        verifier = JudgedVerifier(verifier, judge)
    # The span informs the trace and the answer card and decides nothing, so the answers are the
    # same with or without it.
    if clients.span_reader is not None:
        verifier = SpanReadingVerifier(verifier, clients.span_reader)
    return replace(parts, verifier=verifier), notes


def effective_answer_config(config: AnswerConfig, llm: LLM | None) -> tuple[AnswerConfig, list[str]]:
    """Replace LLM-only parts of the configuration when no LLM is configured."""
    if llm is not None:
        return config, []
    notes = []
    if config.generator == "llm":
        config = replace(config, generator="extractive", refuse_when_nothing_supported=True)
        notes.append("generator: llm -> extractive (no LLM configured)")
    if config.citation_strategy == "llm":
        config = replace(config, citation_strategy="embedding")
        notes.append("citations: llm -> embedding (no LLM configured)")
    if config.verifier == "llm":
        config = replace(config, verifier="lexical")
        notes.append("verifier: llm -> lexical (no LLM configured)")
    return config, notes
