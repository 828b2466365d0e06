"""Draft answers: the ``Draft`` every generator returns, and the extractive generator (no LLM);
the LLM-written draft is ``llm_generation.LLMGenerator`` (``generation_output`` parses its reply).

A generator returns a ``Draft``: sentences with the source sentences they cite,
plus what the trace needs (prompt, raw output, dropped citation ids). Citation
repair and verification happen later, in ``citations`` and ``verification``.

A generator never refuses: when it quotes nothing it says why (``Draft.reason``),
and whether that refuses the question is the reply rules' call
(``qa.pipeline.checks.reply_rules``, phase "draft").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import numpy as np

from qa.pipeline.core import roles
from qa.pipeline.core.lexicon import (
    DEMONSTRATIVES,
    EVENT_WORDS,
    REFERRING_NOUNS,
    SOURCE_FRAMING_WORDS,
    THIRD_PERSON_PRONOUNS,
    alternation,
)
from qa.pipeline.core.protocols import Embedder
from qa.pipeline.core.text import (
    QuantitySlot,
    content_words,
    cosine_matrix,
    jaccard,
    main_clause,
    quantity_slots,
    question_parts,
    time_slots,
    unique_sentences,
    words,
    year_spans,
    years_named,
)
from qa.pipeline.core.types import ScoredPassage, SourceSentence
from qa.pipeline.drafting.prompts import looks_like_instruction
from qa.pipeline.reading.questions import slot_states_amount
from qa.pipeline.reading.subjects import documents_on_subject, question_names


@dataclass(frozen=True)
class DraftSentence:
    text: str
    citations: tuple[SourceSentence, ...] = ()


# Why a draft holds no sentence, for the reply rules to read (each has its rule). A draft with no
# sentence and no reason ("": for instance no document of the window names what the question asks
# about) lets the next window of the ranking be read.
NO_EVIDENCE = "no_evidence"  # the window holds no sentence, or only instructions
NOTHING_QUOTABLE = "nothing_quotable"  # only headings, titles and questions
NOTHING_RELEVANT = "nothing_relevant"  # no sentence reaches the preset's minimum relevance
AMOUNT_STATED_NOWHERE = "amount_stated_nowhere"  # an amount asked for is stated by no sentence
GENERATOR_DECLINED = "generator_declined"  # the LLM wrote that the sources do not answer
DRAFT_REASONS = (NO_EVIDENCE, NOTHING_QUOTABLE, NOTHING_RELEVANT, AMOUNT_STATED_NOWHERE, GENERATOR_DECLINED)


@dataclass(frozen=True)
class Draft:
    """One generation attempt. ``context`` is every sentence the generator was shown; ``reason``
    (one of ``DRAFT_REASONS``, or "") why it holds no sentence, in words in ``notes``."""

    sentences: tuple[DraftSentence, ...]
    context: tuple[SourceSentence, ...]
    reason: str = ""
    prompt: tuple[dict[str, str], ...] = ()
    raw_output: str = ""
    dropped_citation_ids: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())


class Generator(Protocol):
    def generate(self, question: str, passages: Sequence[ScoredPassage]) -> Draft: ...


def passage_sentences(passages: Sequence[ScoredPassage]) -> list[SourceSentence]:
    return unique_sentences([p.passage.sentences for p in passages])


# A sentence opening with a pronoun or "the move", "this decision": what it is about is named in
# the sentence before it.
# Object forms ("him", "them") never open a sentence.
_REFERS_BACK = re.compile(
    r"^\W*(?:"
    + "|".join(p for p in (*THIRD_PERSON_PRONOUNS, *DEMONSTRATIVES) if p not in ("him", "them"))
    + rf"|such|the\s+{alternation(REFERRING_NOUNS)})\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ExtractiveSettings:
    """How the extractive generator picks sentences (see ``ExtractiveGenerator``)."""

    min_sentences: int = 2
    max_sentences: int = 4
    similarity_weight: float = 0.6  # embedding similarity's share of relevance; the rest is word overlap
    relative_floor: float = 0.6  # a sentence joins when its relevance is this share of the best
    duplicate_similarity: float = 0.92
    min_words: int = 4
    min_relevance: float = 0.0  # below this, quote nothing (reason NOTHING_RELEVANT)
    require_quantity: bool = True  # quote nothing when an amount asked for is stated nowhere
    title_words: bool = True  # the document title's words count as part of each sentence
    weighted_overlap: bool = True  # question words weighted by rarity among the context
    focus_document: bool = False  # answer from the top-ranked passage's document ...
    switch_focus: float = 1.5  # ... unless another's best sentence is this many times as relevant
    # The share of the sentence before it in the meaning of a sentence that refers back: "He was
    # confirmed after difficult Senate hearings" is about the nomination the sentence before names.
    context_weight: float = 0.0
    # A question whose main clause names a time ("what reforms did Qaboos enact in response to the
    # 2011 demonstrations?") is not answered by a sentence that names only other times ("In 1970,
    # QABOOS overthrew his father"): such a sentence joins the answer only as its best sentence.
    same_time: bool = False
    # A sentence below ``relative_floor`` joins only to make up ``min_sentences``, and only when its
    # relevance is at least this share of the best sentence's: "The currency is the Westmere crown"
    # padded the answer to "What is the population of Westmere?" (0: any sentence sharing a word).
    padding_floor: float = 0.0
    # Read the question's shape: each of its parts, and each part asking when, brings in its own
    # sentence, and "happen" counts as no word (on in ``default``; the report's configurations keep
    # their plain extractive answer).
    question_shape: bool = False
    # The headings above a sentence count as part of it: its words join its bag like the title's,
    # and its innermost heading is encoded with it ("Is zlib Y2K-compliant?: Yes.").
    section_context: bool = False
    # Only the retrieved documents about what the question names may answer (``qa.pipeline.reading.subjects``:
    # titles first, then the names held): the highest point "in Oman" is not Nepal's Mount Everest.
    # A window where no document holds them gives no sentence, so the next window is read.
    subject_documents: bool = False
    # Sentences join the answer only from the section of its best sentence (a document's headings,
    # ``SourceSentence.section``): "What uid does the postgres user have?" is not answered with the
    # uids of the sections about other users. A document without headings is one section.
    focus_section: bool = False
    # An answer whose best sentence sits under a heading holds at most this many sentences (0: as
    # ``max_sentences``). A section of an FAQ, a README or a licence is about one thing, and one of its
    # sentences usually answers: "Can zlib process more than 4 GB of data?" quoted the FAQ entry's
    # answer among three more of its sentences (genre set citation F1 +0.014 [+0.002, +0.029];
    # docs/answering.md).
    section_max_sentences: int = 0


class ExtractiveGenerator:
    """Answers with the source sentences themselves, so every citation is exact.

    Relevance is a blend of embedding similarity (meaning) and the share of the
    question's content words a sentence contains, each weighted by how rare it
    is among the context sentences (exact names and terms the embedding may
    blur), counting its document's title as part of it: "Its
    capital is Arlen" answers "What is the capital of Westmere?" because it
    comes from "Westmere: Country Profile". It quotes nothing, and says why
    (``Draft.reason``), when nothing is relevant enough, or when the question asks
    for an amount that no sentence states (the reply rules decide whether that
    refuses). With ``focus_document`` the answer comes from the top-ranked
    passage's document, and other documents may only supply such an amount.
    """

    def __init__(self, embedder: Embedder, settings: ExtractiveSettings = ExtractiveSettings()) -> None:  # noqa: B008 - frozen
        self.embedder = embedder
        self.settings = settings

    def generate(self, question: str, passages: Sequence[ScoredPassage]) -> Draft:
        context = passage_sentences(passages)
        # Instruction-like sentences are an attack, never evidence; headings and
        # "Section: Subsection:" stubs carry no answer.
        usable = [s for s in context if not looks_like_instruction(s.text)]
        candidates = [s for s in usable if len(words(s.text)) >= self.settings.min_words] or usable
        if not candidates:
            return Draft((), tuple(context), reason=NO_EVIDENCE, notes=("no evidence sentences",))
        on_subject = documents_on_subject(question, context) if self.settings.subject_documents else None
        if on_subject is not None:
            candidates = [s for s in candidates if s.document_id in on_subject]
            if not candidates:
                return Draft((), tuple(context), notes=(no_subject_note(question),))

        relevance = self._relevance(question, candidates)
        scores = relevance.scores
        order = [int(i) for i in np.argsort(-scores, kind="stable")]
        best = float(scores[order[0]])
        if best < self.settings.min_relevance:
            note = f"best evidence relevance {best:.3f} is below {self.settings.min_relevance:.3f}"
            return Draft((), tuple(context), reason=NOTHING_RELEVANT, notes=(note,))

        focus = ""
        if self.settings.focus_document and passages:
            focus, order = self._focused(passages, on_subject, order, scores, candidates)
        # Headings, titles and questions help find the document that answers and are quoted by no
        # answer: "Summarize the harbor report." was answered "Harbor Authority Annual Report 2024."
        order = [i for i in order if roles.quotable(candidates[i])]
        if not order:
            return Draft(
                (),
                tuple(context),
                reason=NOTHING_QUOTABLE,
                notes=("no sentence of the context states anything",),
            )
        best = float(scores[order[0]])
        slots = quantity_slots(question) if self.settings.require_quantity else []
        stating, missing = _sentences_stating(slots, order, candidates)
        if missing is not None:
            note = f"no sentence of the context states the amount asked for: {missing.phrase.strip()!r}"
            return Draft((), tuple(context), reason=AMOUNT_STATED_NOWHERE, notes=(note,))
        # A question that asks only for amounts is answered by the sentences stating them and no
        # others: analyst-bench train q003 cited two sentences about voters beside the two stating the
        # ballots and the stations, and "How many containers did the port handle?" was padded with
        # the dredging of the channel to the two-sentence minimum.
        only_amounts = bool(stating) and asks_only_amounts(question, slots)
        # A part asking when is answered by a sentence naming a time: "When did the floods happen and
        # how many people were evacuated?" quoted the headline and the evacuation, not "... to flood on
        # Tuesday". A time stated nowhere is no refusal: many sources date an event only by the
        # document's own date.
        shaped = self.settings.question_shape
        timed = _sentences_stating_any(time_slots(question), order, candidates) if shaped else []
        # ... and every part of a question in parts by the sentence that answers it best: "How many
        # people live in Westmere and what is its capital?" quoted the population and the currency.
        own = [i for i in order if candidates[i].document_id == focus] if focus else order
        by_part = _best_for_parts(question, own, relevance) if shaped else []
        chosen = stating if only_amounts else list(dict.fromkeys([order[0], *stating, *timed, *by_part]))
        chosen = self._join_relevant(
            question,
            chosen,
            order,
            candidates,
            relevance,
            best=best,
            limit=len(stating) if only_amounts else self._most_sentences(candidates[order[0]]),
            only_document=focus if self.settings.focus_document and passages else None,
        )
        picked = _in_reading_order([candidates[i] for i in chosen], context)
        notes = tuple(f"selected {candidates[i].id} relevance {scores[i]:.3f}" for i in chosen)
        return Draft(tuple(DraftSentence(s.text, (s,)) for s in picked), tuple(context), notes=notes)

    def _focused(self, passages, on_subject, order: list[int], scores, candidates) -> tuple[str, list[int]]:
        """The document to answer from (the best-ranked on the question's subject), and ``order`` with
        its sentences first: other documents only supply an amount it lacks."""
        ranked = [p.passage.document_id for p in passages]
        top = next((d for d in ranked if on_subject is None or d in on_subject), ranked[0])
        focus = self._focus(top, order, scores, candidates)
        in_focus = [i for i in order if candidates[i].document_id == focus]
        return focus, in_focus + [i for i in order if candidates[i].document_id != focus]

    def _join_relevant(
        self,
        question: str,
        chosen: list[int],
        order: list[int],
        candidates: Sequence[SourceSentence],
        relevance: _Relevance,
        *,
        best: float,
        limit: int,
        only_document: str | None,
    ) -> list[int]:
        """``chosen`` (the sentences the answer must hold) and after them, in ``order``, each sentence
        whose relevance is ``relative_floor`` of ``best``'s, or that makes up ``min_sentences``, until
        there are ``limit`` (never over ``max_sentences``). None joins that repeats a chosen one, is
        about another time than the one asked (``same_time``) or, given ``only_document``, comes
        from another document."""
        settings, scores = self.settings, relevance.scores
        period = asked_period(question) if settings.same_time else None
        for i in order:
            if len(chosen) >= min(limit, settings.max_sentences):
                break
            if i in chosen or self._duplicates(i, chosen, candidates, relevance.vectors):
                continue
            if period is not None and about_another_time(candidates[i].text, period):
                continue
            if only_document is not None and candidates[i].document_id != only_document:
                continue
            if settings.focus_section and not _same_section(candidates[i], candidates[chosen[0]]):
                continue
            relevant = scores[i] >= settings.relative_floor * best
            padding = (
                len(chosen) < settings.min_sentences
                and relevance.lexical[i] > 0
                and scores[i] >= settings.padding_floor * best
            )
            if relevant or padding:
                chosen.append(i)
        return chosen

    def _relevance(self, question: str, candidates: Sequence[SourceSentence]) -> _Relevance:
        """Each candidate's relevance: embedding similarity blended with rarity-weighted word overlap."""
        vectors = own_vectors = None
        similarity = np.zeros(len(candidates))
        if self.settings.similarity_weight > 0:
            texts = [self._in_section(s) for s in candidates]
            # A sentence read led by its heading is also encoded alone, in the same call, for the
            # repeat check: under one heading most of what is encoded is the heading, so the zlib
            # FAQ's "Yes." and "Please read the license in zlib.h." (cosine 0.02 alone) read as
            # repeats (0.94), and "Does zlib infringe on any patents?" lost "As far as we know, no.".
            led = [i for i, s in enumerate(candidates) if texts[i] != s.text]
            encoded = np.asarray(self.embedder.encode([question, *texts, *(candidates[i].text for i in led)]))
            vectors, own_vectors = encoded[: len(texts) + 1], encoded[: len(texts) + 1].copy()
            own_vectors[[i + 1 for i in led]] = encoded[len(texts) + 1 :]
            similarity = cosine_matrix(vectors[:1], self._in_context(vectors[1:], candidates))[0]
        question_words = content_words(question)
        titles: dict[str, set[str]] = {}
        if self.settings.title_words:
            titles = {s.document_id: content_words(s.document_title) for s in candidates}
        bags = [content_words(s.text) | titles.get(s.document_id, set()) for s in candidates]
        if self.settings.section_context:
            bags = [bag | content_words(s.section) for bag, s in zip(bags, candidates, strict=True)]
        if self.settings.question_shape:
            # A year asked about is a word to match like any other: "What will the authority do by
            # 2027?" quoted the staff, the dredging and the revenue before the 2027 plan.
            question_words = (question_words - _EVENT_WORDS) | _years(question)
            bags = [bag | _years(s.text) for bag, s in zip(bags, candidates, strict=True)]
        weight = (
            _context_idf(question_words, bags)
            if self.settings.weighted_overlap
            else dict.fromkeys(question_words, 1.0)
        )
        return _Relevance(
            similarity, bags, weight, self.settings.similarity_weight, own_vectors, question_words
        )

    def _most_sentences(self, best: SourceSentence) -> int:
        """How many sentences an answer whose best sentence is ``best`` may hold."""
        under_heading = bool(best.section) and self.settings.section_max_sentences > 0
        return self.settings.section_max_sentences if under_heading else self.settings.max_sentences

    def _in_section(self, sentence: SourceSentence) -> str:
        return (
            roles.in_section(sentence.text, sentence.section)
            if self.settings.section_context
            else sentence.text
        )

    def _focus(self, top: str, order: Sequence[int], scores: np.ndarray, candidates) -> str:
        """The document the answer comes from: the top-ranked passage's, unless a sentence of another
        scores ``switch_focus`` times its best sentence or more. "What did officials say about the
        port?" ranks the port report first, but only the flood report quotes officials (relevance
        0.71 against 0.41, a ratio of 1.71). On analyst-bench train (full corpus) one question
        passes 1.5 (q017, 1.82, whose top-ranked document is not the gold one; F1 unchanged) and the
        next is at 1.03. Always answering from the best sentence's document cost train citation F1
        0.537 -> 0.488: long questions share words with sentences of other articles."""
        best_in_top = next((float(scores[i]) for i in order if candidates[i].document_id == top), 0.0)
        best = candidates[order[0]]
        return best.document_id if scores[order[0]] >= self.settings.switch_focus * best_in_top else top

    def _in_context(self, vectors: np.ndarray, candidates: Sequence[SourceSentence]) -> np.ndarray:
        """The vector of each candidate that opens by referring back ("He ...", "The move ...")
        blended with the one of the candidate just before it in its document (``context_weight``),
        renormalised; every other candidate keeps its own."""
        weight = self.settings.context_weight
        if weight <= 0:
            return vectors
        row = {(s.document_id, s.ordinal): i for i, s in enumerate(candidates)}
        blended = vectors.astype(np.float64, copy=True)
        for i, sentence in enumerate(candidates):
            if not _REFERS_BACK.match(sentence.text):
                continue
            before = row.get((sentence.document_id, sentence.ordinal - 1))
            if before is not None:
                blended[i] += weight * vectors[before]
        norms = np.linalg.norm(blended, axis=1, keepdims=True)
        return blended / np.where(norms > 0, norms, 1.0)

    def _duplicates(self, index, chosen, candidates, vectors) -> bool:
        words_i = content_words(candidates[index].text)
        for j in chosen:
            if jaccard(words_i, content_words(candidates[j].text)) >= 0.8:
                return True
            if vectors is not None:
                if (
                    cosine_matrix(vectors[index + 1], vectors[j + 1])[0, 0]
                    >= self.settings.duplicate_similarity
                ):
                    return True
        return False


def no_subject_note(question: str) -> str:
    return f"no document of this window names {', '.join(sorted(question_names(question)))}"


def _sentences_stating(
    slots: Sequence[QuantitySlot], order: Sequence[int], candidates: Sequence[SourceSentence]
) -> tuple[list[int], QuantitySlot | None]:
    """The best-ranked sentence stating each amount asked for, or the first slot none states.

    Every amount must be stated by some sentence of the context, of the right kind and about the
    right thing (the slot's focus words, not the whole question: in "how many containers ..., and
    how many staff ..." the staff sentence is relevant to one part only); otherwise the draft quotes
    nothing (``AMOUNT_STATED_NOWHERE``), and the honest reply is a refusal.
    """
    stating: list[int] = []
    for slot in slots:
        first = _first_stating(slot, order, candidates)
        if first is None:
            return stating, slot
        if first not in stating:
            stating.append(first)
    return stating, None


def _first_stating(
    slot: QuantitySlot, order: Sequence[int], candidates: Sequence[SourceSentence]
) -> int | None:
    """The best-ranked sentence whose amount counts what the slot asks about, else the best-ranked
    one satisfying it at all, or None. "How many staff does the Port of Westmere employ?" was
    answered "... a population of about 3.1 million people": an amount and "Westmere", not staff."""
    loose = [i for i in order if slot.satisfied_by(candidates[i].text)]
    counting = (
        i for i in loose if slot_states_amount(slot, candidates[i].text, candidates[i].document_title)
    )
    return next(counting, loose[0] if loose else None)


@dataclass(frozen=True)
class _Relevance:
    """The candidates' relevance to a question (``ExtractiveGenerator._relevance``): embedding
    similarity (``similarity_weight`` of it) blended with the share of the question's words each
    holds, its document title counting, each word weighted by its rarity among the candidates."""

    similarity: np.ndarray
    bags: Sequence[set[str]]  # each candidate's content words, its title's included
    weight: dict[str, float]  # each question word's rarity weight
    similarity_weight: float
    # The question's vector, then each candidate's own words' (without its heading): what the repeat
    # check compares. None: not encoded.
    vectors: np.ndarray | None
    question_words: set[str]

    @cached_property
    def lexical(self) -> np.ndarray:
        return self.overlap(self.question_words)

    @cached_property
    def scores(self) -> np.ndarray:
        return self.blend(self.lexical)

    def overlap(self, asked: set[str]) -> np.ndarray:
        """Each candidate's share of the ``asked`` words, weighted by rarity."""
        total = sum(self.weight.get(w, 0.0) for w in asked) or 1.0
        return np.array([sum(self.weight.get(w, 0.0) for w in asked & bag) / total for bag in self.bags])

    def blend(self, overlap: np.ndarray) -> np.ndarray:
        """Each candidate's relevance, given its ``overlap`` with the words asked (the whole
        question's, or one part's)."""
        return self.similarity_weight * self.similarity + (1 - self.similarity_weight) * overlap


def _best_for_parts(question: str, order: Sequence[int], relevance: _Relevance) -> list[int]:
    """For a question in parts, the most relevant sentence of ``order`` for each part, over the
    part's own words, first in ``order`` among equals. [] for a question of one part; a part that
    no sentence of ``order`` shares a word with brings none."""
    parts = question_parts(question)
    found = []
    for part in parts if len(parts) > 1 else ():
        asked = content_words(part) - _EVENT_WORDS
        shared = relevance.overlap(asked)
        scores = relevance.blend(shared)
        sharing = [i for i in order if shared[i] > 0]
        if sharing:
            found.append(max(sharing, key=lambda i: scores[i]))
    return list(dict.fromkeys(found))


def _same_section(sentence: SourceSentence, best: SourceSentence) -> bool:
    return sentence.document_id == best.document_id and sentence.section == best.section


def _years(text: str) -> set[str]:
    """The years a text names, as words ("2027"), which ``content_words`` leaves out with numbers."""
    return {str(int(value)) for value in years_named(text)}


def _in_reading_order(
    sentences: Sequence[SourceSentence], context: Sequence[SourceSentence]
) -> list[SourceSentence]:
    """Documents by retrieval rank (their first sentence in ``context``), sentences by position."""
    doc_rank: dict[str, int] = {}
    for sentence in context:
        doc_rank.setdefault(sentence.document_id, len(doc_rank))
    return sorted(sentences, key=lambda s: (doc_rank[s.document_id], s.ordinal))


def _sentences_stating_any(
    slots: Sequence[QuantitySlot], order: Sequence[int], candidates: Sequence[SourceSentence]
) -> list[int]:
    """The best-ranked sentence satisfying each slot that some sentence satisfies (no finding for
    the others, as ``_sentences_stating`` makes)."""
    found = (_first_stating(slot, order, candidates) for slot in slots)
    return list(dict.fromkeys(i for i in found if i is not None))


def asked_period(question: str) -> tuple[int, int] | None:
    """The years a question is about, when its main clause names a time; else None.

    Only the main (first) clause decides: in "How did Dominica become independent, and what
    shift in 1980 changed it?" the year narrows the second part alone, and the first asks
    about every century before it. When the main clause names one, the span runs over every
    time the question names ("the 2022 default ... and the one of the late 1990s").
    """
    main = main_clause(question)
    if not year_spans(main):
        return None
    spans = year_spans(question)
    return min(first for first, _ in spans), max(last for _, last in spans)


def about_another_time(text: str, period: tuple[int, int], *, slack: int = 1) -> bool:
    """Whether every time the text names lies outside ``period`` (by more than ``slack`` years);
    a text naming no time is about no other time."""
    spans = year_spans(text)
    start, end = period[0] - slack, period[1] + slack
    return bool(spans) and all(last < start or first > end for first, last in spans)


# "What happened in southern Westmere?": the event is what the sentence tells, not a word it uses.
# Counted, "happen" outweighed "southern" and "Westmere" together (no sentence has it, so its rarity
# weight was the highest) and the answer quoted the country profile, not the flood report.
_EVENT_WORDS = content_words(" ".join(EVENT_WORDS))

# Words that frame a question ("Based only on this article, ...") without asking anything.
_FRAMING_WORDS = content_words(" ".join(SOURCE_FRAMING_WORDS))


def asks_only_amounts(question: str, slots: Sequence[QuantitySlot]) -> bool:
    """Every content word of the question lies inside one of its amount slots ("how many X ...,
    and how many Y ..."): nothing else is asked, so the sentences stating the amounts are the answer."""
    inside = set().union(*(content_words(slot.phrase) for slot in slots))
    return bool(slots) and not (content_words(question) - inside - _FRAMING_WORDS)


def _context_idf(question_words: set[str], bags: Sequence[set[str]]) -> dict[str, float]:
    """Each question word's inverse frequency among the context sentences (smoothed, > 0).

    A word every sentence shares (the country a Factbook entry is about) says
    little about which sentence answers; a rarer one ("capital") says more.
    """
    n = len(bags)
    return {w: float(np.log((n + 1) / (0.5 + sum(w in bag for bag in bags)))) for w in question_words}


def overlap_generator(embedder: Embedder, *, sentences: int = 3) -> ExtractiveGenerator:
    """The report's BM25 baseline answer: the sentences sharing most words with the question.

    No embedding, no relevance floor, no amount required: a baseline to measure the other
    generators against.
    """
    return ExtractiveGenerator(
        embedder,
        ExtractiveSettings(
            min_sentences=sentences,
            max_sentences=sentences,
            similarity_weight=0.0,
            relative_floor=0.0,
            require_quantity=False,
            title_words=False,
            weighted_overlap=False,
        ),
    )
