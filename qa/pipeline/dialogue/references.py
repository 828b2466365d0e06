"""Open references: "the fast food chain", "this library", that nothing in the conversation picks out.

An underspecified turn usually asks about "the <kind of thing>" as if the
reader knew which one: "How did the fast food chain establish a presence in the
United States?", "When was the famous basketball player born?", "What services
does this library offer?". Read linguistically (no LLM), such a reference is a
definite or demonstrative noun phrase whose head is a common, countable noun
(tagged NN/NNS, written in lower case) and which nothing pins down:

- no name of its own follows it ("the park Sampson State Park") and no
  complement says which ("the history *of* Chicago", "the song *for* this
  series": the complement is what the asker refers to, checked on its own);
- no number sits inside it ("the 1998 final");
- it is not a definite plural ("the services" means all of them, not one to choose);
- no earlier turn of the conversation used its head noun (after "Grenade is a
  song by Bruno Mars", "the song" refers back to it).

``open_references`` finds them. Whether the turn is then underspecified depends
on the documents: only when they describe several things of that kind is there a
choice to ask about (``qa.pipeline.dialogue.turns.ambiguous_reference``). A possessive
yields both the possessor and the whole phrase ("the country's stadium": the
country, and its stadium). Heuristic, and labelled so wherever it decides.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from qa.pipeline.core import lexicon
from qa.pipeline.core.model_parts import PipelineModels, default_models
from qa.pipeline.core.text import stem, words

_DETERMINERS = lexicon.DETERMINERS
_COMMON_NOUN = frozenset({"NN", "NNS"})
# What may stand inside the phrase before its head ("the famous basketball player", "the New York
# county", "this particular index fund").
_INSIDE = frozenset({"JJ", "JJR", "JJS", "VBN", "NN", "NNS", "NNP", "NNPS", "HYPH", "CD", "POS"})
# A complement that says which one is meant; a location ("the animal in California") does not.
_PINNING = lexicon.PINNING_WORDS
_LONGEST = 6  # words after the determiner


@dataclass(frozen=True)
class _Token:
    start: int
    end: int
    text: str
    tag: str


def _tokens(question: str, tags: Iterable[tuple[int, str]]) -> list[_Token]:
    offsets = list(tags)
    tokens = []
    for position, (start, tag) in enumerate(offsets):
        stop = offsets[position + 1][0] if position + 1 < len(offsets) else len(question)
        text = question[start:stop].rstrip()
        tokens.append(_Token(start, start + len(text), text, tag))
    return tokens


def open_references(
    question: str,
    earlier: Iterable[str] = (),
    *,
    not_referents: frozenset[str] = frozenset(),
    models: PipelineModels | None = None,
) -> tuple[str, ...]:
    """The question's definite or demonstrative phrases that nothing pins down (see the module
    doc), as written, each ending in its head noun; ``earlier`` the conversation's earlier turns
    (both speakers); ``not_referents`` head nouns never asked about ("way", "case", "article").
    Empty when no part-of-speech tagger is installed; ``models`` gives it (None: ``default_models()``)."""
    tagger = (models or default_models()).parts_of_speech
    if tagger is None:
        return ()
    said = {stem(w) for text in earlier for w in words(text)}
    tokens = _tokens(question, tagger(question))
    found: list[str] = []
    for position, token in enumerate(tokens):
        word = token.text.lower()
        if word not in _DETERMINERS:
            continue
        # "that" points back only after a preposition ("of that mission"); elsewhere it is as often
        # a relative pronoun or a conjunction.
        if word == "that" and (not position or tokens[position - 1].tag != "IN"):
            continue
        for end in _heads(tokens, position):
            head = tokens[end].text.lower()
            inside = tokens[position + 1 : end + 1]
            if (
                # "the services", "the youth participants": a definite plural means all of them.
                (word == "the" and tokens[end].tag == "NNS")
                or head in not_referents
                or len(head) < 3
                or stem(head) in said
                or any(t.tag == "CD" for t in inside)
                or _pinned_after(tokens, end)
            ):
                continue
            found.append(question[token.start : tokens[end].end])
    return tuple(dict.fromkeys(found))


def _heads(tokens: list[_Token], determiner: int) -> list[int]:
    """Positions of the phrase's heads after ``determiner``: the last common noun of the run, and
    a possessor before it ("the country's stadium": country, stadium). None when the run ends in a
    name ("the Causeway VA Clinic") or a name follows in apposition."""
    heads: list[int] = []
    last_noun = None
    position = determiner + 1
    while position < len(tokens) and position - determiner <= _LONGEST:
        token = tokens[position]
        if token.tag not in _INSIDE:
            break
        if token.tag == "POS":
            if last_noun is not None:
                heads.append(last_noun)
            last_noun = None
        elif token.tag in _COMMON_NOUN and token.text.islower():
            last_noun = position
        elif last_noun is not None and token.tag not in _COMMON_NOUN:
            break
        position += 1
    if last_noun is not None and last_noun + 1 == position:
        following = tokens[position] if position < len(tokens) else None
        if following is None or following.tag not in ("NNP", "NNPS"):
            heads.append(last_noun)
    return heads


def _pinned_after(tokens: list[_Token], head: int) -> bool:
    following = tokens[head + 1] if head + 1 < len(tokens) else None
    return following is not None and following.text.lower() in _PINNING
