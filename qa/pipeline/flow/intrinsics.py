"""The intrinsics on their own: what the REST API and the `intrinsic` command call.

Each function takes the inputs a client has (a question, an answer, a text
written elsewhere) and a built ``Pipeline`` (the preset's retrieval and
reranker over one corpus), and returns the same typed values the pipeline
itself produces when it answers, so an answer checked here is judged exactly
as ``default`` judges its own:

- ``assess_question``: retrieval and reranking, then answerability and each
  top passage's context relevance (``trust.before_generation``);
- ``cite_text``: per sentence of any text, the corpus sentences that support
  it (retrieved at sentence level, aligned by the embedding citer) and the
  lexical verifier's label, or ``no_claim`` for a sentence that asserts
  nothing checkable; a sentence whose figures, comparison direction or
  negation differ from its citation (qa.pipeline.checks.mismatch) is unsupported,
  its reason saying what differs;
- ``assess_answer``: ``cite_text`` over an answer plus the whole-answer check
  against the question (``TrustModels.check_answer``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from qa.pipeline.checks.answerability import AnswerabilityVerdict
from qa.pipeline.checks.confidence import AnswerCheck
from qa.pipeline.checks.judged_claims import JudgedVerifier
from qa.pipeline.checks.llm_judge import SentenceJudge
from qa.pipeline.checks.relevance import ContextJudgement, answer_relevance
from qa.pipeline.checks.trust import TrustConfig, before_generation, sentence_judge
from qa.pipeline.checks.verification import LexicalVerifier, Verdict, Verifier
from qa.pipeline.core.protocols import CorpusIndex, Embedder
from qa.pipeline.core.text import content_words, numbers, split_sentences, unique_sentences
from qa.pipeline.core.types import (
    PARTIAL,
    SUPPORTED,
    UNSUPPORTED,
    AnswerSentence,
    ScoredPassage,
    SourceSentence,
)
from qa.pipeline.drafting.citations import cite_by_embedding
from qa.pipeline.drafting.generation import DraftSentence
from qa.pipeline.flow.factory import Pipeline
from qa.pipeline.flow.run import PipelineRun
from qa.pipeline.flow.runner import retrieve_stage
from qa.pipeline.reading.questions import analyse_question
from qa.pipeline.search.retrieval import RetrievalConfig, retrieve

SentenceLabel = Literal["supported", "partial", "unsupported", "no_claim"]
NO_CLAIM: SentenceLabel = "no_claim"
SENTENCE_LABELS: tuple[SentenceLabel, ...] = (SUPPORTED, PARTIAL, UNSUPPORTED, NO_CLAIM)

# How many corpus sentences each retriever proposes per claim before the citer aligns it.
CITE_CANDIDATES = 20
_CITE_RETRIEVAL = RetrievalConfig(
    unit="sentence", method="hybrid", fusion="minmax", alpha=0.5, candidates=CITE_CANDIDATES, rerank_depth=0
)
# The label's band of risk: a supported sentence is always less risky than a partial one.
_RISK_BAND = {SUPPORTED: 0.0, PARTIAL: 1 / 3, UNSUPPORTED: 2 / 3}


@dataclass(frozen=True)
class SentenceSupport:
    """One sentence of a text and what in the corpus supports it.

    ``risk`` orders sentences for a reader's attention (0 = safest, 1 = most
    likely hallucinated): the label's third of [0, 1], placed within it by
    how weakly the cited text matches (content-word coverage and cosine).
    A heuristic ranking, not a calibrated probability.
    """

    index: int
    text: str
    label: SentenceLabel
    risk: float
    reason: str
    citations: tuple[SourceSentence, ...] = ()
    coverage: float | None = None
    similarity: float | None = None


@dataclass(frozen=True)
class TextSupport:
    sentences: tuple[SentenceSupport, ...]

    def count(self, label: SentenceLabel) -> int:
        return sum(s.label == label for s in self.sentences)

    @property
    def counts(self) -> dict[str, int]:
        return {label: self.count(label) for label in SENTENCE_LABELS}


def makes_claim(sentence: str) -> bool:
    """False for a sentence with nothing to check: a question, a greeting, a two-word aside."""
    if sentence.rstrip().endswith("?"):
        return False
    return bool(numbers(sentence)) or len(content_words(sentence)) >= 3


def support_risk(verdict: Verdict) -> float:
    if verdict.contradicted:  # the citation says otherwise: however close the words, the worst risk
        return 1.0
    matched = [v for v in (verdict.coverage, verdict.similarity) if v is not None]
    strength = min(max(sum(matched) / len(matched), 0.0), 1.0) if matched else 0.0
    return round(_RISK_BAND[verdict.label] + (1 - strength) / 3, 4)


def candidate_sentences(claim: str, index: CorpusIndex, embedder: Embedder) -> list[SourceSentence]:
    """The corpus sentences BM25 or dense search put near the claim, best first."""
    ranked = retrieve(claim, index, embedder, _CITE_RETRIEVAL).ranked
    return unique_sentences([hit.passage.sentences for hit in ranked])


def cite_text(
    text: str,
    index: CorpusIndex,
    embedder: Embedder,
    *,
    threshold: float = 0.5,
    max_citations: int = 2,
    search_embedder: Embedder | None = None,
    judge: SentenceJudge | None = None,
) -> TextSupport:
    """Per sentence of ``text``: its supporting corpus sentences and a support label.

    ``search_embedder`` encodes the searches when the index's vectors are another model's.
    ``judge``: the LLM judge of claim support (``judged_claims``), where the preset asks for it.
    """
    verifier: Verifier = LexicalVerifier(embedder)
    if judge is not None:
        verifier = JudgedVerifier(verifier, judge)
    results = []
    for number, sentence in enumerate(split_sentences(text)):
        if not makes_claim(sentence):
            results.append(SentenceSupport(number, sentence, NO_CLAIM, 0.0, "states nothing to check"))
            continue
        context = candidate_sentences(sentence, index, search_embedder or embedder)
        cited = (
            cite_by_embedding(
                [sentence], context, embedder, threshold=threshold, max_citations=max_citations
            )[0]
            if context
            else ()
        )
        if not cited:
            reason = "no corpus sentence is close enough to cite"
            results.append(SentenceSupport(number, sentence, UNSUPPORTED, 1.0, reason))
            continue
        [verdict] = verifier.verify("", [DraftSentence(sentence, cited)]).verdicts
        results.append(
            SentenceSupport(
                number,
                sentence,
                verdict.label,
                support_risk(verdict),
                verdict.reason,
                cited,
                verdict.coverage,
                verdict.similarity,
            )
        )
    return TextSupport(tuple(results))


@dataclass(frozen=True)
class QuestionAssessment:
    question: str
    verdict: AnswerabilityVerdict
    passages: tuple[ScoredPassage, ...]  # the head of the ranking that context relevance judged
    context: tuple[ContextJudgement, ...]  # one per passage, same order
    substitutions: tuple[str, ...] = ()  # parts of the preset that could not run here


def _trust_config(pipeline: Pipeline) -> TrustConfig:
    # A preset without intrinsics is still judged the way ``default`` judges.
    return pipeline.config.trust or TrustConfig()


def assess_question(pipeline: Pipeline, question: str) -> QuestionAssessment:
    run, retrieval = retrieve_stage(pipeline, PipelineRun(question=question, preset=pipeline.config.name))
    top_k = pipeline.config.retrieval.top_k if pipeline.config.retrieval else 0
    before = before_generation(
        question,
        retrieval.ranked,
        top_k,
        config=_trust_config(pipeline),
        llm=pipeline.llm,
        models=pipeline.models,
        reading=run.reading,
        rules_off=pipeline.config.answer.rules_off,
    )
    head = tuple(retrieval.ranked[:top_k])
    return QuestionAssessment(question, before.verdict, head, before.context, run.substitutions)


@dataclass(frozen=True)
class AnswerAssessment:
    question: QuestionAssessment
    support: TextSupport
    check: AnswerCheck


def assess_answer(pipeline: Pipeline, question: str, answer: str) -> AnswerAssessment:
    """Each answer sentence's support, and whether the answer as a whole addresses the question."""
    assessed = assess_question(pipeline, question)
    support = cite_text(
        answer,
        pipeline.index,
        pipeline.embedder,
        search_embedder=pipeline.search_embedder,
        judge=sentence_judge(pipeline.config.trust, pipeline.llm, "claims"),
    )
    sentences = [
        AnswerSentence(s.text, s.citations, s.label if s.label != NO_CLAIM else UNSUPPORTED)
        for s in support.sentences
    ]
    analysis = analyse_question(question)
    relevance = answer_relevance(
        question, sentences, pipeline.embedder, analysis=analysis, models=pipeline.models
    )
    check = pipeline.models.trust.check_answer(
        assessed.verdict.probability, relevance, overview=analysis.overview
    )
    return AnswerAssessment(assessed, support, check)
