"""The RAG intrinsics around generation: answerability and context relevance before it,
the answer check and confidence after it.

``before_generation`` decides whether to generate at all and which passages
generation may read; ``after_generation`` refuses an answer that does not
address the question and attaches the answer's calibrated confidence. The
runner calls both; bench/answerability.py calls the same functions, so what
it measures is what runs. The models come in as ``models`` (the ``Pipeline``'s, built by the
factory; None: ``default_models()``, the shipped files).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Literal

from qa.pipeline.checks.answerability import (
    UNDERSPECIFIED,
    AnswerabilityVerdict,
    LLMAnswerability,
    SignalAnswerability,
    judged_model,
)
from qa.pipeline.checks.confidence import AnswerCheck, Confidence, TrustModels
from qa.pipeline.checks.llm_judge import PassageJudge, SentenceJudge
from qa.pipeline.checks.relevance import ContextJudgement, answer_relevance, judge_context, relevant_passages
from qa.pipeline.core.model_parts import PipelineModels, default_models
from qa.pipeline.core.protocols import LLM, Embedder
from qa.pipeline.core.types import (
    PARTIAL,
    SUPPORTED,
    Answer,
    ScoredPassage,
)
from qa.pipeline.reading.questions import analyse_question

if TYPE_CHECKING:
    from qa.pipeline.dialogue.question_reading import QuestionReading

AnswerabilityJudge = Literal["signals", "llm"]


@dataclass(frozen=True)
class TrustConfig:
    """Which intrinsics run. ``answerability_threshold`` overrides the stored model's threshold."""

    answerability: AnswerabilityJudge = "signals"
    filter_context: bool = True
    check_answer: bool = True
    answerability_threshold: float | None = None
    # Where an LLM is configured, the signal judge's model also reads the LLM's P(yes) that each of
    # the top ``llm_judge_passages`` passages answers the question (qa.pipeline.checks.llm_judge),
    # with the answerability model fitted with it (answerability_model.json, bench/llm_judge.py).
    llm_judge: bool = False
    llm_judge_passages: int = 2
    # The same judge of each cited answer sentence: does it answer the question (an input of its
    # answers / background / off-the-question label, qa.pipeline.checks.relation), and does its
    # cited text support it (below the veto it is not labelled supported, qa.pipeline.checks.judged_claims).
    llm_judge_relevance: bool = False
    llm_judge_claims: bool = False


@dataclass(frozen=True)
class BeforeGeneration:
    verdict: AnswerabilityVerdict
    context: tuple[ContextJudgement, ...]
    passages: tuple[ScoredPassage, ...]  # what generation may read: the passages not judged irrelevant

    def to_trace(self) -> dict:
        return {
            "answerability": self.verdict.to_trace(),
            "context_relevance": [j.to_trace() for j in self.context],
        }


@dataclass(frozen=True)
class AfterGeneration:
    answer: Answer
    check: AnswerCheck | None
    confidence: Confidence

    def to_trace(self) -> dict:
        return {
            "answer_check": self.check.to_trace() if self.check else None,
            "confidence": self.confidence.to_trace(),
        }


def answerability_judge(
    config: TrustConfig, llm: LLM | None, models: PipelineModels | None = None, rules_off: Iterable[str] = ()
) -> SignalAnswerability | LLMAnswerability:
    """``rules_off``: the preset's ``answer.rules_off`` (the verdict rules named there are skipped)."""
    signals = SignalAnswerability(
        threshold=config.answerability_threshold, models=models, rules_off=rules_off
    )
    if config.answerability == "llm" and llm is not None:
        return LLMAnswerability(llm, fallback=signals)
    judged = judged_model() if config.llm_judge and llm is not None else None
    if judged is not None:
        judge = PassageJudge(llm, passages=config.llm_judge_passages)
        return SignalAnswerability(
            judged,
            threshold=config.answerability_threshold,
            models=models,
            llm_judge=judge,
            rules_off=rules_off,
        )
    return signals


def sentence_judge(
    config: TrustConfig | None, llm: LLM | None, kind: Literal["relevance", "claims"]
) -> SentenceJudge | None:
    """The LLM judge of answer sentences where the preset switches ``kind`` on and an LLM is
    configured; None otherwise (no judge call is made without an LLM)."""
    if config is None or llm is None:
        return None
    wanted = config.llm_judge_relevance if kind == "relevance" else config.llm_judge_claims
    return SentenceJudge(llm) if wanted else None


def before_generation(
    question: str,
    ranked: Sequence[ScoredPassage],
    answer_passages: int,
    *,
    config: TrustConfig,
    llm: LLM | None = None,
    models: PipelineModels | None = None,
    reading: QuestionReading | None = None,
    rules_off: Iterable[str] = (),
) -> BeforeGeneration:
    """``reading``: the question as read once (``PipelineRun.reading``), read again where it read
    another text. ``rules_off``: the preset's ``answer.rules_off``."""
    verdict = answerability_judge(config, llm, models, rules_off).judge(question, ranked, reading=reading)
    head = tuple(ranked[:answer_passages])
    context = judge_context(question, head)
    passages = relevant_passages(head, context) if config.filter_context else head
    return BeforeGeneration(verdict, context, passages)


def refusal_confidence(verdict: AnswerabilityVerdict, models: PipelineModels | None = None) -> Confidence:
    """That refusing before generation is right; not applicable for a question too vague to judge."""
    if verdict.kind == UNDERSPECIFIED:
        return TrustModels.not_applicable("the question was not judged against the corpus")
    return (models or default_models()).trust.of_refusal(verdict.probability, by_rule=verdict.by_rule)


def refusal_for(
    verdict: AnswerabilityVerdict, documents: Sequence[str], models: PipelineModels | None = None
) -> Answer:
    confidence = refusal_confidence(verdict, models)
    note = f"Refused ({verdict.kind}): {verdict.plain_reason}."
    if confidence.probability is None:
        note += " Confidence: not applicable (the question was not judged against the corpus)."
    return Answer.refusal(note, documents, confidence=confidence.probability)


def after_generation(
    question: str,
    answer: Answer,
    verdict: AnswerabilityVerdict,
    *,
    config: TrustConfig,
    embedder: Embedder,
    models: PipelineModels | None = None,
    reading: QuestionReading | None = None,
) -> AfterGeneration:
    """Refuse an answer that does not address the question (or, where ``config.check_answer`` is off,
    mark it doubted); give every answer its confidence. ``reading``: the question as read once, used
    when it read this very ``question`` (an answer to one part is checked against that part)."""
    models = models or default_models()
    if answer.refused:
        confidence = refusal_confidence(verdict, models)
        return AfterGeneration(replace(answer, confidence=confidence.probability), None, confidence)
    if reading is not None and reading.question == question:
        analysis = reading.analysis()
    else:
        analysis = analyse_question(question)
    relevance = answer_relevance(question, answer.sentences, embedder, analysis=analysis, models=models)
    check = models.trust.check_answer(verdict.probability, relevance, overview=analysis.overview)
    if config.check_answer and not check.addresses_question:
        confidence = models.trust.of_refusal(check.probability)
        refused = Answer.refusal(
            f"Refused: {check.reason}.", answer.retrieved_documents, confidence=confidence.probability
        )
        return AfterGeneration(refused, check, confidence)
    signals = asdict(verdict.signals) if verdict.signals is not None else None
    confidence = models.trust.of_answer(check, [s.support for s in answer.sentences], signals)
    if not check.addresses_question:
        answer = doubted(answer, check.reason)
    return AfterGeneration(replace(answer, confidence=confidence.probability), check, confidence)


def doubted(answer: Answer, reason: str) -> Answer:
    """An answer kept although the answer check says it does not address the question (the check
    was told not to refuse): no sentence of it reads "supported", and its note says why.

    "Supported" tells an analyst that the evidence backs the sentence and that the
    sentence answers what was asked; here the second half is in doubt.
    """
    sentences = tuple(
        replace(sentence, support=PARTIAL) if sentence.support == SUPPORTED else sentence
        for sentence in answer.sentences
    )
    note = f"The answer check doubts that this answers the question ({reason}): no sentence reads supported."
    return replace(answer, sentences=sentences, note=f"{answer.note} {note}".strip())
