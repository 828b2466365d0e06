"""The reply decision's rules: one ordered table of named rules, and the one function that walks it.

Whether a question is answered, answered in part, asked back or refused is decided here, and only
here. The stages compute evidence (the question's reading, answerability, what the passages lack,
what each draft found, the answer check) and hand it over as ``Evidence``; ``decide`` walks the rules
of one phase in order and returns the first rule's decision, or None (go on / answer). The phases,
in the order a question meets them:

- ``before`` an answer is composed (qa.pipeline.flow.stages; ``weak_retrieval`` also on the
  unstaged path, qa.pipeline.flow.answering);
- ``draft``, on each attempt's draft, before it is cited (qa.pipeline.flow.answering.generate_attempt):
  a generator never refuses, it reports what it found (``generation.Draft.reason``), and a rule of
  this phase turns that finding into a refusal. A declined draft ends the attempts unless the preset
  retries (``retry_after_refusal``); switched off, the draft is an empty one and the next window of
  the ranking is read;
- ``composed``, once the attempts are over, on the answer they give, before disagreement and the
  answer check (``answering.conclude``, which only assembles what the rules decided);
- ``after`` the answer check (stages): the answer check labels the answer; only a rule of this table
  turns a failed check into a refusal.

Beside the table: the verdict rules (``VERDICT_RULES``), which set the answerability verdict the
``unanswerable`` and ``answer_in_part`` rules read, applied in qa.pipeline.checks.answerability and
switched off by name like the rules. Outside it: a question for which no attempt drafted any
sentence is refused by construction (there is nothing to show; ``answering.conclude``), and on
follow-ups the learned turn kind decides in place of the ``before`` rules (switched off whole by
``turn_kind_model``; docs/reply.md).

Each rule can be switched off by name in a preset (``answer.rules_off``), for ablation
(``python -m bench reply_rules`` measures each rule's effect; a rule whose removal changes no reply
beyond the noise on any set of the tuning suite is deleted, unless a conversation or probe test a user
would notice needs it; docs/reply.md shows the figures and which rules were kept on that ground).
A rule switched off is skipped as if its condition never held, so the next rule decides.

Evidence is read lazily: a rule's condition is only computed when every rule before it let the
question through, so a question refused early costs what it did before the table existed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from qa.pipeline.drafting.generation import (
    AMOUNT_STATED_NOWHERE,
    GENERATOR_DECLINED,
    NO_EVIDENCE,
    NOTHING_QUOTABLE,
    NOTHING_RELEVANT,
)

Phase = Literal["before", "draft", "composed", "after"]
ReplyKind = Literal["answer_in_part", "ask_back", "refuse"]


class Evidence(Protocol):
    """What the rules read; the stages and answering compute each item on first use
    (``qa.pipeline.flow.before_answer.BeforeEvidence``; ``LazyEvidence`` in qa.pipeline.flow.answering
    and after_answer).

    A clarification (``turns.Clarification``) or a refusal (``Answer``) is the rule's reply, built
    by the stage from the same evidence; None where the condition does not hold."""

    def __getattr__(self, name: str) -> Any: ...


class LazyEvidence:
    """``Evidence`` from thunks: each item computed on first read and kept; an item not given reads
    None (so a rule whose evidence a path does not compute never fires there)."""

    def __init__(self, **thunks: Callable[[], Any]) -> None:
        self._thunks = thunks
        self._values: dict[str, object] = {}

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._values:
            thunk = self._thunks.get(name)
            self._values[name] = thunk() if thunk is not None else None
        return self._values[name]


@dataclass(frozen=True)
class Decision:
    rule: str
    kind: ReplyKind
    # The reply: a turns.Clarification to ask back with, or the refusal Answer (its note gives the
    # reason in plain words; for the "draft" and "composed" rules the note alone, which
    # answering.conclude assembles into the refusal), or the parts an answer in part names as missing.
    detail: Any


@dataclass(frozen=True)
class Rule:
    name: str
    phase: Phase
    reads: tuple[str, ...]  # the Evidence items its condition reads
    decides: ReplyKind
    why: str
    condition: Callable[[Evidence], Any]  # the reply's detail when the rule fires, else None

    def fires(self, evidence: Evidence) -> Decision | None:
        detail = self.condition(evidence)
        return Decision(self.name, self.decides, detail) if detail is not None else None


def _rule(name: str, phase: Phase, reads: tuple[str, ...], decides: ReplyKind):
    """A rule from its condition function, whose docstring (one sentence) is the rule's why."""

    def made(condition: Callable[[Evidence], Any]) -> Rule:
        why = " ".join((condition.__doc__ or "").split())
        return Rule(name, phase, reads, decides, why, condition)

    return made


# --- before the answer is composed, in the order they are tried -----------------------------------


@_rule("unresolved_reference", "before", ("question", "conversation", "passages"), "ask_back")
def _unresolved_reference(e: Evidence):
    """A turn that points at nothing the conversation named cannot be searched as meant."""
    return e.unresolved_reference


@_rule("doubted_reading", "before", ("answerability", "rewrite", "turn as asked"), "ask_back")
def _doubted_reading(e: Evidence):
    """When answerability refuses only the rewrite's reading of a reference, and the turn as asked passes,
    ask which is meant."""
    return e.doubted_reading if e.answerability_refuses else None


@_rule("unanswerable", "before", ("answerability",), "refuse")
def _unanswerable(e: Evidence):
    """Refuse when answerability judges the passages do not answer the question (and no part of it)."""
    return e.answerability_refusal if e.answerability_refuses else None


@_rule("missing_words", "before", ("focus words the passages lack", "answerability"), "refuse")
def _missing_words(e: Evidence):
    """Refuse when the passages lack a focus word of the question (or a name it asks about) and
    answerability is low (``turns.refuse_missing``, ``turns.refuse_missing_below``)."""
    return e.missing_refusal if e.lacks_too_much else None


@_rule("weak_retrieval", "before", ("retrieval confidence",), "refuse")
def _weak_retrieval(e: Evidence):
    """Refuse without trying when nothing was retrieved or retrieval confidence is below the preset's
    minimum."""
    return e.early_refusal


# --- on each draft, before it is cited --------------------------------------------------------------
# ``draft_reason`` is what the generator found (``generation.Draft.reason``); ``declined_note`` the
# refusal's note in plain words, from the generator's notes ("Refused: best evidence relevance 0.120
# is below 0.300.").


@_rule("nothing_to_quote", "draft", ("draft",), "refuse")
def _nothing_to_quote(e: Evidence):
    """Refuse when the window holds no sentence that states anything (only instructions, headings or
    titles), rather than read the next one."""
    return e.declined_note if e.draft_reason in (NO_EVIDENCE, NOTHING_QUOTABLE) else None


@_rule("nothing_relevant", "draft", ("draft", "extractive relevance"), "refuse")
def _nothing_relevant(e: Evidence):
    """Refuse when no sentence of the window is as relevant as the preset's minimum
    (``extractive_min_relevance``)."""
    return e.declined_note if e.draft_reason == NOTHING_RELEVANT else None


@_rule("amount_stated_nowhere", "draft", ("draft", "amounts asked"), "refuse")
def _amount_stated_nowhere(e: Evidence):
    """Refuse when the question asks for an amount no sentence of the window states: quoting a related
    sentence without the number would look like an answer and is not."""
    return e.declined_note if e.draft_reason == AMOUNT_STATED_NOWHERE else None


@_rule("generator_declined", "draft", ("draft", "LLM output"), "refuse")
def _generator_declined(e: Evidence):
    """Refuse when the LLM writes that the sources do not answer and cites nothing."""
    return e.declined_note if e.draft_reason == GENERATOR_DECLINED else None


# --- once the attempts are over, before disagreement and the answer check -------------------------


@_rule("nothing_supported", "composed", ("support labels", "refuse_when_nothing_supported"), "refuse")
def _nothing_supported(e: Evidence):
    """Refuse an answer none of whose sentences its citations support, where the preset says so
    (``refuse_when_nothing_supported``)."""
    return e.unsupported_note if e.nothing_supported else None


# --- after the answer check -----------------------------------------------------------------------


@_rule("answer_check", "after", ("answer check",), "refuse")
def _answer_check(e: Evidence):
    """Refuse an answer the answer check judges not to address the question."""
    return e.check_refusal


@_rule("doubted_guess", "after", ("answer check", "rewrite"), "ask_back")
def _doubted_guess(e: Evidence):
    """When a kept answer fails the answer check and the turn rests on the rewrite's guess at a pronoun,
    ask which is meant."""
    return e.doubted_guess


@_rule("answer_in_part", "after", ("missing parts",), "answer_in_part")
def _answer_in_part(e: Evidence):
    """Name what the sources leave out when they cover only part of the question."""
    return e.missing or None


RULES: tuple[Rule, ...] = (
    _unresolved_reference,
    _doubted_reading,
    _unanswerable,
    _missing_words,
    _weak_retrieval,
    _nothing_to_quote,
    _nothing_relevant,
    _amount_stated_nowhere,
    _generator_declined,
    _nothing_supported,
    _answer_check,
    _doubted_guess,
    _answer_in_part,
)


# --- the verdict rules: they set the answerability verdict that the rules above read -------------
# ``decide`` does not walk them: qa.pipeline.checks.answerability applies them, in this order, in
# place of the answerability model's probability. On their verdict the ``unanswerable`` rule refuses
# (or asks back, for an underspecified one) and ``answer_in_part`` names a partial one's missing
# parts. They are switched off by name like the rules above, and measured the same way.


@dataclass(frozen=True)
class VerdictRule:
    name: str
    reads: tuple[str, ...]
    sets: str  # the verdict's kind
    why: str


TOO_LITTLE_NAMED = "too_little_named"
AMOUNT_UNSTATED = "amount_unstated"
PART_UNSTATED = "part_unstated"
FIGURE_UNSTATED = "figure_unstated"
OVERVIEW = "overview_named"
VERDICT_RULES: tuple[VerdictRule, ...] = (
    VerdictRule(
        TOO_LITTLE_NAMED,
        ("question reading", "top passages"),
        "underspecified",
        "A question with no focus word, or only focus words the best passages lack, names too little "
        "to look for.",
    ),
    VerdictRule(
        AMOUNT_UNSTATED,
        ("amounts asked", "top sentences"),
        "unanswerable or partial",
        "An amount asked for that no top sentence states is not answerable whatever the cosines say "
        "(partial while something else asked is stated).",
    ),
    VerdictRule(
        PART_UNSTATED,
        ("question parts", "top sentences"),
        "partial",
        "A part of a question in parts asking for a person or named figure no relevant sentence states.",
    ),
    VerdictRule(
        FIGURE_UNSTATED,
        ("measure asked", "figures stated"),
        "unanswerable",
        "A question asking for a measure (a figure of some kind) when no relevant sentence states a "
        "figure of that kind.",
    ),
    VerdictRule(
        OVERVIEW,
        ("question reading", "top sentences"),
        "answerable",
        "A question asking for an overview of a subject a top source sentence names in full.",
    ),
)
# Not a rule of the table but a switch on who decides: on a follow-up judged by the signal
# answerability, the fitted turn-kind model (qa.pipeline.dialogue.turn_kind) decides ask back / refuse /
# answer in place of the "before" rules; a reference the passages fit several ways
# (``turns.ambiguous_reference``) still overrules its "answer", as part of that decision.
TURN_KIND_MODEL = "turn_kind_model"
RULE_NAMES: tuple[str, ...] = (
    *(rule.name for rule in RULES),
    *(rule.name for rule in VERDICT_RULES),
    TURN_KIND_MODEL,
)
# Rules deleted because switching them off changed no reply beyond the noise on any set of the tuning
# suite (docs/reply.md, "Deleted rules"). A stored configuration may still name them in rules_off: the
# name is dropped, since a deleted rule is off.
DELETED_RULES: tuple[str, ...] = ("ambiguous_reference", "doubted_missing", "only_the_reading")


def checked_rules_off(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` as a tuple in table order; ValueError naming the unknown ones and listing the rules."""
    given = tuple(names) if not isinstance(names, str) else (names,)
    unknown = [name for name in given if name not in RULE_NAMES and name not in DELETED_RULES]
    if unknown:
        raise ValueError(
            f"rules_off: no reply rule named {', '.join(map(repr, unknown))}; "
            f"the rules are {', '.join(RULE_NAMES)}."
        )
    return tuple(name for name in RULE_NAMES if name in given)


def decide(phase: Phase, evidence: Evidence, rules_off: Iterable[str] = ()) -> Decision | None:
    """The first rule of ``phase`` (in table order, less those switched off) that fires on
    ``evidence``; None: answer in full."""
    off = frozenset(rules_off)
    for rule in RULES:
        if rule.phase == phase and rule.name not in off:
            decision = rule.fires(evidence)
            if decision is not None:
                return decision
    return None


def rules_table() -> list[dict[str, object]]:
    """The table as rows (name, phase, reads, decides, why), for the docs, the bench and the trace;
    the verdict rules last, in phase "verdict"."""
    rows = [
        {"name": r.name, "phase": r.phase, "reads": list(r.reads), "decides": r.decides, "why": r.why}
        for r in RULES
    ]
    return rows + [
        {
            "name": r.name,
            "phase": "verdict",
            "reads": list(r.reads),
            "decides": f"verdict: {r.sets}",
            "why": r.why,
        }
        for r in VERDICT_RULES
    ]
