"""Pipeline presets as data: every stage parameter a run uses, by name.

``bm25`` .. ``verify`` reproduce the report's baseline and extensions 1-6
(../shared/data/analyst-bench/SOURCE.md); ``default`` is our best
configuration, chosen by bench/retrieval_quality.py and the evaluation
harness. A run stores ``to_dict()`` of its preset, so results stay
reproducible when the defaults change.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Literal

from qa.pipeline.checks.trust import TrustConfig
from qa.pipeline.config.answering_config import AnswerConfig
from qa.pipeline.dialogue.turns import TurnsConfig
from qa.pipeline.reading.dates import DatePreference
from qa.pipeline.search.retrieval import RetrievalConfig

# llm-pairwise: the evidence reranker, then an LLM tournament over its top 5 (qa.pipeline.search.pairwise).
RerankerKind = Literal["none", "evidence", "cross-encoder", "llm-pairwise"]


@dataclass(frozen=True)
class PipelineConfig:
    name: str
    description: str
    retrieval: RetrievalConfig | None  # None: no retrieval at all (llm-only)
    reranker: RerankerKind = "none"
    answer: AnswerConfig = field(default_factory=AnswerConfig)
    # Refuse before generating when the retrieval confidence (runner.retrieval_confidence)
    # is below this; None turns the check off.
    min_retrieval_confidence: float | None = None
    # Answerability, context relevance, the answer check and confidence (qa.pipeline.checks.trust);
    # None: the report's presets run without them.
    trust: TrustConfig | None = None
    # Rewrite a follow-up to stand alone with the conversation's earlier turns before retrieval
    # (runner.rewrite_question: the LLM when one is configured, else conversation memory,
    # qa.pipeline.dialogue.conversation). False searches the follow-up as it was asked.
    rewrite: bool = True
    # A team preset or an ask request's changes (qa.pipeline.config.parameters): the built-in preset it
    # starts from, and the parameters set on top of it, so a run says what it changed.
    base: str = ""
    parameters: dict[str, object] = field(default_factory=dict)
    # Clarifying questions and partial answers (qa.pipeline.dialogue.turns); None: answer or refuse only.
    turns: TurnsConfig | None = None
    # Pseudo-relevance feedback: retrieve again with this many words the best passages share
    # added to the question (qa.pipeline.search.expansion); 0 is off.
    expansion: int = 0
    # Split a multi-part question into sub-questions, each answered as a question of its own with
    # this preset less the split, then combine their answers (qa.pipeline.dialogue.decompose, .combine).
    decompose: bool = False
    # A question naming a date or period moves passages of documents published then up to this many
    # places up the reranked ranking (qa.pipeline.reading.dates.prefer_period); 0 is off.
    date_weight: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> PipelineConfig:
        data = dict(data)
        retrieval = data.pop("retrieval")
        answer = data.pop("answer")
        known_answer = {k: v for k, v in answer.items() if k in AnswerConfig.__dataclass_fields__}
        if retrieval is not None and data.get("answer_passages"):
            # Stored before top_k became the knob, when answering read ``answer_passages`` passages.
            retrieval = {**retrieval, "top_k": data["answer_passages"]}
        trust = data.pop("trust", None)
        turns = data.pop("turns", None)
        return cls(
            retrieval=RetrievalConfig(**retrieval) if retrieval is not None else None,
            answer=AnswerConfig(**known_answer),
            trust=TrustConfig(**{k: v for k, v in trust.items() if k in TrustConfig.__dataclass_fields__})
            if trust is not None
            else None,
            turns=TurnsConfig(**{k: v for k, v in turns.items() if k in TurnsConfig.__dataclass_fields__})
            if turns is not None
            else None,
            **{k: v for k, v in data.items() if k in cls.__dataclass_fields__},
        )


_BM25_DOCUMENTS = RetrievalConfig(unit="document", method="bm25", candidates=20, rerank_depth=0, top_k=1)
_BM25_DOCUMENTS_RERANKED = replace(_BM25_DOCUMENTS, rerank_depth=20)  # extensions 2 and 3
_HYBRID_CHUNKS = RetrievalConfig(  # extensions 5 and 6
    unit="chunk", method="hybrid", fusion="minmax", alpha=0.5, candidates=50, rerank_depth=30, top_k=3
)
_LLM_ANSWER = AnswerConfig(
    generator="llm",
    citation_strategy="overlap",
    verifier="lexical",
    max_attempts=1,
    refuse_when_nothing_supported=False,
    detect_disagreement=False,
)
# Extensions 3-6: the LLM also picks each answer sentence's citations.
_LLM_CITED_ANSWER = replace(_LLM_ANSWER, citation_strategy="llm", replace_generated_citations=True)

PRESETS: dict[str, PipelineConfig] = {}


def _register(config: PipelineConfig) -> None:
    PRESETS[config.name] = config


_register(
    PipelineConfig(
        name="bm25",
        description="Report baseline: BM25 over whole documents; the top document's 3 sentences that overlap "
        "the question most are the answer. No generation.",
        retrieval=_BM25_DOCUMENTS,
        answer=AnswerConfig(
            generator="overlap",
            citation_strategy="overlap",
            verifier="lexical",
            max_attempts=1,
            refuse_when_nothing_supported=False,
            detect_disagreement=False,
            extractive_min_sentences=3,
            extractive_max_sentences=3,
        ),
    )
)
_register(
    PipelineConfig(
        name="llm-only",
        description="Report 'LLM only': the LLM answers from its own knowledge, no retrieval, no citations.",
        retrieval=None,
        answer=replace(_LLM_ANSWER, citation_strategy="none"),
    )
)
_register(
    PipelineConfig(
        name="rag",
        description="Report ext. 1: BM25 top document as context for the LLM; word-overlap citations.",
        retrieval=_BM25_DOCUMENTS,
        answer=_LLM_ANSWER,
    )
)
_register(
    PipelineConfig(
        name="rerank",
        description="Report ext. 2: BM25 documents reranked by a cross-encoder (QA_RERANKER_MODEL; "
        "without one, the evidence reranker stands in and the trace says so).",
        retrieval=_BM25_DOCUMENTS_RERANKED,
        reranker="cross-encoder",
        answer=_LLM_ANSWER,
    )
)
_register(
    PipelineConfig(
        name="llm-cite",
        description="Report ext. 3: as rerank, with citations extracted by the LLM.",
        retrieval=_BM25_DOCUMENTS_RERANKED,
        reranker="cross-encoder",
        answer=_LLM_CITED_ANSWER,
    )
)
_register(
    PipelineConfig(
        name="hybrid",
        description="Report ext. 4: BM25 + dense documents fused by min-max interpolation (alpha 0.5), "
        "reranked.",
        retrieval=RetrievalConfig(
            unit="document",
            method="hybrid",
            fusion="minmax",
            alpha=0.5,
            candidates=20,
            rerank_depth=20,
            top_k=1,
        ),
        reranker="cross-encoder",
        answer=_LLM_CITED_ANSWER,
    )
)
_register(
    PipelineConfig(
        name="chunk",
        description="Report ext. 5: hybrid retrieval over 8-sentence chunks (overlap 2); the best chunk "
        "is the context.",
        retrieval=replace(_HYBRID_CHUNKS, top_k=1),
        reranker="cross-encoder",
        answer=_LLM_CITED_ANSWER,
    )
)
_register(
    PipelineConfig(
        name="verify",
        description="Report ext. 6: chunk retrieval, LLM answer and citations, LLM verification; on failure "
        "regenerate from the next chunk, up to 3 attempts.",
        retrieval=_HYBRID_CHUNKS,
        reranker="cross-encoder",
        answer=replace(_LLM_CITED_ANSWER, verifier="llm", max_attempts=3, refuse_when_nothing_supported=True),
    )
)
# The policy-RAG study's three configurations: no retrieval, dense top-3 chunks as the
# LLM's context, and dense top-10 reranked by a cross-encoder down to 3.
_register(
    PipelineConfig(
        name="vanilla",
        description="Policy-RAG 'vanilla': the LLM answers alone, no retrieval, nothing cited (as llm-only).",
        retrieval=None,
        answer=replace(_LLM_ANSWER, citation_strategy="none"),
    )
)
_DENSE_CHUNKS = RetrievalConfig(unit="chunk", method="dense", candidates=3, rerank_depth=0, top_k=3)
_THREE_CHUNK_LLM_ANSWER = replace(_LLM_ANSWER, passages_per_attempt=3)
_register(
    PipelineConfig(
        name="basic",
        description="Policy-RAG 'basic': the 3 chunks nearest the question (MiniLM cosine) are the LLM's "
        "context; word-overlap citations.",
        retrieval=_DENSE_CHUNKS,
        answer=_THREE_CHUNK_LLM_ANSWER,
    )
)
_register(
    PipelineConfig(
        name="advanced",
        description="Policy-RAG 'advanced': 10 dense chunks reranked by a cross-encoder (QA_RERANKER_MODEL; "
        "without one, the evidence reranker stands in and the trace says so); the best 3 are the context.",
        retrieval=replace(_DENSE_CHUNKS, candidates=10, rerank_depth=10),
        reranker="cross-encoder",
        answer=_THREE_CHUNK_LLM_ANSWER,
    )
)
_register(
    PipelineConfig(
        name="default",
        description="Our best, no LLM needed: hybrid chunk retrieval, evidence reranking, answerability and "
        "context relevance, extractive answer with exact citations, lexical verification with retries, "
        "an answer check against the question, confidence, disagreement checks.",
        retrieval=RetrievalConfig(
            unit="chunk", method="hybrid", fusion="minmax", alpha=0.5, candidates=50, rerank_depth=50, top_k=6
        ),
        reranker="evidence",
        answer=AnswerConfig(
            generator="extractive",
            citation_strategy="embedding",
            verifier="lexical",
            max_attempts=3,
            # Three chunks per attempt: a multi-part question's amounts often sit in
            # different chunks (analyst-bench train q003: S7 and S36 of one article).
            passages_per_attempt=3,
            # ... but the answer comes from the top-ranked document: sentences from the
            # others cost precision (train citation F1 0.447 -> 0.485, CLAPNQ 0.526 -> 0.531).
            extractive_focus_document=True,
            # ... and a question about 2011 is not answered with what happened in 1970 (train q005,
            # q006: a sentence naming only other years than the question's main clause is left out).
            extractive_same_time=True,
            # ... and an answer is not padded to two sentences with one under half as relevant as its
            # best (train citation F1 0.537 -> 0.567 on the full corpus: q009, q017 exact).
            extractive_padding_floor=0.5,
            # ... and each part of a question in parts, and each part asking when, brings in its own
            # sentence ("When did the floods happen and how many ...?" lacked "Tuesday").
            extractive_question_shape=True,
            # ... and the other sentences come from the best one's section: "What uid does the
            # postgres user have?" was answered with the uids of three other users' sections (genre
            # set citation F1 +0.055 [+0.007, +0.117]; no other tuning set has headings: docs/answering.md).
            extractive_focus_section=True,
            # ... and an answer from under a heading holds at most three: a section of an FAQ or a
            # README is about one thing and one of its sentences usually answers (genre set citation
            # F1 +0.014 [+0.002, +0.029]; the sets without headings unchanged: docs/answering.md).
            extractive_section_max_sentences=3,
        ),
        # Refusal is decided by the intrinsics (qa.pipeline.checks.trust): answerability from several signals
        # and a logistic model before generation (it replaces the single 0.45 cosine threshold), the
        # passages judged irrelevant kept from generation, and the answer checked against the question
        # after it. Models and thresholds: qa/pipeline/checks/answerability_model.json
        # (bench/answerability.py).
        trust=TrustConfig(),
        # An underspecified turn gets a clarifying question, a partly covered one a partial answer
        # naming what is missing (tuned on MTRAG-UN train, bench/mtrag_un.py).
        turns=TurnsConfig(),
        # "mid-2022", "in July 2022": documents published then first (analyst-bench train, README).
        date_weight=DatePreference().rank_bonus,
    )
)

_register(
    replace(
        PRESETS["default"],
        name="pairwise",
        description="default, with an LLM tournament over the evidence reranker's top 5 passages (each pair "
        "judged once: 10 LLM calls per question); without an LLM the evidence reranker alone, and the trace "
        "says so.",
        reranker="llm-pairwise",
    )
)

_register(
    replace(
        PRESETS["default"],
        name="agentic",
        description="default, for questions that ask several things: the question is split into "
        "sub-questions (by the LLM when one is configured, else by rules), each retrieved and answered "
        "with citations as a question of its own, then combined into one answer; parts the sources do "
        "not support are refused by name and the answer is partial.",
        decompose=True,
    )
)

_register(
    replace(
        PRESETS["default"],
        name="careful",
        description="default, with the LLM asked of each of the top 2 passages whether it holds the answer "
        "(P(yes) from token log-probabilities) as an input of the answerability model fitted with it, "
        "and of each cited answer sentence whether it is on the question asked, in its label; "
        "without an LLM default's signals alone, and the trace says so.",
        # CLAPNQ-dev and MTRAG-UN train, 5-fold, 3 fold splits (bench/llm_judge.py, docs/readers.md):
        # every split's AUC and unanswerable F1 improve on both sets with the local 1.5B model. The
        # sentence relevance judge: AUC 0.700 -> 0.794 on genre + CLAPNQ-dev answer sentences, paired
        # bootstrap [+0.061, +0.129] (bench/llm_judge_sentences.py); the claim judge's gain on
        # extractive answers is one case, so it stays off.
        trust=replace(PRESETS["default"].trust, llm_judge=True, llm_judge_relevance=True),
    )
)

# The four flows (issue 11, item 7): `default` with the conversation rewrite and the
# answerability intrinsics each switched on or off, so `evaluate --preset flows` measures what each
# adds (on multi-turn benchmarks such as MTRAG-UN the rewrite matters; on single questions it is a
# no-op). flow-rewrite-answerability is `default` itself under another name.
_DEFAULT = PRESETS["default"]
FLOW_PRESETS: tuple[str, ...] = (
    "flow-none",
    "flow-rewrite",
    "flow-answerability",
    "flow-rewrite-answerability",
)
for _name, _rewrite, _answerability in (
    ("flow-none", False, False),
    ("flow-rewrite", True, False),
    ("flow-answerability", False, True),
    ("flow-rewrite-answerability", True, True),
):
    _register(
        replace(
            _DEFAULT,
            name=_name,
            description=f"Flow: default's retrieval and answering; follow-ups "
            f"{'rewritten to stand alone' if _rewrite else 'searched as asked'}; "
            + (
                "answerability, context relevance, answer check and confidence."
                if _answerability
                else "no answerability gate (answers whenever an answer is supported)."
            ),
            rewrite=_rewrite,
            trust=_DEFAULT.trust if _answerability else None,
        )
    )

PRESET_NAMES: tuple[str, ...] = tuple(PRESETS)


def get_preset(name: str) -> PipelineConfig:
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown preset {name!r}; choose one of {', '.join(PRESET_NAMES)}") from None
