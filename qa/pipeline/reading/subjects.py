"""Which retrieved documents are about what a question names (``subject_documents``).

A question that names a place, a person or a thing ("the highest point in Oman", "a patent
licence under the Apache License") is answered only from the retrieved documents about it: those
whose titles hold its names, and that hold them as fully as any other does (``documents_on_subject``).
A Factbook entry on another country states a highest point too, and another licence grants patent
licences too; quoted beside the question's own subject, or instead of it, their sentences answer a
question nobody asked, and two such documents do not "disagree". The names are the question's
capitalised words (``text.capitalised_names``); a question that names nothing (CLAPNQ's
lower-case questions, "what is the capital?") restricts nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from qa.pipeline.core.text import capitalised_names, name_present, words
from qa.pipeline.core.types import SourceSentence


def question_names(question: str) -> frozenset[str]:
    """The names a question gives, lower-cased ("What is the highest point in Oman?" -> {"oman"})."""
    return frozenset(capitalised_names(question))


def names_held(
    names: Iterable[str], sentences: Iterable[SourceSentence]
) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """For each document among ``sentences``: which of ``names`` its title holds, and which its
    title, its sentences' headings or those sentences hold (a form of the name counts: "Russian"
    holds "Russia")."""
    titles: dict[str, set[str]] = {}
    pools: dict[str, set[str]] = {}
    for sentence in sentences:
        title = titles.setdefault(sentence.document_id, set(words(sentence.document_title)))
        pool = pools.setdefault(sentence.document_id, set(title))
        pool.update(words(sentence.text))
        pool.update(words(sentence.section))
    wanted = tuple(names)

    def held(pool: set[str]) -> frozenset[str]:
        return frozenset(name for name in wanted if name_present(name, pool))

    return {document: (held(titles[document]), held(pool)) for document, pool in pools.items()}


def documents_on_subject(question: str, sentences: Iterable[SourceSentence]) -> frozenset[str] | None:
    """The documents among ``sentences`` about what the question names; empty when none holds any
    of its names (every one is about something else), None when the question names nothing.

    A title outweighs a mention: when some document's title holds one of the names, documents whose
    titles hold none are left out (Nepal's Factbook entry lies "between China and India" and is
    still not the entry to ask for China's lowest point). Then a document holding only some of the
    names another holds is left out (the Mozilla licence is a "License" too, but only the Apache
    licence holds "Apache")."""
    names = question_names(question)
    if not names:
        return None
    held = names_held(names, sentences)
    if any(title for title, _ in held.values()):
        held = {document: found for document, found in held.items() if found[0]}
    anywhere = {document: found for document, (_, found) in held.items() if found}
    return frozenset(
        document
        for document, found in anywhere.items()
        if not any(found < other for other in anywhere.values())
    )
