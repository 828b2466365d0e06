"""A conversation turn's reply kind: ask back, refuse, or answer, learned from signals.

A follow-up can point at something the conversation never named ("this
outpatient clinic", "the animal"), at one of several things the documents
describe alike ("this language": Spanish, Italian, Xhosa), or at something the
corpus does not hold. ``turn_signals`` reads one turn into plain numbers
(``TurnSignals``) from what the pipeline already computed: answerability's
probability for the turn as searched and as asked, the focus words the passages
lack, what the rewrite could not resolve, and how many things of that kind the
passages name. ``SoftmaxModel`` turns them into p(kind) over the answer kinds
answerability defines (answerable, partial, underspecified, unanswerable), and
``classify_turn`` asks back, refuses or answers by the stored thresholds
(``TurnKindModel.decide``). The stage that uses it is ``before_answer.learned_turn``.

The model and thresholds were fitted on the MTRAG-UN slice's *train* half only
(``bench/turn_kinds.py --write``; ``trained_on`` in ``turn_kind_model.json``
says what it saw), with nested cross-validation within train. Everything here is
heuristic and labelled so in the notes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from qa.pipeline.checks.answerability import (
    ANSWER_KINDS,
    ANSWERABLE,
    UNANSWERABLE,
    UNDERSPECIFIED,
    AnswerabilityVerdict,
    AnswerKind,
)
from qa.pipeline.core.lexicon import ARTICLES, THIRD_PERSON_PRONOUNS, alternation
from qa.pipeline.core.model_parts import PipelineModels, default_models
from qa.pipeline.core.protocols import TurnKindClassifier
from qa.pipeline.core.text import STOPWORDS, stem, words
from qa.pipeline.core.types import ScoredPassage
from qa.pipeline.dialogue.conversation import Rewrite, rewrite
from qa.pipeline.reading.questions import analyse_question, names_too_little

if TYPE_CHECKING:
    from qa.pipeline.dialogue.question_reading import QuestionReading

MODEL_PATH = Path(__file__).with_name("turn_kind_model.json")

# A run of capitalised words on one line (a name never spans a line break: page menus and
# headings sit on lines of their own).
_NAME_RUN = re.compile(r"(?:[A-Z][\w.'&-]*[^\S\n]+){0,4}[A-Z][\w.'&-]*")
# A full stop after a word of four letters or more ends a sentence ("Police Department. Police
# officers"); after a shorter one it is an abbreviation ("St. Louis", "U.S. Army").
_SENTENCE_END = re.compile(r"(?<=\w{4})\.\s")
_PRONOUN = re.compile(rf"\b{alternation(THIRD_PERSON_PRONOUNS)}\b", re.IGNORECASE)


@dataclass(frozen=True)
class TurnSignals:
    """One turn as the model sees it; every field a plain number."""

    unresolved: float  # 1 when "this X"/"a specific X" points at nothing the conversation names
    reference_options: float  # things of the unresolved (or "the X") kind the passages name, /4
    definite_unnamed: float  # 1 when a "the X" names nothing earlier (and nothing in the question)
    pronoun: float  # 1 when the turn says "it", "they", ... (resolved from memory or not)
    vague: float  # 1 when the question has at most one focus word (a rule, not a model input)
    # Distinct titles among the top passages scoring within 0.05 of the best, less one, /4: several
    # things of one kind matching equally well ("this language": Spanish, Italian, Xhosa).
    competing_titles: float
    # Distinct titles among the top passages that each hold at least half the focus words, less one,
    # /4: the question fits several documents' subjects (ambiguous), not just one (or none).
    covered_titles: float
    earlier_turns: float  # turns before this one, /8, at most 1
    shared_words: float  # share of the turn's content words the conversation already used
    # What answerability made of the turn (``turn_signals``' ``verdict``; 0 when not judged, as in
    # runs stored before these fields): its probability for the turn as searched and for the turn
    # as asked (references left as written; the same when the rewrite changed nothing), the
    # reader's and the best sentence's scores, the share of focus words the passages hold, whether
    # the lexical and dense retrievers agree on the top document, and whether a hard rule refused.
    answerable: float = 0.0
    as_asked: float = 0.0
    reader: float = 0.0
    best_cosine: float = 0.0
    focus_coverage: float = 0.0
    agreement: float = 0.0
    ruled_out: float = 0.0
    # Focus words no top passage holds (qa.pipeline.dialogue.gaps.missing_parts), /4 at most 1, and 1 when
    # one of them is a name the turn writes capitalised (the passages are about something else).
    missing_words: float = 0.0
    name_missing: float = 0.0
    # 1 when every missing word is one the rewrite put in (a pronoun's reading, a carried subject):
    # the turn as written is covered, its reading is what the passages lack.
    reading_missing: float = 0.0

    def vector(self, names: Sequence[str]) -> list[float]:
        return [getattr(self, name) for name in names]


SIGNAL_NAMES: tuple[str, ...] = tuple(TurnSignals.__dataclass_fields__)


def turn_signals(
    question: str,
    conversation: Rewrite | None,
    ranked: Sequence[ScoredPassage],
    *,
    top: int = 5,
    verdict: AnswerabilityVerdict | None = None,
    as_asked: AnswerabilityVerdict | None = None,
    missing: Sequence[str] = (),
    models: PipelineModels | None = None,
    reading: QuestionReading | None = None,
) -> TurnSignals:
    """``question`` as asked; ``conversation`` its rewrite (None: a first turn); ``ranked`` the
    passages retrieved for the rewrite, best first; ``verdict`` answerability's for the rewrite and
    ``as_asked`` for the turn as asked (None: not judged; the same verdict when the rewrite changed
    nothing); ``missing`` the rewrite's focus words no top passage holds; ``reading`` the turn as
    read once (``PipelineRun.reading``), used when it read the rewrite's question."""
    turn = conversation if conversation is not None else rewrite(question, (), models=models)
    if reading is not None and reading.question == turn.question:
        analysis = reading.analysis()
    else:
        analysis = analyse_question(turn.question)
    head = list(ranked[:top])
    options = 0
    for phrase in (*turn.unresolved, *turn.definite):
        options = max(options, len(named_of_kind(words(phrase)[-1], head, exclude=question)))
    return TurnSignals(
        unresolved=float(bool(turn.unresolved)),
        reference_options=min(options, 4) / 4,
        definite_unnamed=float(bool(turn.definite)),
        pronoun=float(bool(_PRONOUN.search(question))),
        vague=float(names_too_little(turn.question, head, analysis=analysis)),
        competing_titles=_competing_titles(head),
        covered_titles=_covered_titles(analysis.focus, head),
        earlier_turns=min(turn.earlier_turns, 8) / 8,
        shared_words=turn.shared_words,
        **_answerability_fields(verdict, as_asked or verdict),
        missing_words=min(len(missing), 4) / 4,
        name_missing=float(bool(names_missing(question, missing))),
        reading_missing=float(only_the_reading(conversation, missing)),
    )


def _answerability_fields(
    verdict: AnswerabilityVerdict | None, as_asked: AnswerabilityVerdict | None
) -> dict:
    if verdict is None:
        return {}
    judged = verdict.signals
    return {
        "answerable": verdict.probability,
        "as_asked": as_asked.probability if as_asked is not None else verdict.probability,
        "reader": judged.reader_answerable if judged else 0.0,
        "best_cosine": judged.best_sentence_cosine if judged else 0.0,
        "focus_coverage": judged.focus_coverage if judged else 0.0,
        "agreement": judged.retriever_agreement if judged else 0.0,
        "ruled_out": float(verdict.by_rule and verdict.kind == UNANSWERABLE),
    }


def names_missing(question: str, missing: Sequence[str]) -> tuple[str, ...]:
    """The missing words the question writes capitalised past its first word ("Spanish", "EDGE"):
    a name no passage mentions means the passages are about something else.

    A capitalised word followed by another one the passages do mention is a title or the first
    part of a name they mention: "General Lord Richards" is named by "Gen Lord Richards", and
    "President Biden" by "Biden" (analyst-bench train q015 was refused for want of 'general')."""
    later = re.findall(r"[A-Za-z][A-Za-z'-]*", question)[1:]
    lacking = {m.lower() for m in missing}
    capitalised = {
        token.lower()
        for token, after in zip(later, [*later[1:], ""], strict=False)
        if token[0].isupper() and not (after[:1].isupper() and after.lower() not in lacking)
    }
    return tuple(m for m in missing if m.lower() in capitalised)


def only_the_reading(conversation: Rewrite | None, missing: Sequence[str]) -> bool:
    """Whether every word the passages lack is one the rewrite put in (a pronoun's reading, a carried
    subject): the turn as the analyst wrote it is covered, so a partial answer would blame the
    sources for the rewrite's guess ("the sources do not cover 'causeway'" for "this outpatient
    clinic" read as the Causeway VA Clinic)."""
    if conversation is None or not missing:
        return False
    added = {w for said, meant in conversation.resolved for w in words_put_in(said, meant)}
    added |= {stem(w) for subject in conversation.carried for w in words(subject)}
    return all(stem(w) in added for m in missing for w in words(m))


def words_put_in(said: str, meant: str) -> set[str]:
    """The stems the reading added to what the analyst wrote (an ellipsis's reading repeats most of it)."""
    return {stem(w) for w in words(meant)} - {stem(w) for w in words(said)}


def _title(hit: ScoredPassage) -> str:
    return (hit.passage.document_title or hit.passage.document_id).strip().lower()


def _competing_titles(head: Sequence[ScoredPassage], margin: float = 0.05) -> float:
    scored = [
        (hit.scores.get("sentence_similarity", hit.scores.get("dense", 0.0)), _title(hit)) for hit in head
    ]
    if not scored:
        return 0.0
    best = max(score for score, _ in scored)
    return min(len({title for score, title in scored if score >= best - margin}) - 1, 4) / 4


def _covered_titles(focus: frozenset[str], head: Sequence[ScoredPassage]) -> float:
    if not focus:
        return 0.0
    titles = set()
    for hit in head:
        bag = {stem(w) for w in words(hit.passage.text + " " + hit.passage.document_title)}
        if len(focus & bag) >= len(focus) / 2:
            titles.add(_title(hit))
    return max(len(titles) - 1, 0) / 4


def named_of_kind(noun: str, ranked: Sequence[ScoredPassage], *, exclude: str) -> tuple[str, ...]:
    """Capitalised names in the passages whose last word is ``noun`` ("Auburn Police Department"
    for "department"), most frequent first, at most four: the choices a clarifying question offers.
    A name ends in the kind of thing it names; a run where the noun sits elsewhere is a heading or a
    menu ("Nutrition Services CalFresh Program", "About NASA's Mission Join Us")."""
    wanted = stem(noun.lower())
    counts: dict[str, int] = {}
    for hit in ranked:
        for line in _name_sources(hit):
            for match in _NAME_RUN.finditer(line):
                name = _clean_name(match.group())
                tokens = words(name)
                if (
                    len(tokens) > 1
                    and stem(tokens[-1]) == wanted
                    and not _GLUED.search(name)
                    and name.lower() not in exclude.lower()
                ):
                    counts[name] = counts.get(name, 0) + 1
    return tuple(sorted(counts, key=lambda n: -counts[n])[:4])


def _clean_name(run: str) -> str:
    """A run of capitalised words as a name: one sentence of it, without a leading article ("The
    Auburn Police Department" is the same choice as "Auburn Police Department"; the question puts
    "the" back), cut before a capitalised function word (a heading's "California State Library The
    State", "Humans In Space") and without a possessive's "'s"."""
    name = _SENTENCE_END.split(" ".join(run.split()))[0].strip(" .")
    name = _ARTICLE.sub("", name)
    kept = []
    for position, word in enumerate(name.split()):
        if position and word.lower() in STOPWORDS:
            break
        kept.append(word)
    return re.sub(r"['\u2019]s$", "", " ".join(kept))


# Menu items run together when a page is flattened ("HomeDepartmentsSolid Waste"): a word whose
# capital follows three lower-case letters is a seam, not a name ("McDonald" has one).
_GLUED = re.compile(r"[a-z]{3}[A-Z]")
_ARTICLE = re.compile(rf"^{alternation(article.capitalize() for article in ARTICLES)}\s+(?=\S)")
_PROSE_WORD = re.compile(r"(?<![\w'])[a-z][a-z']{2,}\b")


def _name_sources(hit: ScoredPassage) -> list[str]:
    """Where a passage names things: its lines that read as prose (a full stop at the end, or two
    lower-case words of three letters or more) and its title's parts ("Salary And Benefits | VA
    Birmingham Health Care"). Web pages open with navigation ("Skip to Main Content", "Contact
    Us", "Services"): lines of capitalised words only, which would otherwise be offered as things
    the asker might mean."""
    prose = [
        line
        for line in hit.passage.text.splitlines()
        if len(_PROSE_WORD.findall(line)) >= 2 or line.rstrip().endswith((".", "!", "?"))
    ]
    return prose + re.split(r"\s+[|:\u2013-]\s+|\|", hit.passage.document_title)


# --- the learned decision -------------------------------------------------------------------


@dataclass(frozen=True)
class SoftmaxModel:
    """p(kind) = softmax(intercept + coef . (x - mean) / scale) over ``kinds``: one multinomial
    logistic regression, fitted by ``fit`` (bench/turn_kinds.py) and stored as JSON."""

    kinds: tuple[str, ...]
    names: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[tuple[float, ...], ...]  # one row per kind
    intercept: tuple[float, ...]

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """(n, kinds) probabilities for rows of signals in ``names`` order."""
        x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        z = (
            np.array(self.intercept)
            + ((x - np.array(self.mean)) / np.array(self.scale)) @ np.array(self.coef).T
        )
        return _softmax(z)

    @classmethod
    def fit(
        cls,
        x: np.ndarray,
        labels: Sequence[str],
        kinds: Sequence[str],
        names: Sequence[str],
        *,
        l2: float = 1.0,
    ) -> SoftmaxModel:
        """Maximum likelihood with an L2 penalty on the weights (not the intercepts), by Newton's
        method with step halving: a few dozen parameters, so the full Hessian is cheap."""
        x = np.asarray(x, dtype=np.float64)
        mean, scale = x.mean(axis=0), x.std(axis=0)
        scale[scale == 0] = 1.0
        design = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
        target = np.array([[label == kind for kind in kinds] for label in labels], dtype=np.float64)
        k, d = len(kinds), design.shape[1]
        # A tiny ridge on the intercepts too: softmax is unchanged by adding one constant to all.
        ridge = np.tile(np.r_[1e-6, np.full(d - 1, l2)], k)

        def loss(w: np.ndarray) -> float:
            z = design @ w.reshape(k, d).T
            z -= z.max(axis=1, keepdims=True)
            log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
            return float(-(target * log_p).sum() + 0.5 * (ridge * w * w).sum())

        weights = np.zeros(k * d)
        for _ in range(100):
            p = _softmax(design @ weights.reshape(k, d).T)
            gradient = ((p - target).T @ design).ravel() + ridge * weights
            hessian = np.zeros((k * d, k * d))
            for a in range(k):
                for b in range(k):
                    w_ab = p[:, a] * ((a == b) - p[:, b])
                    hessian[a * d : (a + 1) * d, b * d : (b + 1) * d] = design.T @ (design * w_ab[:, None])
            step = np.linalg.solve(hessian + np.diag(ridge), gradient)
            size, before = 1.0, loss(weights)
            while loss(weights - size * step) > before and size > 1e-4:
                size /= 2
            weights = weights - size * step
            if np.abs(size * step).max() < 1e-8:
                break
        w = weights.reshape(k, d)
        return cls(
            tuple(kinds), tuple(names), tuple(mean), tuple(scale), tuple(map(tuple, w[:, 1:])), tuple(w[:, 0])
        )

    def to_json(self) -> dict:
        return {
            "kinds": list(self.kinds),
            "names": list(self.names),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "coef": [list(row) for row in self.coef],
            "intercept": list(self.intercept),
        }

    @classmethod
    def from_json(cls, data: dict) -> SoftmaxModel:
        return cls(
            tuple(data["kinds"]),
            tuple(data["names"]),
            tuple(data["mean"]),
            tuple(data["scale"]),
            tuple(tuple(row) for row in data["coef"]),
            tuple(data["intercept"]),
        )


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class TurnKindModel:
    """p(kind) over the answer kinds and the two thresholds chosen on the tuning data: ask back when
    p(underspecified) reaches ``clarify_threshold``, else refuse when p(unanswerable) reaches
    ``refuse_threshold``, else answer (in full or in part, as the passages allow)."""

    kinds: SoftmaxModel
    clarify_threshold: float
    refuse_threshold: float
    trained_on: str = ""

    @classmethod
    def from_json(cls, data: dict) -> TurnKindModel:
        return cls(
            kinds=SoftmaxModel.from_json(data["kinds"]),
            clarify_threshold=float(data["clarify_threshold"]),
            refuse_threshold=float(data["refuse_threshold"]),
            trained_on=data.get("trained_on", ""),
        )

    def to_json(self) -> dict:
        return {
            "trained_on": self.trained_on,
            "clarify_threshold": self.clarify_threshold,
            "refuse_threshold": self.refuse_threshold,
            "kinds": self.kinds.to_json(),
        }

    def decide(self, probabilities: Sequence[float]) -> AnswerKind:
        """The reply for one turn's p(kind) (in ``kinds.kinds`` order); the bench's cross-validation
        calls this too, so what it measures is what runs."""
        p = dict(zip(self.kinds.kinds, probabilities, strict=True))
        if p[UNDERSPECIFIED] >= self.clarify_threshold:
            return UNDERSPECIFIED
        if p[UNANSWERABLE] >= self.refuse_threshold:
            return UNANSWERABLE
        return ANSWERABLE


def load_turn_model(path: Path | str | None = MODEL_PATH) -> TurnKindModel:
    """The model in ``path`` (None or empty: the shipped file); the factory calls this once."""
    with Path(path or MODEL_PATH).open(encoding="utf-8") as handle:
        return TurnKindModel.from_json(json.load(handle))


@dataclass(frozen=True)
class TurnKindVerdict:
    """``kind``: ``underspecified`` (ask back), ``unanswerable`` (refuse) or ``answerable`` (answer,
    in part when the passages lack some of what is asked). Traces stored before the four kinds say
    "clarify" or "answer"."""

    kind: str
    p_underspecified: float
    reason: str
    signals: TurnSignals
    # p(kind) for each answer kind, in ANSWER_KINDS order (empty in traces stored before them).
    probabilities: tuple[float, ...] = ()

    @property
    def clarifies(self) -> bool:
        return self.kind in (UNDERSPECIFIED, "clarify")


def classify_turn(
    signals: TurnSignals, model: TurnKindClassifier | None = None, *, refers: bool = True
) -> TurnKindVerdict:
    """Ask back when the question is vague (a rule: nothing to search for) or the model says so;
    refuse or answer as it says otherwise. Clarifying comes first: a turn that points at nothing
    cannot be judged against the corpus, so refusing it would blame the documents.

    ``refers``: whether the turn holds a reference the reader must fill in (a pronoun or a
    demonstrative read from the conversation, a "the X" nothing named). A turn without one names
    its own subject ("What do you mean by binary options?"), so there is no "which one?" to ask,
    whatever the model's probability: it is refused or answered as the model's other kinds say.
    ``model``: the pipeline's (None: ``default_models().turn_kind``)."""
    model = model or default_models().turn_kind
    row = model.kinds.probabilities(signals.vector(model.kinds.names))[0]
    by_kind = dict(zip(model.kinds.kinds, (float(v) for v in row), strict=True))
    probabilities = tuple(by_kind.get(kind, 0.0) for kind in ANSWER_KINDS)
    shown = ", ".join(f"{kind} {by_kind[kind]:.2f}" for kind in model.kinds.kinds)
    if signals.vague:
        return TurnKindVerdict(
            UNDERSPECIFIED,
            by_kind[UNDERSPECIFIED],
            "the question names too little to search for",
            signals,
            probabilities,
        )
    kind = model.decide(row)
    reason = (
        f"p(kind): {shown}; ask back at p(underspecified) >= {model.clarify_threshold:.2f}, "
        f"refuse at p(unanswerable) >= {model.refuse_threshold:.2f}"
    )
    if kind == UNDERSPECIFIED and not refers:
        kind = UNANSWERABLE if by_kind[UNANSWERABLE] >= model.refuse_threshold else ANSWERABLE
        reason += "; not asked back: the turn names its own subject and leaves no reference open"
    return TurnKindVerdict(kind, by_kind[UNDERSPECIFIED], reason, signals, probabilities)
