"""The reply decision's rules: one ordered table of named rules, and the one function that walks it.

Whether a question is answered, answered in part, asked back or refused is decided here. The
stages compute evidence (the question's reading, answerability, what the passages lack, the answer
check) and hand it over as ``Evidence``; ``decide`` walks the rules of one phase in order and
returns the first rule's decision, or None (answer). It runs twice: ``before`` an answer is
composed, and ``after`` the answer check. The answer check labels the answer: only a rule of this
table turns a failed check into a refusal. Not in the table yet (docs/reply.md, "Not done"): the
refusals made while composing (``answering.conclude``, generation's own), ``answerability.hard_rule``
and the learned turn kind's decisions on follow-ups (switched off whole by ``turn_kind_model``).

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

Phase = Literal["before", "after"]
ReplyKind = Literal["answer_in_part", "ask_back", "refuse"]


class Evidence(Protocol):
    """What the rules read; the stages compute each item on first use (qa.pipeline.flow.stages).

    A clarification (``turns.Clarification``) or a refusal (``Answer``) is the rule's reply, built
    by the stage from the same evidence; None where the condition does not hold."""

    def __getattr__(self, name: str) -> Any: ...


@dataclass(frozen=True)
class Decision:
    rule: str
    kind: ReplyKind
    # The reply: a turns.Clarification to ask back with, or the refusal Answer (its note gives the
    # reason in plain words), or the parts an answer in part names as missing.
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
    """Refuse when the passages lack several focus words (or a name the question asks about) and
    answerability is low."""
    return e.missing_refusal if e.lacks_too_much else None


@_rule("weak_retrieval", "before", ("retrieval confidence",), "refuse")
def _weak_retrieval(e: Evidence):
    """Refuse without trying when nothing was retrieved or retrieval confidence is below the preset's
    minimum."""
    return e.early_refusal


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
    _answer_check,
    _doubted_guess,
    _answer_in_part,
)
# Not a rule of the table but a switch on who decides: on a follow-up judged by the signal
# answerability, the fitted turn-kind model (qa.pipeline.dialogue.turn_kind) decides ask back / refuse /
# answer in place of the "before" rules; a reference the passages fit several ways
# (``turns.ambiguous_reference``) still overrules its "answer", as part of that decision.
TURN_KIND_MODEL = "turn_kind_model"
RULE_NAMES: tuple[str, ...] = (*(rule.name for rule in RULES), TURN_KIND_MODEL)
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
    """The table as rows (name, phase, reads, decides, why), for the docs, the bench and the trace."""
    return [
        {"name": r.name, "phase": r.phase, "reads": list(r.reads), "decides": r.decides, "why": r.why}
        for r in RULES
    ]
