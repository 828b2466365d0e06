"""What the sources lack: the parts of a turn no passage covers, and the replies that name them.

Heuristics, labelled so in every note they write (no LLM needed):

- ``missing_parts``: a turn is *partial* when the passages cover most of what
  it asks about but not all: words of the question's focus that no top
  passage (nor its title) contains, such as "archaeological" in "the
  difference between primary and archaeological sources" over passages that
  only define primary sources. The answer states what the sources support and
  names what they do not (``partial_answer``, in the question's own words: ``as_written``).
- ``names_lacking``: a name the question asks about that no passage holds; with too many focus
  words lacking it makes a refusal (``refusal_for_missing``, the reply rule ``missing_words``).
- ``learned_refusal``: the refusal the fitted turn-kind model decides on a follow-up.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from qa.pipeline.checks.answerability import ANSWERABLE, AnswerabilityVerdict
from qa.pipeline.core import lexicon
from qa.pipeline.core.model_parts import PipelineModels, default_models
from qa.pipeline.core.protocols import EntityTagger, PartOfSpeechTagger
from qa.pipeline.core.text import META_WORDS, STOPWORDS, content_words, stem, words
from qa.pipeline.core.types import UNSUPPORTED, Answer, AnswerSentence, ScoredPassage
from qa.pipeline.dialogue.turn_kind import names_missing

# Focus words that are the question's own framing, never something a source must state. "people":
# sources count people by what they are ("2,400 residents", "1,850 staff"), so "How many people were
# evacuated?" was answered in part, "the sources do not cover 'people'". "volumes", "levels",
# "figures": the measure of what is asked about ("Why did container volumes grow?" lacked 'volumes').
_FRAMING = frozenset(stem(w) for w in lexicon.FOCUS_FRAMING_WORDS)


def missing_parts(
    question: str, ranked: Sequence[ScoredPassage], *, top: int = 3, models: PipelineModels | None = None
) -> tuple[str, ...]:
    """The question's focus words that none of the top passages contains (as asked, not stemmed);
    ``models`` gives the part-of-speech tagger (None: ``default_models()``)."""
    bag = _passage_words(ranked[:top])
    shortened = _named_by_initials(
        question, " ".join(f"{hit.passage.document_title} {hit.passage.text}" for hit in ranked[:top])
    )
    measured = _measures_named(question, bag)
    missing = []
    actions = _verbs_and_adverbs(question, (models or default_models()).parts_of_speech)
    for word in words(question):
        if word in STOPWORDS or word in META_WORDS or len(word) < 4 or word[0].isdigit():
            continue
        if word in actions or word in shortened or word in measured:
            continue
        stemmed = stem(word)
        if (
            stemmed in _FRAMING
            or _stem_in(stemmed, bag)
            or any(b.startswith(stemmed[:6]) for b in bag if len(stemmed) >= 7)
            or _demonym_of(stemmed, bag)
        ):
            continue
        missing.append(word)
    return tuple(dict.fromkeys(missing))


def _passage_words(ranked: Sequence[ScoredPassage]) -> set[str]:
    bag: set[str] = set()
    for hit in ranked:
        bag |= content_words(hit.passage.text) | content_words(hit.passage.document_title)
    return bag


def names_lacking(
    question: str,
    lacking: Sequence[str],
    ranked: Sequence[ScoredPassage],
    *,
    top: int = 3,
    models: PipelineModels | None = None,
) -> tuple[str, ...]:
    """The names the question writes that the top passages lack (``names_missing`` of ``lacking``,
    ``missing_parts`` of these passages), less the places of a question that crosses borders over
    passages on the international case: the names that say the passages are about something else.
    The places stay in ``lacking``, so a partial answer still says the sources do not name them."""
    names = names_missing(question, lacking)
    if not names:
        return ()
    crossed = _places_crossed(question, _passage_words(ranked[:top]), (models or default_models()).entities)
    return tuple(name for name in names if name.lower() not in crossed)


def lacks_too_much(
    question: str,
    verdict: AnswerabilityVerdict,
    lacking: Sequence[str],
    ranked: Sequence[ScoredPassage],
    *,
    at_least: int,
    below: float,
    models: PipelineModels | None = None,
) -> bool:
    """The `missing_words` gate (qa.pipeline.checks.reply_rules): whether the passages lack too much of
    the question to answer even in part. Either ``at_least`` of its focus words are ``lacking`` while
    answerability's ``verdict`` is "answerable" below ``below`` (``TurnsConfig.refuse_missing`` and
    ``refuse_missing_below``; only the model's verdict reads its probability here: a verdict rule's
    partial verdict, an amount or a part stated nowhere, carries the rule's probability and names its
    gap itself), or a name it asks about is lacking (``names_lacking``)."""
    too_few = verdict.kind == ANSWERABLE and len(lacking) >= at_least and verdict.probability < below
    return bool(too_few or names_lacking(question, lacking, ranked, models=models))


# How passages speak of what crosses borders, whichever the countries (stems, as ``content_words`` gives).
_ACROSS_BORDERS = lexicon.ACROSS_BORDERS_WORDS
_PLACES = frozenset({"GPE", "LOC"})  # countries, cities, regions
_PEOPLES = frozenset({"NORP"})  # "Australian", "Canadian"


def _places_crossed(question: str, bag: set[str], tag: EntityTagger | None) -> frozenset[str]:
    """The words of the places a question names when it names two or more, a country among them
    (an account in one, a person in another), over passages that speak of the international case
    ("an international bank wire is the cheapest option"): the places say that the question crosses
    borders, which such passages answer whichever the countries. MTRAG-UN train asked the cheapest
    way to wire money from an Australian bank account to a person in England from Laos, and was
    refused for want of 'australian', 'england' and 'laos'. One place ("the minimum wage in Laos")
    is still a name the passages must hold, and so are places over passages that never speak of
    crossing borders. Empty when no entity tagger is installed.

    Only the names gate reads this: a partial answer still names the places the passages lack
    (CLAPNQ-dev's "compare ... audit committee in nigeria and united states" is answered in part,
    saying the sources do not cover 'nigeria', 'united')."""
    if tag is None or not bag & _ACROSS_BORDERS:
        return frozenset()
    named = {(text, label) for text, label in tag(question) if label in _PLACES | _PEOPLES}
    if len({text for text, _ in named}) < 2 or not any(label in _PLACES for _, label in named):
        return frozenset()
    return frozenset(w for text, _ in named for w in words(text))


_SMALL_IN_NAMES = lexicon.SMALL_WORDS_IN_NAMES


def _named_by_initials(question: str, text: str) -> frozenset[str]:
    """The question's words that belong to a capitalised name the passages write as its initials
    ("European Union" as "EU", "North Atlantic Treaty Organization" as "NATO"; small words such as
    "of" and "the" are skipped) or that are initials the passages spell out ("WHO" for "World
    Health Organization"). Lower-cased, as ``words`` gives them. Analyst-bench dev q001 asked about
    the "European Union" over passages saying "EU" and was refused for want of 'union'."""
    acronyms = set(_ACRONYM.findall(text))
    spelled = {initials for run in _capitalised_runs(text) for initials, _ in _names_in(run)}
    covered = {
        w.lower()
        for run in _capitalised_runs(question)
        for initials, name in _names_in(run)
        if initials in acronyms
        for w in name
    }
    covered.update(token.lower() for token in _ACRONYM.findall(question) if token in spelled)
    return frozenset(covered)


_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b")


def _capitalised_runs(text: str) -> list[list[str]]:
    """Runs of capitalised words, small words allowed inside ("Organization of the Petroleum ...")."""
    runs: list[list[str]] = [[]]
    for token in re.findall(r"[A-Za-z][A-Za-z'-]*", text):
        if token[0].isupper() or (runs[-1] and token in _SMALL_IN_NAMES):
            runs[-1].append(token)
        elif runs[-1]:
            runs.append([])
    return [run for run in runs if sum(w[0].isupper() for w in run) >= 2]


def _names_in(run: Sequence[str]) -> Iterator[tuple[str, list[str]]]:
    """(initials, words) of every stretch of the run that starts and ends with a capitalised word."""
    for i, first in enumerate(run):
        for j in range(i + 1, len(run)):
            if first[0].isupper() and run[j][0].isupper():
                name = list(run[i : j + 1])
                yield "".join(w[0] for w in name if w[0].isupper()), name


def _verbs_and_adverbs(question: str, tagger: PartOfSpeechTagger | None) -> frozenset[str]:
    """The question's words tagged as verbs or adverbs ("feel", "seeing", "check", "everywhere"):
    what the asker does or how, never a thing a source must name for the question to be answered.
    Empty when no tagger is installed."""
    if tagger is None:
        return frozenset()
    found = set()
    for start, tag in tagger(question):
        if tag.startswith(("VB", "RB")):
            found.update(words(question[start:].split(maxsplit=1)[0]))
    return frozenset(found)


_DEMONYM_ENDINGS = lexicon.DEMONYM_ENDINGS


# "How deep ...?" asks for a measure the passages name by its noun ("to a depth of 16 meters").
_MEASURE_NOUNS = lexicon.MEASURE_ADJECTIVE_NOUNS


def _measures_named(question: str, bag: set[str]) -> set[str]:
    """The adjective of a "how deep / long / tall ...?" question when the passages name its
    measure ("How deep is the main channel?" over "dredged to a depth of 16 meters" was answered
    in part, "the sources do not cover 'deep'")."""
    asked = re.findall(r"\bhow\s+([a-z]+)\b", question.lower())
    return {word for word in asked if any(stem(noun) in bag for noun in _MEASURE_NOUNS.get(word, ()))}


def _stem_in(stemmed: str, bag: set[str]) -> bool:
    """Whether the passages hold the word with or without a silent final e, which ``stem`` keeps
    on the bare word and loses with the ending: "handle" / "handled" ("How many containers did
    the port handle?" was answered in part, "the sources do not cover 'handle'"), "decline" /
    "declined", "price" / "priced"."""
    if stemmed in bag:
        return True
    return (stemmed.endswith("e") and stemmed[:-1] in bag) or f"{stemmed}e" in bag


def _demonym_of(word: str, bag: set[str]) -> bool:
    """Whether the passages name the place the word is formed from: "Japan" covers "Japanese",
    "Australia" "Australian" (stems alone miss it, so a question about the Japanese was refused
    over passages about Japan)."""
    return any(word.startswith(b) and word[len(b) :] in _DEMONYM_ENDINGS for b in bag if len(b) >= 4)


def without_words(question: str, missing: Sequence[str]) -> str:
    """The question with what no source covers taken out: what the answer can address. ``missing``
    holds words ('handle') and parts of a question in parts (``without_parts``)."""
    drop = {m.lower() for m in missing}
    question = without_parts(question, missing)
    return " ".join(t for t in question.split() if t.lower().strip("?,.!;:'\"") not in drop)


def without_parts(question: str, missing: Sequence[str]) -> str:
    """The question without the parts of it no source answers ("how many cruise ships called at
    the port", "Who is the president of Westmere": ``missing``'s items of more than one word), and
    without the "and" that joined them; the question itself, untouched, when none is missing."""
    parts = [m.strip() for m in missing if " " in m.strip()]
    for part in parts:
        question = re.sub(
            rf",?\s*(?:\band\s+)?{re.escape(part)}(?:\s+and\b)?", " ", question, flags=re.IGNORECASE
        )
    return re.sub(r"\s+([?.!,])", r"\1", " ".join(question.split())) if parts else question


def as_written(question: str, missing: Sequence[str]) -> tuple[str, ...]:
    """What the sources lack, in the question's own words, in its order: each missing word as the
    question writes it ("Zstandard", "macOS", "Node.js"), words next to each other that are both
    missing as one phrase ("cure period", not 'cure', 'period'), and a capitalised word with the
    capitalised words or numbers beside it, the name it is part of ("Raspberry Pi" for 'raspberry').
    A part of a question in parts (several words) and a word the question does not hold are kept as
    they are, after the rest."""
    wanted = {m.lower() for m in missing if " " not in m.strip()}
    tokens = [token.rstrip("?!.,;:") for token in question.split()]
    hit = [bool(wanted & set(words(token))) for token in tokens]

    def named(index: int) -> bool:
        """A word of a name: capitalised (not the question's first word) or a number."""
        first = tokens[index][:1]
        return index > 0 and (first.isupper() or first.isdigit())

    for index in [i for i, flagged in enumerate(hit) if flagged and named(i)]:
        for step in (-1, 1):
            near = index + step
            while 0 <= near < len(tokens) and named(near):
                hit[near] = True
                near += step
    phrases, run = [], []
    for token, flagged in zip(tokens, hit, strict=True):
        if flagged:
            run.append(token.removesuffix("'s").removesuffix("\u2019s"))
        elif run:
            phrases.append(" ".join(run))
            run = []
    if run:
        phrases.append(" ".join(run))
    found = {w for phrase in phrases for w in words(phrase)}
    kept = [m for m in missing if " " in m.strip() or m.lower() not in found]
    return (*phrases, *kept)


def partial_answer(answer: Answer, missing: Sequence[str], question: str = "") -> Answer:
    """The answer with a last sentence naming what the sources do not cover (as ``question`` writes
    it, where given: ``as_written``)."""
    missing = as_written(question, missing) if question else tuple(missing)
    named = ", ".join(f"'{m}'" for m in missing)
    gap = AnswerSentence(f"The sources do not cover {named}, so that part stays unanswered.", (), UNSUPPORTED)
    return Answer(
        sentences=(*answer.sentences, gap),
        refused=False,
        disagreement=answer.disagreement,
        verified=answer.verified,
        note=(answer.note + " " if answer.note else "") + f"Partial answer (heuristic): nothing on {named}.",
        retrieved_documents=answer.retrieved_documents,
        confidence=answer.confidence,
        kind="partial",
        missing=tuple(missing),
    )


def refusal_for_missing(
    verdict,
    missing: Sequence[str],
    documents: Sequence[str],
    models: PipelineModels | None = None,
    question: str = "",
) -> Answer:
    """A refusal because the passages lack what the question asks about (named as ``question``
    writes it, where given), in plain words: the card shows the note, and answerability's
    probability stays in the trace (the verdict)."""
    named = ", ".join(f"'{m}'" for m in (as_written(question, missing) if question else missing))
    return Answer.refusal(
        f"Refused: none of the passages found mentions {named}, which the question asks about.",
        documents,
        confidence=(models or default_models()).trust.of_refusal(verdict.probability).probability,
        kind="unanswerable",
    )


def learned_refusal(verdict, documents: Sequence[str], models: PipelineModels | None = None) -> Answer:
    """A refusal the turn-kind model decided (heuristic signals, learned on MTRAG-UN train), said in
    plain words on the card; the model's probabilities and answerability's stay in the trace (the
    run's ``turn_kind`` and verdict)."""
    return Answer.refusal(
        "Refused (learned turn-kind model, heuristic signals): none of the passages found seems to "
        "answer this turn of the conversation.",
        documents,
        confidence=(models or default_models())
        .trust.of_refusal(verdict.probability, by_rule=verdict.by_rule)
        .probability,
        kind="unanswerable",
    )
