"""Splitting a multi-part question into sub-questions that can each be searched and answered.

Two planners, one result type (``Plan``):

- ``rule_plan`` needs no model. It splits where the question itself marks
  parts: several questions in one turn ("When was X founded? Who runs it
  now?"), a second wh-question joined by "and" ("How many staff ... and what
  is the capital of ...?"), "compare X and Y" / "the difference between X and
  Y", and a list of things asked about one subject ("the population, capital
  and currency of Westmere"). A later part that says "it" or "its" gets the
  earlier part's subject through conversation memory, so each part stands
  alone. Anything else is one part: a wrong split costs more than none, since
  every part is answered (or refused) on its own.
- ``llm_plan`` asks the LLM for the sub-questions, one per line. A reply that
  cannot be read as a plan (empty, more than ``MAX_PARTS``, parts sharing no
  word with the question) or a failed call falls back to the rules, and the
  plan's note says why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from qa.pipeline.core.lexicon import (
    ATTRIBUTE_PREPOSITIONS,
    AUXILIARIES,
    COMPARISON_JOINERS,
    COPULAS,
    DEMONSTRATIVES,
    FRAMED_DOCUMENT_NOUNS,
    NON_POSSESSIVE_PRONOUNS,
    QUESTION_JOINERS,
    SUBJECT_PREPOSITIONS,
    THIRD_PERSON_PRONOUNS,
    WH_WORDS,
    alternation,
)
from qa.pipeline.core.llm import LLMError
from qa.pipeline.core.model_parts import PipelineModels
from qa.pipeline.core.protocols import LLM
from qa.pipeline.core.text import content_words, stem
from qa.pipeline.dialogue.conversation import rewrite

MAX_PARTS = 4
PlanMethod = Literal["rules", "llm", "single"]

_WH = alternation(WH_WORDS)
# Where a second question starts inside one sentence: a wh-word after "and" / "; " / ", but",
# or an auxiliary after ", and" (", and did it ..."): "and" alone joins names too often.
_JOIN = re.compile(
    rf"(?:,?\s+{alternation(QUESTION_JOINERS)}\s+|;\s*)(?={_WH}\b)"
    rf"|,\s+and\s+(?={alternation(AUXILIARIES)}\s)",
    re.IGNORECASE,
)
_COMPARE = re.compile(
    r"^\s*(?:please\s+)?compare\s+(?:the\s+)?(?:(?P<attr>[\w\s'-]+?)\s+"
    rf"{alternation(ATTRIBUTE_PREPOSITIONS)}\s+)?"
    rf"(?P<a>.+?)\s+{alternation(COMPARISON_JOINERS)}\s+(?P<b>.+?)\s*[?.]?\s*$",
    re.IGNORECASE,
)
# The copulas as the difference pattern was written, "was" left out.
_DIFFERENCE_COPULAS = alternation(copula for copula in COPULAS if copula != "was")
_DIFFERENCE = re.compile(
    rf"^\s*(?:what\s+{_DIFFERENCE_COPULAS}\s+)?(?:the\s+)?(?:main\s+)?(?:differences?|similarities)\s+between\s+"
    r"(?P<a>.+?)\s+and\s+(?P<b>.+?)\s*[?.]?\s*$",
    re.IGNORECASE,
)
# "What are the population, capital and currency of Westmere?": the items, then "of/in/for" and
# the subject. Two items need a plural verb ("are", "were"): "What is the research and development
# budget of X" asks one thing.
_LIST = re.compile(
    rf"^\s*(?P<wh>what|which)\s+(?P<verb>{'|'.join(COPULAS)})\s+(?:the\s+)?(?P<items>.+?)\s+"
    rf"(?P<prep>{'|'.join(SUBJECT_PREPOSITIONS)})\s+(?P<subject>.+?)\s*\?*\s*$",
    re.IGNORECASE,
)
_LIST_SPLIT = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", re.IGNORECASE)
# Written without "him": an object pronoun rarely stands in a sub-question for its subject.
_PRONOUN = re.compile(
    r"\b(?:" + "|".join(p for p in (*THIRD_PERSON_PRONOUNS, *DEMONSTRATIVES) if p != "him") + r")\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Plan:
    """The sub-questions a question is answered through, in the order asked.

    ``method``: "rules" or "llm" made more than one part; "single" when the
    question is answered as one. ``note`` says why a planner was not used.
    """

    question: str
    parts: tuple[str, ...]
    method: PlanMethod = "single"
    note: str = ""

    @property
    def decomposed(self) -> bool:
        return len(self.parts) > 1


def plan_question(question: str, *, llm: LLM | None = None, models: PipelineModels | None = None) -> Plan:
    """The LLM's plan when an LLM is configured and its reply is usable, else the rules'. ``models``
    gives the tagger that resolves a part's "it" from the parts before it (None: the shipped one)."""
    if llm is None:
        return rule_plan(question, models=models)
    return llm_plan(question, llm, models=models)


# --- rules ---------------------------------------------------------------------------


def rule_plan(question: str, *, models: PipelineModels | None = None) -> Plan:
    question = " ".join(question.split())
    opening, asked = framing(question)
    for split in (_by_question_marks, _comparison, _listed_items, _joined_questions):
        parts = split(asked)
        if len(parts) > 1:
            parts = _standalone(parts[:MAX_PARTS], models)
            # "According to the article, ..." goes with every part: it is what the analyst asked of them.
            return Plan(
                question, tuple(f"{opening}{_lower_first(p)}" if opening else p for p in parts), "rules"
            )
    return Plan(question, (question,), "single")


_FRAMING = re.compile(
    r"^(?:(?:according\s+to|based\s+(?:solely\s+|only\s+)?on)\s+(?:the|this)\s+[\w\s]{0,30}?"
    rf"{alternation(FRAMED_DOCUMENT_NOUNS)}s?(?:\s+provided)?,\s+)",
    re.IGNORECASE,
)


def framing(question: str) -> tuple[str, str]:
    """("According to the article, ", the rest) for a question that opens with such a phrase."""
    match = _FRAMING.match(question)
    if not match:
        return "", question
    rest = question[match.end() :]
    return match.group(), rest[:1].upper() + rest[1:]


def _lower_first(text: str) -> str:
    first = text.split(" ", 1)[0]
    return (
        text
        if first.isupper() or _NAME.fullmatch(first.rstrip("?,")) and first.lower() not in _WH_WORDS
        else (text[:1].lower() + text[1:])
    )


def _by_question_marks(question: str) -> list[str]:
    pieces = [p.strip() for p in re.split(r"(?<=\?)\s+", question) if p.strip()]
    if len(pieces) < 2:
        return []
    # Each piece may itself join two questions with "and".
    return [part for piece in pieces for part in (_joined_questions(piece) or [piece])]


def _joined_questions(question: str) -> list[str]:
    pieces = [p.strip(" ,;") for p in _JOIN.split(question)]
    pieces = [p for p in pieces if p]
    if len(pieces) < 2 or any(len(content_words(p)) < 1 or len(p.split()) < 2 for p in pieces):
        return []
    return [_as_question(p) for p in pieces]


def _comparison(question: str) -> list[str]:
    match = _COMPARE.match(question) or _DIFFERENCE.match(question)
    if not match:
        return []
    attr = (match.groupdict().get("attr") or "").strip()
    # "Compare the port's revenue ...": the pattern took the article ("the port's", not "Oman's").
    a, b = (re.sub(r"^(?=[a-z][\w-]*'s\s)", "the ", x.strip(" ?.,")) for x in (match["a"], match["b"]))
    # "the port's revenue and its staff": "its" is the port's.
    owner = re.match(r"(?:the\s+)?[\w-]+'s\s", a, flags=re.IGNORECASE)
    if owner:
        b = re.sub(r"^(?:its|their)\s", owner.group(), b, flags=re.IGNORECASE)
    if attr:
        return [f"What is the {attr} of {_strip_article(a)}?", f"What is the {attr} of {_strip_article(b)}?"]
    bare_a = _strip_article(a)
    tail = _OF_TAIL.search(b)
    if len(bare_a.split()) == 1 and tail:  # "the capital and the currency of Westmere"
        a = f"{a} {tail.group().strip()}"
    elif len(bare_a.split()) == 1 and len(b.split()) > 1:  # "primary and archaeological sources"
        a = f"{bare_a} {b.split()[-1]}"
    return [f"What do the sources say about {a}?", f"What do the sources say about {b}?"]


_OF_TAIL = re.compile(rf"\s{alternation(ATTRIBUTE_PREPOSITIONS)}\s.+$", re.IGNORECASE)


def _listed_items(question: str) -> list[str]:
    match = _LIST.match(question)
    if not match:
        return []
    items = [_strip_article(i) for i in _LIST_SPLIT.split(match["items"]) if i.strip()]
    plural = match["verb"].lower() in ("are", "were")
    if len(items) < 2 or (len(items) == 2 and not plural) or any(len(i.split()) > 3 for i in items):
        return []
    verb = {"are": "is", "were": "was"}.get(match["verb"].lower(), match["verb"].lower())
    subject = match["subject"].rstrip("?. ")
    return [f"{match['wh'].capitalize()} {verb} the {item} {match['prep']} {subject}?" for item in items]


def _strip_article(text: str) -> str:
    return re.sub(r"^(?:the|a|an)\s+", "", text.strip(" ?.,"), flags=re.IGNORECASE)


def _as_question(text: str) -> str:
    text = text.strip(" ,;")
    text = text[0].upper() + text[1:]
    return text if text.endswith("?") else text.rstrip(".") + "?"


def _standalone(parts: Sequence[str], models: PipelineModels | None) -> tuple[str, ...]:
    """Each later part made to stand alone: "it"/"its" resolved from the parts before it by
    conversation memory; failing that, a part that points back ("this period", "those elections")
    or names nothing gets the earlier parts' names in parentheses, so its search finds their
    documents ("What key wars shaped this period (Korea)?")."""
    done: list[str] = []
    for part in parts:
        if done:
            part = _with_context(part, done, models)
        done.append(part)
    return tuple(dict.fromkeys(done))


def _with_context(part: str, earlier: Sequence[str], models: PipelineModels | None) -> str:
    if _PRONOUN.search(part):
        rewritten = rewrite(part, [(text, "") for text in earlier], models=models)
        if rewritten.resolved and not rewritten.carried:
            question = rewritten.question
            for pronoun, name in rewritten.resolved:
                if pronoun.lower() in NON_POSSESSIVE_PRONOUNS:
                    # Memory keeps a possessive name as it was written ("Mali's"); "it" needs the name.
                    question = question.replace(name, re.sub(r"['\u2019]s$", "", name))
            return _as_question(question)
    own = set(_names_in(part))
    names = [n for text in earlier for n in _names_in(text) if n not in own]
    if not names or (own and not _PRONOUN.search(part)):
        return part
    context = ", ".join(dict.fromkeys(names[:2]))
    return f"{part.rstrip('?').rstrip()} ({context})?"


_NAME = re.compile(r"[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*")
_WH_WORDS = frozenset(WH_WORDS)


def _names_in(text: str) -> list[str]:
    """Capitalised runs past the first word, possessives cut ("Rwanda's" -> "Rwanda")."""
    text = re.sub(r"['’]s\b", "", text)
    _, framed = framing(text)
    first, _, rest = framed.partition(" ")
    names = [m.group() for m in _NAME.finditer(rest)]
    return [n for n in names if n.lower() not in _WH_WORDS and len(n) > 1]


# --- the LLM ---------------------------------------------------------------------------

PLAN_SYSTEM = (
    "You split an analyst's question into the separate questions it asks, so each can be looked up "
    "on its own. Rules: write each sub-question on its own line, numbered 1., 2., ...; every "
    f"sub-question must stand alone (repeat the names instead of 'it' or 'they'); at most {MAX_PARTS}; "
    "do not add questions the analyst did not ask and do not answer anything. If the question asks "
    "one thing, reply with that one question unchanged."
)


def plan_messages(question: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": PLAN_SYSTEM},
        {"role": "user", "content": f"Question: {question}\nSub-questions:"},
    ]


def llm_plan(question: str, llm: LLM, *, models: PipelineModels | None = None) -> Plan:
    question = " ".join(question.split())
    try:
        reply = llm.complete(plan_messages(question), temperature=0.0, max_tokens=200)
    except LLMError as exc:
        return _fallback(question, f"the LLM plan failed ({exc})", models)
    parts = parse_plan(reply)
    if not parts:
        return _fallback(question, "the LLM's reply held no sub-questions", models)
    if len(parts) > MAX_PARTS:
        return _fallback(
            question, f"the LLM returned {len(parts)} sub-questions, more than {MAX_PARTS}", models
        )
    asked = {stem(w) for w in content_words(question)}
    strays = [p for p in parts if not asked & {stem(w) for w in content_words(p)}]
    if strays:
        return _fallback(
            question, f"the LLM added a sub-question the analyst did not ask ({strays[0]!r})", models
        )
    if len(parts) == 1:
        return Plan(question, (question,), "single", "the LLM found one question")
    return Plan(question, parts, "llm")


def parse_plan(reply: str) -> tuple[str, ...]:
    """The numbered (or bulleted) lines of the reply, numbering removed; other lines are ignored
    when any line is numbered, since models add a preamble ("Here are the sub-questions:")."""
    lines = [line.strip() for line in reply.splitlines() if line.strip()]
    marked = re.compile(r"^(?:\d+[.)]|[-*•])\s+")
    numbered = [marked.sub("", line) for line in lines if marked.match(line)]
    chosen = numbered or [line for line in lines if line.endswith("?")]
    return tuple(dict.fromkeys(_as_question(part) for part in chosen if len(part.split()) >= 2))


def _fallback(question: str, why: str, models: PipelineModels | None) -> Plan:
    plan = rule_plan(question, models=models)
    return Plan(plan.question, plan.parts, plan.method, f"{why}; the rule-based plan was used")
