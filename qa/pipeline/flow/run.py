"""One pipeline run as a typed value: what each stage produced, in order.

A ``PipelineRun`` is what the retrieval stage hands the generation stage
(through the Question row, as ``to_json()``), what the trace page shows and
what evaluation scores. Each stage fills its own field; a field left ``None``
is a stage that has not run (or, with ``failure`` set, failed). A new stage
adds one optional field here and its frozen result type, and ``codec``
stores and reads it with no further code.

``version`` is the stored format. Version 1 was the untyped trace dict the
code wrote before this module existed; ``qa.pipeline.flow.run_v1`` reads it, so
questions answered then still render. Bump ``RUN_FORMAT_VERSION`` when a
change would make old JSON read wrongly (a renamed or retyped field), and
teach ``load_run`` the old one; adding an optional field needs no bump.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from qa.pipeline.checks.answerability import AnswerabilityVerdict
from qa.pipeline.checks.confidence import AnswerCheck, Confidence
from qa.pipeline.checks.relevance import ContextJudgement
from qa.pipeline.checks.verification import Verdict
from qa.pipeline.config.answering_config import AnswerConfig
from qa.pipeline.core import codec
from qa.pipeline.core.types import Answer, AnswerSentence, SourceSentence, SupportLabel
from qa.pipeline.dialogue.conversation import Rewrite
from qa.pipeline.dialogue.question_reading import QuestionReading
from qa.pipeline.dialogue.turn_kind import TurnKindVerdict
from qa.pipeline.drafting.generation import DraftSentence
from qa.pipeline.flow.combine import DecompositionStep

RUN_FORMAT_VERSION = 2

StageName = Literal["retrieval", "generation", "citation", "verification"]
# The stages that run as tasks of their own, in order; generation follows verification again
# when an attempt failed and the ranking has another window to try.
STAGES: tuple[StageName, ...] = ("retrieval", "generation", "citation", "verification")
# "generator refused": a reply rule declined the attempt's draft (the name predates the rules).
AttemptOutcome = Literal["verified", "not verified", "generator refused", "no answer sentences"]
AnsweringOutcome = Literal["verified", "unverified", "refused", "clarifying question"]


@dataclass(frozen=True)
class Candidate:
    """A retrieval candidate as the trace shows it (text cut to 300 characters)."""

    key: str
    document: str
    title: str
    score: float
    scores: dict[str, float]  # per stage: "bm25", "dense", "fused", "rerank", reranker features
    text: str


@dataclass(frozen=True)
class RankedKey:
    """One entry of the full ranking the generation stage reads (passages looked up by key)."""

    key: str
    score: float
    scores: dict[str, float]


@dataclass(frozen=True)
class RetrieverHit:
    """One passage in one retriever's own ranking, before fusion."""

    key: str
    document: str
    title: str
    rank: int  # in this retriever's ranking, 1-based
    score: float  # this retriever's own score
    fused_rank: int  # where fusion put it (first stage, before any reranking), 1-based


@dataclass(frozen=True)
class RetrieverContribution:
    """What one first-stage retriever brought: its own ranking and where fusion put it."""

    retriever: str  # "bm25", "dense", "static" ...
    returned: int  # how many candidates it returned
    weight: float | None  # its weight in min-max fusion; None for RRF and a retriever alone
    in_top_k: int  # of the top-k passages answering may read, how many it returned
    only_here: int  # ... of which no other retriever returned
    hits: tuple[RetrieverHit, ...] = ()  # its own best TRACE_CANDIDATES


@dataclass(frozen=True)
class RetrievalStep:
    question: str  # the standalone question that was searched
    unit: str = ""
    candidates: tuple[Candidate, ...] = ()  # first-stage order, the top TRACE_CANDIDATES
    reranker: str = ""  # the reranker's class name; "" when none ran
    reranked: tuple[Candidate, ...] = ()  # after reranking, the top TRACE_CANDIDATES
    documents: tuple[str, ...] = ()  # document ids best first, the top TRACE_CANDIDATES
    ranking: tuple[RankedKey, ...] = ()  # every candidate, best first: the hand-off to generation
    skipped: str = ""  # why retrieval did not run (a preset without retrieval)
    expanded: tuple[str, ...] = ()  # words pseudo-relevance feedback added to the question
    # Each retriever's ranking before fusion; () in runs stored before it was recorded.
    retrievers: tuple[RetrieverContribution, ...] = ()
    # The date or period the question names ("2022-05-01 to 2022-08-31 (mid-2022)"), which ranked
    # documents published then higher (qa.pipeline.reading.dates); "" when it names none.
    period: str = ""


@dataclass(frozen=True)
class Message:
    role: str
    content: str


@dataclass(frozen=True)
class TracedSentence:
    """An answer sentence with its citations named by source sentence id."""

    text: str
    citations: tuple[int, ...] = ()
    support: SupportLabel | None = None  # None before verification


@dataclass(frozen=True)
class GenerationRecord:
    refused: bool = False  # a reply rule declined the draft (``declined_by``; stored traces: the generator)
    sentences: tuple[TracedSentence, ...] = ()
    prompt: tuple[Message, ...] = ()
    raw_output: str = ""
    dropped_citation_ids: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    reason: str = ""  # why the draft holds no sentence (``generation.DRAFT_REASONS``)
    declined_by: str = ""  # the reply rule (phase "draft") that declined it


@dataclass(frozen=True)
class CitationRecord:
    prompt: tuple[Message, ...] = ()
    raw_output: str = ""
    dropped_citation_ids: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class VerificationRecord:
    verdicts: tuple[Verdict, ...] = ()
    prompt: tuple[Message, ...] = ()
    raw_output: str = ""


@dataclass(frozen=True)
class Attempt:
    """One generate-cite-verify round over one window of the ranking."""

    number: int  # 1-based
    passages: tuple[str, ...]  # passage keys
    documents: tuple[str, ...]
    outcome: AttemptOutcome
    generation: GenerationRecord
    citations: CitationRecord | None = None  # None: the attempt stopped after generation
    verification: VerificationRecord | None = None
    sentences: tuple[TracedSentence, ...] = ()  # with their support labels, once verified
    dropped_citation_ids: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)  # generation, citations, verification

    @property
    def verified(self) -> bool:
        return self.outcome == "verified"


@dataclass(frozen=True)
class PendingAttempt:
    """An attempt between its stages: generated (``citations`` None), then cited.

    ``sentences`` are the draft's, with the source sentences cited so far;
    ``context`` is every sentence the generator was shown, which citation
    chooses from. The verification stage turns it into an ``Attempt``.
    """

    number: int
    passages: tuple[str, ...]
    documents: tuple[str, ...]
    generation: GenerationRecord
    sentences: tuple[DraftSentence, ...]
    context: tuple[SourceSentence, ...]
    citations: CitationRecord | None = None
    dropped_citation_ids: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class AnsweringProgress:
    """The answering stage while its stages run as separate tasks (``qa.pipeline.flow.stages``).

    Kept in the run between tasks and dropped once the answer is made.
    """

    passages: tuple[str, ...]  # keys of the passages answering reads, best first (after trust filtering)
    retrieval_confidence: float | None = None
    attempts: tuple[Attempt, ...] = ()  # finished attempts
    drafts: tuple[tuple[AnswerSentence, ...], ...] = ()  # answers of the attempts that were verified
    pending: PendingAttempt | None = None  # the attempt between generation and verification
    missing: tuple[str, ...] = ()  # what a partial answer names as missing (qa.pipeline.dialogue.turns)


@dataclass(frozen=True)
class StageRun:
    """One execution of a stage: which worker ran it, when, how long. A stage re-run after its
    worker died, or after a transient error, appears once per run."""

    stage: str
    worker: str  # "host:pid" of the process
    started_at: str  # ISO 8601, UTC
    seconds: float
    attempt: int = 0  # the answer attempt it worked on (generation, citation, verification)


@dataclass(frozen=True)
class ConflictRecord:
    about: tuple[str, ...]
    answer_sentence: int
    answer_value: str
    other_sentence: int
    other_value: str
    # "number" (verification.find_conflicts), or a statement conflict of qa.pipeline.checks.claims:
    # "negation", "outcome", "entity"; those are heuristic (no entailment model).
    kind: str = "number"
    heuristic: bool = False


@dataclass(frozen=True)
class AnsweringStep:
    outcome: AnsweringOutcome
    note: str = ""
    config: AnswerConfig | None = None  # the answering settings in effect, substitutions applied
    retrieval_confidence: float | None = None
    attempts: tuple[Attempt, ...] = ()
    conflicts: tuple[ConflictRecord, ...] = ()
    raw_output: str = ""  # an LLM's reply when there is no retrieval (llm-only)


@dataclass(frozen=True)
class TrustStep:
    """The intrinsics around generation (``qa.pipeline.checks.trust``): answerability and each passage's
    relevance before it, the answer check and the answer's confidence after it."""

    answerability: AnswerabilityVerdict | None = None
    context: tuple[ContextJudgement, ...] = ()
    answer_check: AnswerCheck | None = None  # None: no answer was generated to check
    confidence: Confidence | None = None


@dataclass(frozen=True)
class StageFailure:
    stage: StageName
    message: str


@dataclass(frozen=True)
class PipelineRun:
    question: str
    preset: str = ""
    version: int = RUN_FORMAT_VERSION
    standalone: str = ""  # the question as searched (a follow-up rewritten to stand alone)
    substitutions: tuple[str, ...] = ()  # parts of the preset that could not run, and what stood in
    # How a follow-up was made standalone (None: a first question, or a run stored before memory).
    conversation: Rewrite | None = None
    retrieval: RetrievalStep | None = None
    answering: AnsweringStep | None = None
    trust: TrustStep | None = None  # None: the preset runs no intrinsics (or a run stored before them)
    answer: Answer | None = None  # the final answer (None before generation, and in version 1 runs)
    # Seconds per stage: rewrite, retrieval, rerank, generation, citations, verification,
    # disagreement, and "answer" for the answering stage in all.
    timings: dict[str, float] = field(default_factory=dict)
    failure: StageFailure | None = None
    progress: AnsweringProgress | None = None  # answering between its stage tasks; None once answered
    stage_runs: tuple[StageRun, ...] = ()  # every stage execution, in order
    # A question split into parts (the agentic preset): the plan, then each part's answer.
    decomposition: DecompositionStep | None = None
    # The learned reply kind of a turn (qa.pipeline.dialogue.turn_kind); None: the preset does not classify.
    turn_kind: TurnKindVerdict | None = None
    # The question read once, where retrieval starts (qa.pipeline.dialogue.question_reading); None in runs
    # stored before readings were kept, and before retrieval.
    reading: QuestionReading | None = None

    def timed(self, **seconds: float) -> PipelineRun:
        return replace(self, timings={**self.timings, **seconds})

    def added(self, **seconds: float) -> PipelineRun:
        """Timings summed with those already recorded (a stage that runs once per attempt)."""
        return replace(
            self, timings={**self.timings, **{k: self.timings.get(k, 0.0) + v for k, v in seconds.items()}}
        )

    def failed(self, stage: StageName, message: str) -> PipelineRun:
        return replace(self, failure=StageFailure(stage, message))

    def to_json(self) -> dict:
        """JSON-ready data in the current format (a run read from an older one is written anew)."""
        return codec.to_data(replace(self, version=RUN_FORMAT_VERSION))

    @classmethod
    def from_json(cls, data: dict) -> PipelineRun:
        """A run stored by ``to_json``; for any stored trace (old versions too) use ``load_run``."""
        if data.get("version") != RUN_FORMAT_VERSION:
            raise ValueError(f"not a version {RUN_FORMAT_VERSION} pipeline run: {data.get('version')!r}")
        return codec.from_data(cls, data)


def load_run(data: dict | None, *, question: str = "", error: str = "") -> PipelineRun:
    """Any stored trace as a run: the current format, or version 1 (the untyped dict).

    ``question`` and ``error`` come from the row that held the trace: version 1
    stored neither, and did not record which stage failed.
    """
    if data and data.get("version") == RUN_FORMAT_VERSION:
        return PipelineRun.from_json(data)
    if data and "version" in data:
        raise ValueError(f"unknown pipeline run format version {data['version']!r}")
    from qa.pipeline.flow.run_v1 import read_v1

    return read_v1(data or {}, question=question, error=error)
