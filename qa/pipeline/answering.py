"""Generate, cite and verify an answer, retrying on the next-ranked passages; refuse when unsure.

``generate_verified_answer`` is the one entry point the Django side calls. It
never raises on bad model output (that is just a failed attempt) but lets
``LLMError`` through, so a Celery task can retry when the service is down.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from qa.pipeline.citations import CitationStrategy, attach_citations
from qa.pipeline.generation import ExtractiveGenerator, Generator, LLMGenerator, overlap_generator
from qa.pipeline.protocols import LLM, Embedder
from qa.pipeline.types import (
    PARTIAL,
    REFUSAL_TEXT,
    SUPPORTED,
    UNSUPPORTED,
    Answer,
    AnswerSentence,
    ScoredPassage,
)
from qa.pipeline.verification import LexicalVerifier, LLMVerifier, Verifier, find_conflicts


@dataclass(frozen=True)
class AnswerConfig:
    generator: Literal["extractive", "overlap", "llm"] = "extractive"  # overlap: the report's baseline
    citation_strategy: CitationStrategy = "embedding"
    # Extractive citations are exact, and LLM-given ids are checked against the
    # context, so by default citation extraction only fills sentences without any.
    replace_generated_citations: bool = False
    verifier: Literal["lexical", "llm"] = "lexical"
    max_attempts: int = 3
    passages_per_attempt: int = 1
    # Refusal thresholds. The retrieval confidence scale belongs to the caller's
    # retriever, so the check is off until the caller calibrates it.
    min_retrieval_confidence: float | None = None
    refuse_when_nothing_supported: bool = True
    retry_after_refusal: bool = False  # a refusing generator usually means the corpus lacks the answer
    accept_partial: bool = False  # True: PARTIAL sentences count as verified
    # Stage knobs.
    citation_similarity_threshold: float = 0.5
    max_citations_per_sentence: int = 2
    extractive_min_sentences: int = 2
    extractive_max_sentences: int = 4
    extractive_min_relevance: float = 0.0
    extractive_focus_document: bool = False  # answer from the top-ranked document only
    require_quantity_for_quantity_questions: bool = True
    llm_max_context_sentences: int = 60
    # Disagreement between documents.
    detect_disagreement: bool = True
    disagreement_passages: int = 5
    disagreement_min_key_overlap: float = 0.5

    def __post_init__(self) -> None:
        if self.max_attempts < 1 or self.passages_per_attempt < 1:
            raise ValueError("max_attempts and passages_per_attempt must be at least 1")

    def needs_llm(self) -> bool:
        return "llm" in (self.generator, self.citation_strategy, self.verifier)


def build_generator(config: AnswerConfig, embedder: Embedder, llm: LLM | None) -> Generator:
    if config.generator == "extractive":
        return ExtractiveGenerator(
            embedder,
            min_sentences=config.extractive_min_sentences,
            max_sentences=config.extractive_max_sentences,
            min_relevance=config.extractive_min_relevance,
            require_quantity=config.require_quantity_for_quantity_questions,
            focus_document=config.extractive_focus_document,
        )
    if config.generator == "overlap":
        return overlap_generator(embedder, sentences=config.extractive_max_sentences)
    if config.generator == "llm":
        return LLMGenerator(
            _need_llm(llm, "the llm generator"),
            embedder=embedder,
            max_context_sentences=config.llm_max_context_sentences,
        )
    raise ValueError(f"unknown generator {config.generator!r}")


def build_verifier(config: AnswerConfig, embedder: Embedder, llm: LLM | None) -> Verifier:
    if config.verifier == "lexical":
        return LexicalVerifier(embedder)
    if config.verifier == "llm":
        return LLMVerifier(_need_llm(llm, "the llm verifier"))
    raise ValueError(f"unknown verifier {config.verifier!r}")


def _need_llm(llm: LLM | None, what: str) -> LLM:
    if llm is None:
        raise ValueError(f"{what} needs an LLM client")
    return llm


def refusal(note: str, retrieved_documents: Sequence[str] = ()) -> Answer:
    return Answer(
        sentences=(AnswerSentence(REFUSAL_TEXT, (), UNSUPPORTED),),
        refused=True,
        note=note,
        retrieved_documents=tuple(retrieved_documents),
    )


def _rank_key(attempt: tuple[AnswerSentence, ...]) -> tuple[int, int, int]:
    labels = [s.support for s in attempt]
    return labels.count(SUPPORTED), labels.count(PARTIAL), -labels.count(UNSUPPORTED)


def generate_verified_answer(
    question: str,
    ranked: Sequence[ScoredPassage],
    *,
    config: AnswerConfig = AnswerConfig(),  # noqa: B008 - frozen, safe to share
    embedder: Embedder,
    llm: LLM | None = None,
    trace: dict | None = None,
    retrieval_confidence: float | None = None,
) -> Answer:
    """Answer from ``ranked`` (best first), verifying each attempt; see the module docstring.

    Attempt n uses passages [n*k, (n+1)*k) with k = ``passages_per_attempt``.
    The first attempt whose sentences are all supported is returned verified;
    otherwise the attempt with the most supported sentences is returned with
    ``verified=False`` and its labels, or a refusal if none has any.
    """
    trace = {} if trace is None else trace
    started = time.perf_counter()
    timings = {"generation": 0.0, "citations": 0.0, "verification": 0.0, "disagreement": 0.0}
    documents = tuple(dict.fromkeys(p.passage.document_id for p in ranked))
    trace.update(
        question=question,
        config=asdict(config),
        retrieval_confidence=retrieval_confidence,
        attempts=[],
        timings=timings,
    )

    def finish(answer: Answer, outcome: str) -> Answer:
        trace["outcome"] = outcome
        trace["note"] = answer.note
        timings["total"] = time.perf_counter() - started
        return answer

    if not ranked:
        return finish(refusal("Refused: retrieval returned no passages."), "refused")
    threshold = config.min_retrieval_confidence
    if threshold is not None and retrieval_confidence is not None and retrieval_confidence < threshold:
        note = f"Refused: retrieval confidence {retrieval_confidence:.3f} is below {threshold:.3f}."
        return finish(refusal(note, documents), "refused")

    if config.needs_llm() and llm is None:
        stages = [f"{k}={v}" for k, v in asdict(config).items() if v == "llm"]
        raise ValueError(f"{', '.join(stages)} needs an LLM client")
    generator = build_generator(config, embedder, llm)
    verifier = build_verifier(config, embedder, llm)
    accepted = {SUPPORTED, PARTIAL} if config.accept_partial else {SUPPORTED}
    attempts: list[tuple[AnswerSentence, ...]] = []
    chosen: tuple[AnswerSentence, ...] | None = None
    step = config.passages_per_attempt
    for number in range(config.max_attempts):
        window = ranked[number * step : (number + 1) * step]
        if not window:
            break
        record: dict = {
            "attempt": number + 1,
            "passages": [p.passage.key for p in window],
            "documents": [p.passage.document_id for p in window],
            "timings": {},
        }
        trace["attempts"].append(record)
        clock = time.perf_counter()
        draft = generator.generate(question, window)
        record["timings"]["generation"] = time.perf_counter() - clock
        record["generation"] = draft.to_trace()
        record["dropped_citation_ids"] = list(draft.dropped_citation_ids)
        if draft.refused:
            record["outcome"] = "generator refused"
            if config.retry_after_refusal:
                continue
            reason = "; ".join(n for n in draft.notes if not n.startswith("selected")) or "generator refused"
            return finish(refusal(f"Refused: {reason}.", documents), "refused")
        if not draft.sentences:
            record["outcome"] = "no answer sentences"
            continue

        clock = time.perf_counter()
        cited = attach_citations(
            question,
            draft.sentences,
            draft.context,
            strategy=config.citation_strategy,
            embedder=embedder,
            llm=llm,
            replace_existing=config.replace_generated_citations,
            max_citations=config.max_citations_per_sentence,
            similarity_threshold=config.citation_similarity_threshold,
        )
        record["timings"]["citations"] = time.perf_counter() - clock
        record["citations"] = cited.to_trace()
        record["dropped_citation_ids"] += list(cited.dropped_ids)

        clock = time.perf_counter()
        checked = verifier.verify(question, cited.sentences)
        record["timings"]["verification"] = time.perf_counter() - clock
        record["verification"] = checked.to_trace()

        sentences = tuple(
            AnswerSentence(s.text, s.citations, v.label)
            for s, v in zip(cited.sentences, checked.verdicts, strict=True)
        )
        record["sentences"] = [
            {"text": s.text, "citations": [c.id for c in s.citations], "support": s.support}
            for s in sentences
        ]
        record["verified"] = all(s.support in accepted for s in sentences)
        record["outcome"] = "verified" if record["verified"] else "not verified"
        attempts.append(sentences)
        if record["verified"]:
            chosen = sentences
            break

    for stage in ("generation", "citations", "verification"):
        timings[stage] = sum(r["timings"].get(stage, 0.0) for r in trace["attempts"])
    verified = chosen is not None
    if chosen is None and attempts:
        chosen = max(attempts, key=_rank_key)  # max keeps the earliest of equals
    if chosen is None:
        return finish(refusal("Refused: no attempt produced an answer.", documents), "refused")
    if config.refuse_when_nothing_supported and not any(s.support == SUPPORTED for s in chosen):
        note = f"Refused: no answer sentence was supported by its citations in {len(attempts)} attempt(s)."
        return finish(refusal(note, documents), "refused")

    disagreement, note = False, ""
    if config.detect_disagreement:
        clock = time.perf_counter()
        conflicts = find_conflicts(
            question,
            [c for s in chosen if s.support == SUPPORTED for c in s.citations],
            [p.passage for p in ranked[: config.disagreement_passages]],
            min_key_overlap=config.disagreement_min_key_overlap,
        )
        timings["disagreement"] = time.perf_counter() - clock
        trace["conflicts"] = [c.to_trace() for c in conflicts]
        if conflicts:
            disagreement = True
            note = "The sources disagree: " + " ".join(c.describe() for c in conflicts)
            quoted = {s.id for answer_sentence in chosen for s in answer_sentence.citations}
            extra = [c.other for c in conflicts if c.other.id not in quoted]
            # The other side is quoted verbatim, so it is supported by its own citation.
            chosen = chosen + tuple(
                AnswerSentence(f'{s.document_title or s.document_id} reports: "{s.text}"', (s,), SUPPORTED)
                for s in dict.fromkeys(extra)
            )
    answer = Answer(
        sentences=chosen,
        verified=verified,
        disagreement=disagreement,
        note=note,
        retrieved_documents=documents,
    )
    return finish(answer, "verified" if verified else "unverified")
