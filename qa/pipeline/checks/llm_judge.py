"""The LLM as a judge, by probability: does this passage answer this question?

One short chat per (question, passage), read as P("yes") from the reply's first
token log-probabilities (``LLM.yes_probability``), never from generated text. The
prompt is short on purpose: on a CPU model prompt processing is nearly the whole
cost, so the instruction is a few words and each passage is capped (``MAX_WORDS``).

The judge computes evidence and never decides: its probability is one input of
the answerability model (``judge_p_yes`` beside the other signals), fitted with
and without it (bench/llm_judge.py). Each (question, passage) is asked once per
run (``PassageJudge`` keeps the answers). The model client comes in through the
``LLM`` protocol; nothing here loads a model.
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from qa.pipeline.core.llm import LLMError
from qa.pipeline.core.protocols import LLM
from qa.pipeline.core.types import ScoredPassage

# Words of a passage shown to the judge: retrieval passages are windows of a few sentences, and
# a longer one costs prompt time for text the first sentences rarely fail to settle.
MAX_WORDS = 180
SYSTEM = "You check whether a passage answers a question. Reply with one word: yes or no."
ASK = "Does the passage answer the question? Reply yes or no."
# The answerability model's inputs from the judge: the top passage's P(yes) and the best over the
# passages asked, each as a logit (``judge_logit``).
JUDGE_NAMES: tuple[str, ...] = ("judge_top1", "judge_best")
# Pairs kept per LLM client: one run asks answerability several times (the question as asked, as
# searched, each part), and each (question, passage) is asked once.
CACHE_SIZE = 1024


def _passage_block(passage_text: str, title: str) -> str:
    """The passage as the judge reads it: its title, then at most MAX_WORDS of its words."""
    words = passage_text.split()
    text = " ".join(words[:MAX_WORDS]) + (" ..." if len(words) > MAX_WORDS else "")
    heading = f"Passage ({title}):" if title else "Passage:"
    return f"{heading}\n{text}"


def judge_messages(question: str, passage_text: str, title: str = "") -> list[dict[str, str]]:
    """The chat the judge asks: passage first, then the question and the yes/no instruction."""
    user = f"{_passage_block(passage_text, title)}\n\nQuestion: {question.strip()}\n\n{ASK}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class JudgeReading:
    """The judge's answer for one passage; ``p_yes`` None when the model gave no usable one."""

    passage_key: str
    document_id: str
    p_yes: float | None
    seconds: float
    error: str = ""

    def to_trace(self) -> dict:
        return {
            "passage": self.passage_key,
            "document_id": self.document_id,
            "p_yes": None if self.p_yes is None else round(self.p_yes, 4),
            "seconds": round(self.seconds, 3),
            **({"error": self.error} if self.error else {}),
        }


@dataclass(frozen=True)
class JudgeVerdict:
    """What the judge said about a question's top passages; ``p_yes`` the best of them."""

    model: str
    readings: tuple[JudgeReading, ...]

    @property
    def p_yes(self) -> float | None:
        known = [r.p_yes for r in self.readings if r.p_yes is not None]
        return max(known) if known else None

    def to_trace(self) -> dict:
        p_yes = self.p_yes
        return {
            "model": self.model,
            "p_yes": None if p_yes is None else round(p_yes, 4),
            "passages": [r.to_trace() for r in self.readings],
        }


class ReadingCache:
    """The last ``size`` (question, passage) readings, shared by the threads of a worker."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size, self._items, self._lock = size, OrderedDict(), threading.Lock()

    def get(self, key: tuple[str, str, str]) -> JudgeReading | SentenceReading | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[str, str, str], reading: JudgeReading | SentenceReading) -> None:
        with self._lock:
            self._items[key] = reading
            while len(self._items) > self.size:
                self._items.popitem(last=False)


# One cache per LLM client (a pipeline's client lives as long as the worker's pipeline), so the
# judges built for one run's several answerability calls share it; gone with the client.
_CACHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def cache_for(llm: LLM) -> ReadingCache:
    with _CACHES_LOCK:
        try:
            return _CACHES.setdefault(llm, ReadingCache())
        except TypeError:  # a client that takes no weak reference: a cache of its own judge only
            return ReadingCache()


@dataclass
class PassageJudge:
    """Asks an LLM about (question, passage) pairs, each once per LLM client (``cache_for``).

    A pair whose call fails (``LLMError``: a server without log-probabilities, a reply that is
    neither yes nor no) reads as unknown (``p_yes`` None) with the message, so a question is
    still answered from the other signals; the failure shows in the trace. A failed pair is not
    kept, so a later run asks again.
    """

    llm: LLM
    passages: int = 2
    cache: ReadingCache | None = field(default=None)

    def __post_init__(self) -> None:
        if self.cache is None:
            self.cache = cache_for(self.llm)

    def judge(self, question: str, ranked: Sequence[ScoredPassage]) -> JudgeVerdict:
        readings = tuple(self.read(question, hit) for hit in ranked[: self.passages])
        return JudgeVerdict(self.llm.name, readings)

    def read(self, question: str, hit: ScoredPassage) -> JudgeReading:
        passage = hit.passage
        assert self.cache is not None
        key = (question, passage.key, passage.text)
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        started = time.perf_counter()
        try:
            p_yes: float | None = self.llm.yes_probability(
                judge_messages(question, passage.text, passage.document_title)
            )
            error = ""
        except LLMError as exc:
            p_yes, error = None, str(exc)
        reading = JudgeReading(passage.key, passage.document_id, p_yes, time.perf_counter() - started, error)
        if p_yes is not None:
            self.cache.put(key, reading)
        return reading


def judge_logit(p_yes: float | None, *, neutral: float = 0.5) -> float:
    """The judge's probability as a model input: a logit, clipped so that a sure 0 or 1 stays finite;
    an unknown one reads as ``neutral``."""
    p = neutral if p_yes is None else min(max(p_yes, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def judge_values(top1: float | None, best: float | None) -> dict[str, float]:
    """``JUDGE_NAMES`` from the top passage's and the best P(yes) (None: not known)."""
    return {"judge_top1": judge_logit(top1), "judge_best": judge_logit(best)}


def judge_inputs(verdict: JudgeVerdict | None) -> dict[str, float]:
    """The answerability model's judge inputs; an absent verdict (no LLM) reads as undecided."""
    if verdict is None:
        return judge_values(None, None)
    top1 = verdict.readings[0].p_yes if verdict.readings else None
    return judge_values(top1, verdict.p_yes)


# --- answer sentences: relevance to the question, support by the cited text -------------------

RELEVANCE_SYSTEM = "You check whether a sentence answers a question. Reply with one word: yes or no."
RELEVANCE_ASK = "Does this sentence answer the question? Reply yes or no."
SUPPORT_SYSTEM = "You check whether a passage supports a claim. Reply with one word: yes or no."
SUPPORT_ASK = "Does the passage support the claim? Reply yes or no."


def relevance_messages(question: str, sentence: str, title: str = "") -> list[dict[str, str]]:
    """Does this answer sentence answer the question? The cited document's title goes with the
    sentence, as the relevance score reads it: "the country" in Oman's entry is Oman."""
    source = f" (from {title})" if title else ""
    user = f"Question: {question.strip()}\n\nSentence{source}: {sentence.strip()}\n\n{RELEVANCE_ASK}"
    return [{"role": "system", "content": RELEVANCE_SYSTEM}, {"role": "user", "content": user}]


def support_messages(claim: str, cited: str, title: str = "") -> list[dict[str, str]]:
    """Does the cited text support this answer sentence? The cited text is capped as a passage is."""
    user = f"{_passage_block(cited, title)}\n\nClaim: {claim.strip()}\n\n{SUPPORT_ASK}"
    return [{"role": "system", "content": SUPPORT_SYSTEM}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class SentenceReading:
    """The judge's P(yes) for one answer sentence; None (with ``error``) when it gave no usable one."""

    p_yes: float | None
    seconds: float
    error: str = ""
    cached: bool = False

    def to_trace(self) -> dict:
        return {
            "p_yes": None if self.p_yes is None else round(self.p_yes, 4),
            "seconds": round(self.seconds, 3),
            **({"error": self.error} if self.error else {}),
        }


@dataclass
class SentenceJudge:
    """Asks an LLM about answer sentences: does it answer the question (``relevance``), does its
    cited text support it (``support``). Each (kind, first text, second text) once per LLM client,
    sharing ``cache_for``'s cache with the passage judge; a failed call (``LLMError``) reads as
    unknown with its message and is not kept, as in ``PassageJudge``."""

    llm: LLM
    cache: ReadingCache | None = field(default=None)

    def __post_init__(self) -> None:
        if self.cache is None:
            self.cache = cache_for(self.llm)

    @property
    def name(self) -> str:
        return self.llm.name

    def relevance(self, question: str, sentence: str, title: str = "") -> SentenceReading:
        return self._ask(
            ("relevance", question, f"{title}\n{sentence}"), relevance_messages(question, sentence, title)
        )

    def support(self, claim: str, cited: str, title: str = "") -> SentenceReading:
        return self._ask(("support", claim, f"{title}\n{cited}"), support_messages(claim, cited, title))

    def _ask(self, key: tuple[str, str, str], messages: list[dict[str, str]]) -> SentenceReading:
        assert self.cache is not None
        cached = self.cache.get(key)
        if cached is not None:
            return replace(cached, cached=True)
        started = time.perf_counter()
        try:
            p_yes: float | None = self.llm.yes_probability(messages)
            error = ""
        except LLMError as exc:
            p_yes, error = None, str(exc)
        reading = SentenceReading(p_yes, time.perf_counter() - started, error)
        if p_yes is not None:
            self.cache.put(key, reading)
        return reading
