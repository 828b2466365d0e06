"""After the last attempt: the answer checked against the question, then the ``after`` phase of the
reply rules (qa.pipeline.checks.reply_rules): the answer check's refusal, the doubted guess at a
follow-up's reference (a question back), or an answer made partial; then each answer sentence's
relation to the question.

``stages`` calls ``checked`` when its attempts end (and when a rule answers before any attempt);
the clarifying reply is shared with it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from qa.pipeline.checks import reply_rules
from qa.pipeline.checks.answerability import ANSWERABLE, PARTIAL_ANSWER, UNDERSPECIFIED
from qa.pipeline.checks.relation import with_relations
from qa.pipeline.checks.trust import after_generation, sentence_judge
from qa.pipeline.core.types import Answer, ScoredPassage
from qa.pipeline.dialogue import gaps, turns
from qa.pipeline.flow.answering import Answered, ranked_documents
from qa.pipeline.flow.factory import Pipeline
from qa.pipeline.flow.run import AnsweringStep, PipelineRun


def checked(
    pipeline: Pipeline, run: PipelineRun, ranked: Sequence[ScoredPassage], answered: Answered
) -> PipelineRun:
    """The run with its answer: every retrieved document listed, the answer checked (presets with
    trust) against the part of the question the sources cover, and made partial when the
    sources leave a part out."""
    run = run.timed(**answered.timings)
    answer, step = replace(answered.answer, retrieved_documents=ranked_documents(ranked)), answered.step
    missing = run.progress.missing if run.progress is not None else ()
    question = run.standalone or run.question
    trust = pipeline.config.trust
    verdict = run.trust.answerability if run.trust is not None else None
    check = None
    if trust is not None and verdict is not None:
        clock = time.perf_counter()
        covered = gaps.without_words(question, missing) if missing else question
        if run.turn_kind is not None and run.turn_kind.kind == ANSWERABLE:
            # The turn-kind model already weighed answerability with the rest and said answer; the
            # answer check's refusal, chosen for single questions, refused 7 answerable, partial or
            # underspecified follow-ups of MTRAG-UN train for 5 unanswerable ones (bench/turn_kinds.py
            # --check: nested CV refusal F1 0.504 with it, 0.573 without). It still gives confidence.
            trust = replace(trust, check_answer=False)
        if verdict.kind == PARTIAL_ANSWER and verdict.by_rule and covered != question:
            # A rule's partial verdict caps the whole question's p(answerable) at 0.05, which the
            # answer check read as "unanswerable" and refused every such answer ("How many staff ...
            # and how many cruise ships ...?"): the answer is checked against its own part's verdict.
            verdict = pipeline.answerability(trust).judge(covered, ranked)
        checking = trust
        if trust.check_answer:
            # The answer check labels; whether a failed check refuses is the answer_check rule's call.
            checking = replace(trust, check_answer=False)
        after = after_generation(
            covered,
            answer,
            verdict,
            config=checking,
            embedder=pipeline.embedder,
            models=pipeline.models,
            reading=run.reading,
        )
        run = run.timed(answer_check=time.perf_counter() - clock)
        run = replace(run, trust=replace(run.trust, answer_check=after.check, confidence=after.confidence))
        check, answer = after.check, after.answer
    e = reply_rules.LazyEvidence(
        check_refusal=lambda: check_refusal(pipeline, trust, check, answer),
        doubted_guess=lambda: doubted_guess(pipeline, run, check, answer, ranked),
        missing=lambda: missing if not answer.refused else (),
    )
    decision = reply_rules.decide("after", e, pipeline.config.answer.rules_off)
    if decision is not None and decision.rule == "answer_check":
        refusal, confidence = decision.detail
        run = replace(run, trust=replace(run.trust, confidence=confidence))
        step = replace(step, outcome="refused", note=refusal.note)
        answer = refusal
    elif decision is not None and decision.kind == "ask_back":
        return replace(clarified(*decision.detail), progress=None)
    elif decision is not None:
        answer = gaps.partial_answer(answer, decision.detail, question)
    if pipeline.embedder is not None:
        judge = sentence_judge(pipeline.config.trust, pipeline.llm, "relevance")
        answer = with_relations(question, answer, pipeline.embedder, judge=judge)
    return replace(run, answering=step, answer=answer, progress=None)


def doubted_guess(
    pipeline: Pipeline, run: PipelineRun, check, answer: Answer, ranked: Sequence[ScoredPassage]
) -> tuple[PipelineRun, turns.Clarification, tuple[str, ...]] | None:
    """A question back instead of an answer the answer check says misses the question, when the
    question as searched rests on the rewrite's guess at a pronoun or demonstrative ("How does it
    affect the cell?", "it" read as ATP): the doubt is about what the turn refers to, which the
    asker can settle ("By 'it', do you mean ATP, or something else?"), not about the sources.

    On MTRAG-UN train it asks back 2 underspecified turns kept as answers before (9 -> 11 of 13)
    and 1 answerable one ("Isn't it for a boat ...?", "it" read as Triumph), and refuses nothing
    differently (``python -m bench.mtrag_un --split train``)."""
    kinds, turn = pipeline.config.turns, run.conversation
    if (
        check is None
        or check.addresses_question
        or answer.refused
        or kinds is None
        or not kinds.clarify
        or turn is None
        or turn.method != "resolved"
        or not turn.resolved
    ):
        return None
    clarify = turns.clarifying_question(run.question, turn, ranked, models=pipeline.models)
    why = f"the answer check doubts the answer to the turn as read ({check.reason})"
    if run.turn_kind is not None:
        # The trace shows what decided: the check after the answer, over the model's "answer".
        reason = f"{why} (after answering; the model alone: {run.turn_kind.reason})"
        run = replace(run, turn_kind=replace(run.turn_kind, kind=UNDERSPECIFIED, reason=reason))
    return run, replace(clarify, why=why), ranked_documents(ranked)


def check_refusal(pipeline: Pipeline, trust, check, answer: Answer):
    """The refusal (and its confidence) of an answer the answer check says misses the question, where
    the preset's check refuses (``trust.check_answer``); None otherwise."""
    if trust is None or not trust.check_answer or check is None or check.addresses_question or answer.refused:
        return None
    confidence = pipeline.models.trust.of_refusal(check.probability)
    refusal = Answer.refusal(
        f"Refused: {check.plain_reason}.", answer.retrieved_documents, confidence=confidence.probability
    )
    return refusal, confidence


def clarified(
    run: PipelineRun, clarify: turns.Clarification, documents, *, learned: bool = False
) -> PipelineRun:
    answer = turns.clarifying_answer(clarify, documents, learned=learned)
    return replace(
        run, answering=AnsweringStep(outcome="clarifying question", note=answer.note), answer=answer
    )
