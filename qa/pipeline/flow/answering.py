"""Generate, cite and verify an answer, retrying on the next-ranked passages.

``answer_from_ranking`` runs the answering stage with parts built once
(``answer_parts.build_answer_parts``, or ``qa.pipeline.flow.factory.build_pipeline``);
``generate_verified_answer`` builds them from a config first. Both return the
answer together with the stage's record (``run.AnsweringStep``): each attempt
is a frozen ``run.Attempt`` made where the attempt runs, so there is no
separate trace bookkeeping to keep in step. Neither raises on bad model output
(that is just a failed attempt) but both let ``LLMError`` through: the client
has already retried transient failures, so the question's stage fails with
its message (Celery tasks do not retry).

Composing decides no reply: whether to refuse is the reply rules' call
(``qa.pipeline.checks.reply_rules``), asked here in three places: ``before`` any attempt
(``weak_retrieval``, on the unstaged path), on each ``draft`` (``generate_attempt``: what the
generator found) and once the attempts are ``composed`` (``conclude``, which then only
assembles the reply the rules decided). The one refusal made here is of a question no attempt
drafted any sentence for: there is nothing else to show.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from qa.pipeline.checks import reply_rules
from qa.pipeline.checks.claims import ClaimConflict, find_claim_conflicts
from qa.pipeline.checks.verification import (
    Conflict,
    VerificationResult,
    checked_for_mismatch,
    find_conflicts,
)
from qa.pipeline.config.answering_config import AnswerConfig
from qa.pipeline.core.protocols import LLM, Embedder
from qa.pipeline.core.types import (
    PARTIAL,
    SUPPORTED,
    UNSUPPORTED,
    Answer,
    AnswerSentence,
    Passage,
    ScoredPassage,
    SourceSentence,
)
from qa.pipeline.drafting.citations import CitationResult
from qa.pipeline.drafting.generation import (
    Draft,
)
from qa.pipeline.flow.answer_parts import AnswerParts, build_answer_parts
from qa.pipeline.flow.run import (
    AnsweringOutcome,
    AnsweringStep,
    Attempt,
    CitationRecord,
    ConflictRecord,
    GenerationRecord,
    Message,
    PendingAttempt,
    TracedSentence,
    VerificationRecord,
)
from qa.pipeline.reading.subjects import documents_on_subject

__all__ = ["AnswerConfig", "Answered", "answer_from_ranking", "generate_verified_answer"]

MAX_CONFLICTS = 2  # find_conflicts' own default: more would crowd the answer
ANSWERING_STAGES = ("generation", "citations", "verification", "disagreement")


# --- answering ---------------------------------------------------------------------


@dataclass(frozen=True)
class Answered:
    """The answering stage's result: the answer, its record, and seconds per answering stage."""

    answer: Answer
    step: AnsweringStep
    timings: dict[str, float]


def generate_verified_answer(
    question: str,
    ranked: Sequence[ScoredPassage],
    *,
    config: AnswerConfig = AnswerConfig(),  # noqa: B008 - frozen, safe to share
    embedder: Embedder,
    llm: LLM | None = None,
    retrieval_confidence: float | None = None,
) -> Answered:
    """``answer_from_ranking`` with parts built from ``config``.

    An early refusal (nothing retrieved, confidence too low) needs no parts, so
    a preset that wants an LLM only fails for want of one when it would use it.
    """
    early = _decided_before(ranked, config, retrieval_confidence)
    if early is not None:
        return early
    parts = build_answer_parts(config, embedder, llm)
    return answer_from_ranking(question, ranked, parts=parts, retrieval_confidence=retrieval_confidence)


def answer_from_ranking(
    question: str,
    ranked: Sequence[ScoredPassage],
    *,
    parts: AnswerParts,
    retrieval_confidence: float | None = None,
) -> Answered:
    """Answer from ``ranked`` (best first), verifying each attempt.

    Attempt n uses passages [n*k, (n+1)*k) with k = ``passages_per_attempt``.
    The first attempt whose sentences are all supported is returned verified;
    otherwise the attempt with the most supported sentences is returned with
    ``verified=False`` and its labels, or a refusal if none has any (where the
    ``nothing_supported`` rule is on). ``qa.pipeline.flow.stages`` runs the same
    rounds one stage at a time, with the rest of the reply rules before and after.
    """
    early = _decided_before(ranked, parts.config, retrieval_confidence)
    if early is not None:
        return early
    attempts, drafts, chosen = _attempts(question, ranked, parts)
    return conclude(question, ranked, parts, attempts, drafts, chosen, retrieval_confidence)


def early_refusal(
    ranked: Sequence[ScoredPassage], config: AnswerConfig, retrieval_confidence: float | None
) -> Answered | None:
    """The ``weak_retrieval`` rule's evidence: the refusal it gives before any attempt (nothing
    retrieved, confidence too low), or None."""
    early = _early_refusal(ranked, config, retrieval_confidence)
    if early is None:
        return None
    return _answered(early, "refused", config, retrieval_confidence, (), (), _no_timings())


def _decided_before(
    ranked: Sequence[ScoredPassage], config: AnswerConfig, retrieval_confidence: float | None
) -> Answered | None:
    """The reply the rules decide before any attempt on the unstaged path, where the only evidence
    is retrieval's (the stages give the rest); None: go on answering."""
    evidence = reply_rules.LazyEvidence(
        early_refusal=lambda: early_refusal(ranked, config, retrieval_confidence)
    )
    decision = reply_rules.decide("before", evidence, config.rules_off)
    return decision.detail if decision is not None else None


def conclude(
    question: str,
    ranked: Sequence[ScoredPassage],
    parts: AnswerParts,
    attempts: Sequence[Attempt],
    drafts: Sequence[tuple[AnswerSentence, ...]],
    chosen: tuple[AnswerSentence, ...] | None,
    retrieval_confidence: float | None,
) -> Answered:
    """The answer once the attempts are over: ``chosen`` is the verified one (None: none verified),
    ``drafts`` every answer that reached verification.

    It assembles the reply the rules decided: the refusal of a draft a ``draft`` rule declined
    (when that ended the attempts), or of the answer a ``composed`` rule refuses; else the answer,
    with the sources' disagreement. With nothing drafted it refuses, there being nothing to show."""
    config = parts.config
    attempts = tuple(attempts)
    timings = _no_timings()
    documents = ranked_documents(ranked)
    for stage in ("generation", "citations", "verification"):
        timings[stage] = sum(a.timings.get(stage, 0.0) for a in attempts)

    def refused(note: str) -> Answered:
        return _answered(
            Answer.refusal(note, documents), "refused", config, retrieval_confidence, attempts, (), timings
        )

    if attempts and attempts_over(attempts[-1], config) and not attempts[-1].verified:
        # A rule of the "draft" phase declined the last draft, which ended the attempts.
        return refused(declined_note(attempts[-1].generation.notes))
    verified = chosen is not None
    if chosen is None and drafts:
        chosen = max(drafts, key=_rank_key)  # max keeps the earliest of equals
    if chosen is None:
        return refused("Refused: no attempt produced an answer.")
    final = chosen
    evidence = reply_rules.LazyEvidence(
        nothing_supported=lambda: (
            config.refuse_when_nothing_supported and not any(s.support == SUPPORTED for s in final)
        ),
        unsupported_note=lambda: (
            f"Refused: no answer sentence was supported by its citations in {len(drafts)} attempt(s)."
        ),
    )
    decision = reply_rules.decide("composed", evidence, config.rules_off)
    if decision is not None:
        return refused(decision.detail)
    conflicts: list[Conflict | ClaimConflict] = []
    if config.detect_disagreement:
        clock = time.perf_counter()
        conflicts = _disagreements(question, chosen, ranked, config)
        timings["disagreement"] = time.perf_counter() - clock
    answer = _with_disagreement(chosen, conflicts, verified, documents)
    outcome: AnsweringOutcome = "verified" if verified else "unverified"
    records = tuple(_conflict_record(c) for c in conflicts)
    return _answered(answer, outcome, config, retrieval_confidence, attempts, records, timings)


def attempt_window(
    ranked: Sequence[ScoredPassage], config: AnswerConfig, number: int
) -> Sequence[ScoredPassage]:
    """The passages attempt ``number`` (1-based) reads; empty when the ranking or the attempts ran out."""
    if number > config.max_attempts:
        return ()
    step = config.passages_per_attempt
    return ranked[(number - 1) * step : number * step]


def attempts_over(attempt: Attempt, config: AnswerConfig) -> bool:
    """Whether no further attempt follows ``attempt`` (besides running out of windows): it verified,
    or a reply rule declined its draft and the preset does not retry after that (the rule's refusal
    is then the reply)."""
    return attempt.verified or (attempt.outcome == "generator refused" and not config.retry_after_refusal)


def declined_note(notes: Sequence[str]) -> str:
    """The refusal's note for a declined draft: the generator's own words for what it found."""
    said = [n for n in notes if not n.startswith("selected")]
    return f"Refused: {'; '.join(said) or 'generator refused'}."


def _attempts(
    question: str, ranked: Sequence[ScoredPassage], parts: AnswerParts
) -> tuple[tuple[Attempt, ...], list[tuple[AnswerSentence, ...]], tuple[AnswerSentence, ...] | None]:
    """Run attempts until one verifies, a rule declines a draft (unless retrying) or windows run out.

    Returns every attempt's record, the answers of the attempts that reached
    verification, and the verified answer (None when no attempt verified).
    """
    attempts: list[Attempt] = []
    drafts: list[tuple[AnswerSentence, ...]] = []
    number = 1
    while window := attempt_window(ranked, parts.config, number):
        attempt, sentences = _attempt(question, number, window, parts)
        attempts.append(attempt)
        if sentences:
            drafts.append(sentences)
        if attempts_over(attempt, parts.config):
            return tuple(attempts), drafts, sentences if attempt.verified else None
        number += 1
    return tuple(attempts), drafts, None


def _attempt(
    question: str, number: int, window: Sequence[ScoredPassage], parts: AnswerParts
) -> tuple[Attempt, tuple[AnswerSentence, ...]]:
    """One generate-cite-verify round over ``window``: its record and its labelled sentences."""
    generated = generate_attempt(question, number, window, parts)
    if isinstance(generated, Attempt):
        return generated, ()
    return verify_attempt(question, cite_attempt(question, generated, parts), parts)


def generate_attempt(
    question: str, number: int, window: Sequence[ScoredPassage], parts: AnswerParts
) -> Attempt | PendingAttempt:
    """An attempt's generation: the draft waiting for citation, or the finished attempt when a reply
    rule of the "draft" phase declined the draft (outcome "generator refused", the name stored
    traces know) or it holds no sentence."""
    clock = time.perf_counter()
    draft = parts.generator.generate(question, window)
    timings = {"generation": time.perf_counter() - clock}
    passages = tuple(p.passage.key for p in window)
    documents = tuple(p.passage.document_id for p in window)
    evidence = reply_rules.LazyEvidence(
        draft_reason=lambda: draft.reason, declined_note=lambda: declined_note(draft.notes)
    )
    decision = reply_rules.decide("draft", evidence, parts.config.rules_off)
    record = _generation_record(draft, decision.rule if decision is not None else "")
    if decision is not None or not draft.sentences:
        return Attempt(
            number=number,
            passages=passages,
            documents=documents,
            outcome="generator refused" if decision is not None else "no answer sentences",
            generation=record,
            dropped_citation_ids=draft.dropped_citation_ids,
            timings=timings,
        )
    return PendingAttempt(
        number=number,
        passages=passages,
        documents=documents,
        generation=record,
        sentences=draft.sentences,
        context=draft.context,
        dropped_citation_ids=draft.dropped_citation_ids,
        timings=timings,
    )


def cite_attempt(question: str, pending: PendingAttempt, parts: AnswerParts) -> PendingAttempt:
    """An attempt's citation: its sentences with source sentences attached."""
    clock = time.perf_counter()
    cited = parts.citer.cite(question, pending.sentences, pending.context)
    seconds = time.perf_counter() - clock
    return replace(
        pending,
        sentences=cited.sentences,
        citations=_citation_record(cited),
        dropped_citation_ids=pending.dropped_citation_ids + cited.dropped_ids,
        timings={**pending.timings, "citations": seconds},
    )


def verify_attempt(
    question: str, pending: PendingAttempt, parts: AnswerParts
) -> tuple[Attempt, tuple[AnswerSentence, ...]]:
    """An attempt's verification: its finished record and its labelled sentences."""
    clock = time.perf_counter()
    checked = parts.verifier.verify(question, pending.sentences)
    checked = replace(
        checked,
        verdicts=tuple(
            checked_for_mismatch(v, s.text, " ".join(c.text for c in s.citations)) if s.citations else v
            for s, v in zip(pending.sentences, checked.verdicts, strict=True)
        ),
    )
    seconds = time.perf_counter() - clock
    sentences = tuple(
        AnswerSentence(s.text, s.citations, v.label, mismatch=v.mismatch, contradicted=v.contradicted)
        for s, v in zip(pending.sentences, checked.verdicts, strict=True)
    )
    accepted = {SUPPORTED, PARTIAL} if parts.config.accept_partial else {SUPPORTED}
    attempt = Attempt(
        number=pending.number,
        passages=pending.passages,
        documents=pending.documents,
        outcome="verified" if all(s.support in accepted for s in sentences) else "not verified",
        generation=pending.generation,
        citations=pending.citations,
        verification=_verification_record(checked),
        sentences=tuple(
            TracedSentence(s.text, tuple(c.id for c in s.citations), s.support) for s in sentences
        ),
        dropped_citation_ids=pending.dropped_citation_ids,
        timings={**pending.timings, "verification": seconds},
    )
    return attempt, sentences


def _early_refusal(
    ranked: Sequence[ScoredPassage], config: AnswerConfig, retrieval_confidence: float | None
) -> Answer | None:
    if not ranked:
        return Answer.refusal("Refused: retrieval returned no passages.")
    threshold = config.min_retrieval_confidence
    if threshold is not None and retrieval_confidence is not None and retrieval_confidence < threshold:
        note = f"Refused: retrieval confidence {retrieval_confidence:.3f} is below {threshold:.3f}."
        return Answer.refusal(note, ranked_documents(ranked))
    return None


def _disagreements(question, chosen, ranked, config: AnswerConfig) -> list[Conflict | ClaimConflict]:
    """Conflicting numbers first (``verification.find_conflicts``), then, when room is left,
    conflicting statements (``claims.find_claim_conflicts``, a heuristic)."""
    evidence = [c for s in chosen if s.support == SUPPORTED for c in s.citations]
    passages = [p.passage for p in ranked[: config.disagreement_passages]]
    if config.subject_documents:
        passages = _on_subject(question, evidence, passages)
    conflicts: list[Conflict | ClaimConflict] = list(
        find_conflicts(question, evidence, passages, min_key_overlap=config.disagreement_min_key_overlap)
    )
    if config.disagreement_claims and len(conflicts) < MAX_CONFLICTS:
        taken = frozenset(s.id for c in conflicts for s in (c.answer_fact.sentence, c.other))
        conflicts += find_claim_conflicts(
            question, evidence, passages, max_conflicts=MAX_CONFLICTS - len(conflicts), skip=taken
        )
    return conflicts


def _on_subject(
    question: str, evidence: Sequence[SourceSentence], passages: Sequence[Passage]
) -> list[Passage]:
    """The passages of the documents about what the question names (``subjects``): only they
    speak of the answer's subject, so only they can disagree with it (the Apache and Mozilla
    licences each grant patent licences on their own terms, and do not disagree)."""
    on_subject = documents_on_subject(question, [*evidence, *(s for p in passages for s in p.sentences)])
    return list(passages) if on_subject is None else [p for p in passages if p.document_id in on_subject]


def _with_disagreement(
    chosen: tuple[AnswerSentence, ...], conflicts: Sequence[Conflict], verified: bool, documents
) -> Answer:
    note = ""
    if conflicts:
        note = "The sources disagree: " + " ".join(c.describe() for c in conflicts)
        quoted = {s.id for answer_sentence in chosen for s in answer_sentence.citations}
        extra = [c.other for c in conflicts if c.other.id not in quoted]
        # The other side is quoted verbatim, so it is supported by its own citation.
        chosen = chosen + tuple(
            AnswerSentence(f'{s.document_title or s.document_id} reports: "{s.text}"', (s,), SUPPORTED)
            for s in dict.fromkeys(extra)
        )
    return Answer(
        sentences=chosen,
        verified=verified,
        disagreement=bool(conflicts),
        note=note,
        retrieved_documents=documents,
    )


def _rank_key(attempt: tuple[AnswerSentence, ...]) -> tuple[int, int, int]:
    labels = [s.support for s in attempt]
    return labels.count(SUPPORTED), labels.count(PARTIAL), -labels.count(UNSUPPORTED)


def ranked_documents(ranked: Sequence[ScoredPassage]) -> tuple[str, ...]:
    """Every ranked document, best first: evaluation ranks documents from the whole candidate list."""
    return tuple(dict.fromkeys(hit.passage.document_id for hit in ranked))


def _no_timings() -> dict[str, float]:
    return dict.fromkeys(ANSWERING_STAGES, 0.0)


def _answered(answer, outcome, config, retrieval_confidence, attempts, conflicts, timings) -> Answered:
    step = AnsweringStep(
        outcome=outcome,
        note=answer.note,
        config=config,
        retrieval_confidence=retrieval_confidence,
        attempts=tuple(attempts),
        conflicts=tuple(conflicts),
    )
    return Answered(answer, step, timings)


# --- records -----------------------------------------------------------------------


def _messages(prompt: Sequence[dict[str, str]]) -> tuple[Message, ...]:
    return tuple(Message(m["role"], m["content"]) for m in prompt)


def _generation_record(draft: Draft, declined_by: str) -> GenerationRecord:
    return GenerationRecord(
        refused=bool(declined_by),
        reason=draft.reason,
        declined_by=declined_by,
        sentences=tuple(TracedSentence(s.text, tuple(c.id for c in s.citations)) for s in draft.sentences),
        prompt=_messages(draft.prompt),
        raw_output=draft.raw_output,
        dropped_citation_ids=draft.dropped_citation_ids,
        notes=draft.notes,
    )


def _citation_record(result: CitationResult) -> CitationRecord:
    return CitationRecord(
        prompt=_messages(result.prompt),
        raw_output=result.raw_output,
        dropped_citation_ids=result.dropped_ids,
        notes=result.notes,
    )


def _verification_record(result: VerificationResult) -> VerificationRecord:
    return VerificationRecord(
        verdicts=result.verdicts, prompt=_messages(result.prompt), raw_output=result.raw_output
    )


def _conflict_record(conflict: Conflict | ClaimConflict) -> ConflictRecord:
    if isinstance(conflict, ClaimConflict):
        return ConflictRecord(
            about=conflict.about,
            answer_sentence=conflict.answer_sentence.id,
            answer_value=conflict.answer_value,
            other_sentence=conflict.other_sentence.id,
            other_value=conflict.other_value,
            kind=conflict.kind,
            heuristic=True,
        )
    return ConflictRecord(
        about=conflict.about,
        answer_sentence=conflict.answer_fact.sentence.id,
        answer_value=conflict.answer_fact.shown,
        other_sentence=conflict.other_fact.sentence.id,
        other_value=conflict.other_fact.shown,
    )
