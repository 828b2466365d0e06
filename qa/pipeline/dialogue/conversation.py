"""Conversation memory and follow-up rewriting, without an LLM (and with one, when configured).

A follow-up ("Can I withdraw my contributions from it?", "and in 2019?",
"What about the fees?") does not stand alone: retrieval needs the subject the
conversation is about. ``remember`` reads the earlier turns into a
``ConversationMemory``: the names (capitalised phrases: "Roth IRA",
"Causeway VA Clinic") and the topic phrases (runs of content words: "facilitated
diffusion") each turn mentioned, the user's turns weighted above the agent's
and recent ones above old ones. ``rewrite`` then resolves what the question
leaves out:

- a pronoun or a bare demonstrative ("it", "they", "this", "there") becomes
  the conversation's subject: its most salient name, else its topic phrase;
- a demonstrative or definite phrase ("this library", "the company") becomes
  the remembered name that contains its noun ("the California State Library");
  when no earlier turn names one, the phrase is *unresolved*, which is what an
  underspecified turn looks like ("Which library do you mean?");
- an ellipsis (a short fragment: "and in 2019?", "what about Ghana?") takes the
  previous question and swaps in what the fragment changes (a year for a year,
  a name for the subject), or else is read with the subject added;
- a question that names its own subject is left as it is.

``Rewrite`` records what was done, so the trace and the chat can show
"searched as ..." and why. ``llm_rewrite`` asks an LLM for the standalone
question instead, falling back to the rule-based rewrite when the reply is
unusable. Everything here is heuristic and labelled so in the trace.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from qa.pipeline.core import lexicon
from qa.pipeline.core.model_parts import PipelineModels, default_models
from qa.pipeline.core.protocols import LLM, PartOfSpeechTagger
from qa.pipeline.core.text import META_WORDS, STOPWORDS, content_words, stem, words
from qa.pipeline.dialogue.references import open_references

Turn = tuple[str, str]  # (user question, agent answer)

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'\u2019&.-]*[A-Za-z]|[A-Za-z]|\d[\d,.]*")
# Pronouns that refer back to something; "this"/"that" only when no noun follows (handled below).
_PRONOUNS = lexicon.PRONOUN_POSSESSIVE_SUFFIX
# "that" is left out: as often a relative pronoun ("everything that deleted") as a demonstrative.
_DEMONSTRATIVES = tuple(word for word in lexicon.DEMONSTRATIVES if word != "that")
_NOT_REFERENT = lexicon.NOT_REFERENT_WORDS
# "this article", "the report": the documents being searched, which retrieval finds; asking
# "which article do you mean?" back would stop a question the corpus can answer.
_DOCUMENT_NOUNS = lexicon.DOCUMENT_NOUNS
_QUESTION_OPENERS = lexicon.QUESTION_OPENERS
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_WHAT_ABOUT = re.compile(r"^\s*(?:and\s+)?(?:what|how)\s+about\s+(.+?)\s*\??\s*$", re.IGNORECASE)
_AND_FRAGMENT = re.compile(
    rf"^\s*{lexicon.alternation(lexicon.FRAGMENT_OPENERS)}\s+(.+?)\s*\??\s*$", re.IGNORECASE
)


@dataclass(frozen=True)
class Mention:
    """Something the conversation talked about, and how salient it is now."""

    text: str  # as written: "Roth IRA", "facilitated diffusion"
    kind: str  # "name" (capitalised phrase) or "topic" (a run of content words)
    weight: float  # recency x speaker x repetition; higher is more salient
    stems: frozenset[str]


@dataclass(frozen=True)
class ConversationMemory:
    mentions: tuple[Mention, ...] = ()  # most salient first
    last_question: str = ""

    @property
    def subject(self) -> Mention | None:
        """What "it" most likely refers to: the most salient name, else the most salient topic."""
        names = [m for m in self.mentions if m.kind == "name"]
        return names[0] if names else (self.mentions[0] if self.mentions else None)

    def naming(self, noun: str, *, names_only: bool = False) -> Mention | None:
        """The most salient remembered mention whose words include ``noun`` ("library"); only
        names for "the X", which is as often generic ("the public") as a reference back."""
        wanted = stem(noun.lower())
        for mention in self.mentions:
            if names_only and mention.kind != "name":
                continue
            if wanted in mention.stems and len(mention.stems) > 1:
                return mention
        return None


@dataclass(frozen=True)
class Rewrite:
    """A question made standalone, and how. ``method``: unchanged, resolved, ellipsis, llm, prefix."""

    question: str  # what retrieval searches ("searched as ...")
    original: str
    method: str = "unchanged"
    resolved: tuple[tuple[str, str], ...] = ()  # (words in the question, what they stand for)
    unresolved: tuple[str, ...] = ()  # references nothing earlier names: "this library"
    carried: tuple[str, ...] = ()  # subjects added from earlier turns
    subject: str = ""  # the conversation's subject before this turn
    # "the X" phrases nothing earlier names ("the animal"): underspecified only when the
    # documents name several X (qa.pipeline.dialogue.turns decides, with the retrieved passages).
    definite: tuple[str, ...] = ()
    earlier_turns: int = 0  # how many turns came before this one
    # Share of the question's content words that the earlier turns (either speaker) used: a turn
    # that shares little has left the conversation's topic, so its references have less to point at.
    shared_words: float = 0.0
    # "the fast food chain", "this library": definite or demonstrative phrases with a common noun at
    # their head that no earlier turn, complement or number pins down (qa.pipeline.dialogue.references); the
    # turn is underspecified when the documents describe several things of that kind.
    open_references: tuple[str, ...] = ()


# --- memory ----------------------------------------------------------------------------------


def _phrases(text: str) -> list[tuple[str, str]]:
    """(phrase, kind) in order: capitalised runs as names, runs of content words as topics."""
    found: list[tuple[str, str]] = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        tokens = _TOKEN.findall(sentence)
        name: list[str] = []
        topic: list[str] = []
        for position, token in enumerate(tokens + [""]):
            lower = token.lower().strip(".")
            capital = bool(token) and token[0].isupper() and lower not in STOPWORDS
            is_name = capital and (position > 0 or token.isupper() or len(tokens) < 3)
            if (
                is_name
                and lower not in _QUESTION_OPENERS
                and lower not in META_WORDS
                and lower not in _CHATTER
            ):
                name.append(token.strip("."))
            else:
                if name:
                    found.append((" ".join(name), "name"))
                name = []
            content = (
                bool(token) and lower not in STOPWORDS and lower not in META_WORDS and not lower[0].isdigit()
            )
            verb = lower in _VERBS or (bool(topic) and lower.endswith("ed"))
            if (
                content
                and not verb
                and lower not in _QUESTION_OPENERS
                and lower not in _CHATTER
                and len(lower) > 2
            ):
                topic.append(lower)
            else:
                if len(topic) >= 2:
                    found.append((" ".join(topic[:3]), "topic"))
                topic = []
    return found


def remember(history: Sequence[Turn]) -> ConversationMemory:
    """The memory of the turns so far (oldest first); recent user turns weigh most."""
    weights: dict[tuple[str, str], float] = {}
    shown: dict[tuple[str, str], str] = {}
    for age, (question, answer) in enumerate(reversed(list(history))):
        recency = 0.5**age
        for text, speaker in ((question, 1.0), (answer, 0.4)):
            for phrase, kind in _phrases(text):
                key = (phrase.lower(), kind)
                weights[key] = weights.get(key, 0.0) + recency * speaker * (1.5 if kind == "name" else 1.0)
                shown.setdefault(key, phrase)
    mentions = sorted(
        (
            Mention(shown[key], key[1], weight, frozenset(stem(w) for w in words(shown[key])))
            for key, weight in weights.items()
        ),
        key=lambda m: -m.weight,
    )
    return ConversationMemory(tuple(mentions), history[-1][0] if history else "")


# --- rewriting --------------------------------------------------------------------------------


def _references(question: str, tagger: PartOfSpeechTagger | None) -> list[tuple[int, int, str, str]]:
    """(start, end, text, noun) for each reference back: pronouns (noun "") and
    demonstrative/definite phrases ("this library" -> noun "library")."""
    found = []
    tokens = list(re.finditer(r"[A-Za-z][A-Za-z'\u2019-]*", question))
    tags = dict(tagger(question)) if tagger is not None else None
    for i, match in enumerate(tokens):
        lower = match.group().lower()
        following = tokens[i + 1].group() if i + 1 < len(tokens) else ""
        previous = tokens[i - 1].group().lower() if i else ""
        # "that" after a preposition ("of that mission") points back; elsewhere it is as often
        # a relative pronoun ("everything that deleted").
        pointing_that = lower == "that" and previous in _PREPOSITIONS
        if lower in _DEMONSTRATIVES or pointing_that or (lower == "the" and i + 1 < len(tokens)):
            noun_tokens = []
            for nxt in tokens[i + 1 : i + 4]:
                word = nxt.group().lower()
                if word in STOPWORDS or word in _QUESTION_OPENERS:
                    break
                noun_tokens.append(nxt)
            if lower == "the" and noun_tokens and noun_tokens[0].group()[0].isupper():
                continue  # "the Bronx", "the Fair grounds": a name, not a reference back
            tagged = _noun_phrase(noun_tokens, tags)
            noun_tokens = _without_main_verb(question, tagged, tags)
            # "this County": one capitalised word after a demonstrative is a noun, not a name; so is
            # "this Superior Court" once its verb is cut off ("Does this Superior Court publish ...").
            single = (
                (len(noun_tokens) == 1 or len(noun_tokens) < len(tagged))
                and lower in _DEMONSTRATIVES
                and not noun_tokens[-1].group().isupper()
            )
            if noun_tokens and (single or not noun_tokens[-1].group()[0].isupper()):
                noun = noun_tokens[-1].group().lower()
                if noun not in _NOT_REFERENT and len(noun) > 2:
                    end = noun_tokens[-1].end()
                    found.append((match.start(), end, question[match.start() : end], noun))
            elif lower in _DEMONSTRATIVES and (not following or following.lower() in STOPWORDS):
                found.append((match.start(), match.end(), match.group(), ""))
        elif (
            lower in lexicon.UNSAID_CHOICE_ADJECTIVES
            and previous in lexicon.UNSAID_CHOICE_DETERMINERS
            and following
        ):
            # "a specific city": the asker has one in mind and has not said which.
            noun = following.lower()
            if noun not in STOPWORDS and noun not in _NOT_REFERENT:
                found.append((match.start(), tokens[i + 1].end(), f"this {noun}", noun))
        elif lower in _PRONOUNS and not (lower == "there" and _existential(previous, following)):
            if not _refers_within(lower, tokens[:i], tokens[i + 1 : i + 3], tags):
                found.append((match.start(), match.end(), match.group(), ""))
    return found


_WEATHER = lexicon.WEATHER_VERBS
# Plural nouns a tagger reads as singular.
_GROUPS = lexicon.GROUP_NOUNS


def _refers_within(pronoun: str, before: list, after: list, tags: dict[int, str] | None) -> bool:
    """Whether a pronoun points at nothing earlier in the conversation: the "it" of the weather
    ("When will it stop raining?" was searched as "When will Sel stop raining?"), or a "their"
    whose owners the question has just named before a verb ("How many people had to leave their
    homes?" was searched as "... leave Sel's homes?" and refused)."""
    if pronoun == "it":
        return any(token.group().lower() in _WEATHER for token in after)
    if pronoun != "their" or tags is None:
        return False
    owners = False
    for token in before:
        tag = tags.get(token.start(), "")
        if tag == "NNS" or token.group().lower() in _GROUPS:
            owners = True
        elif owners and tag.startswith("VB"):
            return True
    return False


_BE = lexicon.BE_FORMS


def _existential(previous: str, following: str) -> bool:
    """Whether "there" only says something exists ("is there any ...", "are there other ...")."""
    return previous in _BE or following.lower() in (_BE | lexicon.EXISTENTIAL_FOLLOWERS)


_PREPOSITIONS = lexicon.PREPOSITIONS
_CHATTER = lexicon.CHATTER_WORDS
_VERBS = lexicon.SUBJECT_FOLLOWING_VERBS


_NOT_NOUN_ENDINGS = lexicon.NOT_NOUN_ENDINGS
_NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
# Words that may stand inside a noun phrase before its noun ("the closest office", "the 4-H barn").
_MODIFIER_TAGS = frozenset({"JJ", "JJR", "JJS", "VBN", "CD", "HYPH"})


def _noun_phrase(tokens: list, tags: dict[int, str] | None = None) -> list:
    """The noun phrase after "this"/"the": capitalised modifiers and up to two lower-case words
    ("this California county", "the police department"). With part-of-speech ``tags`` (offset ->
    tag) it ends at its last noun ("the newspaper publish ..." is about a newspaper), and is empty
    when a name follows in apposition ("those abbreviations bps and VIX" names what it means);
    without them, a guess by word endings."""
    if tags:
        return _tagged_noun_phrase(tokens, tags)
    phrase = []
    for token in tokens:
        word = token.group().lower()
        lower_words = [t for t in phrase if not t.group()[0].isupper()]
        if lower_words and (word in _VERBS or word.endswith(_NOT_NOUN_ENDINGS) or token.group()[0].isupper()):
            break
        phrase.append(token)
        if len(lower_words) == 1:
            break
    while phrase and phrase[-1].group().lower() in _VERBS:
        phrase.pop()
    return phrase


def _tagged_noun_phrase(tokens: list, tags: dict[int, str]) -> list:
    phrase: list = []
    for token in tokens:
        tag = tags.get(token.start(), "")
        lower_words = [t for t in phrase if not t.group()[0].isupper()]
        if tag not in _NOUN_TAGS and tag not in _MODIFIER_TAGS:
            break
        if lower_words and tag in ("NNP", "NNPS"):
            return []  # a name in apposition: the phrase says what it means
        phrase.append(token)
        if len(lower_words) == 1:
            break
    while phrase and tags.get(phrase[-1].start(), "") not in _NOUN_TAGS:
        phrase.pop()
    return phrase


_DO = frozenset(lexicon.DO_FORMS)


def _without_main_verb(question: str, phrase: list, tags: dict[int, str] | None) -> list:
    """The phrase without its last word when that word must be the question's main verb: a question
    opened by "do"/"does"/"did" needs a bare verb after its subject, so when the tagger finds no verb
    after the phrase, the lower-case word closing the phrase is it ("Does this Superior Court
    publish judges roster?": the court publishes; "Which Superior Court publish do you mean?" was
    asked back)."""
    if not tags or len(phrase) < 2 or question.split(maxsplit=1)[0].lower() not in _DO:
        return phrase
    last = phrase[-1]
    if not last.group().islower():
        return phrase
    if any(tag.startswith("VB") for offset, tag in tags.items() if offset > last.start()):
        return phrase
    return phrase[:-1]


def _names_in(text: str) -> list[str]:
    return [phrase for phrase, kind in _phrases(text) if kind == "name"]


def _substitute(question: str, spans: list[tuple[int, int, str]]) -> str:
    out, last = [], 0
    for start, end, replacement in sorted(spans):
        out.append(question[last:start])
        out.append(replacement)
        last = end
    out.append(question[last:])
    return "".join(out)


def _ellipsis(question: str, memory: ConversationMemory) -> Rewrite | None:
    """A fragment that only makes sense as a variation of the previous question."""
    previous = memory.last_question
    if not previous:
        return None
    years = _YEAR.findall(question)
    if years and _YEAR.search(previous) and len(words(question)) <= 5:
        standalone = _YEAR.sub(years[0], previous, count=1)
        return Rewrite(standalone, question, "ellipsis", ((question.strip(), standalone),))
    fragment = _AND_FRAGMENT.match(question) if len(words(question)) <= 5 else None
    if fragment and fragment.group(1).split()[0].lower() in _QUESTION_OPENERS:
        fragment = None  # "And what are its plans?" is a question of its own, its pronoun resolved
    about = _WHAT_ABOUT.match(question) or fragment
    if about:
        # "And its population?": the possessive points at the subject the rewrite names, so it reads
        # "the population of Westmere?" (it was searched as "its population of Westmere?").
        new = re.sub(r"^(?:its|their|his|her)\s+", "the ", about.group(1).strip(), flags=re.IGNORECASE)
        subject = memory.subject
        if subject and subject.text.lower() in previous.lower() and _names_in(new):
            pattern = re.compile(re.escape(subject.text), re.IGNORECASE)
            standalone = pattern.sub(new, previous, count=1)
        elif subject:
            # "And its revenue?" reads "What is the revenue of Port?": a question, whose type
            # (an amount here) the answer is chosen by.
            phrase = new.rstrip(" ?")
            verb = "are" if phrase.endswith("s") and not phrase.endswith("ss") else "is"
            standalone = f"What {verb} {phrase} of {subject.text}?"
        else:
            standalone = f"{previous.rstrip(' ?')} {new}?"
        return Rewrite(standalone, question, "ellipsis", ((question.strip(), standalone),))
    return None


def rewrite(
    question: str,
    history: Sequence[Turn],
    memory: ConversationMemory | None = None,
    *,
    models: PipelineModels | None = None,
) -> Rewrite:
    """The question as it would be asked without the conversation (rule-based; see the module doc).
    ``models`` gives the part-of-speech tagger (None: ``default_models()``)."""
    models = models or default_models()
    made = _rewrite(question, history, memory or remember(history), models.parts_of_speech)
    earlier = [text for turn in history for text in turn]
    return replace(
        made,
        earlier_turns=len(history),
        shared_words=_shared_words(question, history),
        open_references=open_references(
            question, earlier, not_referents=_NOT_REFERENT | _DOCUMENT_NOUNS, models=models
        ),
    )


def _shared_words(question: str, history: Sequence[Turn]) -> float:
    asked = content_words(question)
    if not asked or not history:
        return 0.0
    said: set[str] = set()
    for user, agent in history:
        said |= content_words(user) | content_words(agent)
    return len(asked & said) / len(asked)


def _rewrite(
    question: str, history: Sequence[Turn], memory: ConversationMemory, tagger: PartOfSpeechTagger | None
) -> Rewrite:
    subject = memory.subject
    base = Rewrite(question, question, subject=subject.text if subject else "")
    if not history:
        return _unresolved_only(base, question, memory, tagger)
    fragment = _ellipsis(question, memory)
    if fragment is not None:
        return Rewrite(**{**fragment.__dict__, "subject": base.subject})
    spans: list[tuple[int, int, str]] = []
    resolved, unresolved, definite = [], [], []
    own_names = {n.lower() for n in _names_in(question)}
    antecedent = False  # a pronoun after "this county" in the same question refers to the county
    for start, end, text, noun in _references(question, tagger):
        if antecedent and not noun:
            continue
        antecedent = antecedent or bool(noun)
        if noun:
            named = memory.naming(noun, names_only=text.lower().startswith("the "))
            if named is not None and named.text.lower() not in question.lower():
                spans.append((start, end, f"the {named.text}"))
                resolved.append((text, named.text))
            elif _named_here(question, start, noun):
                continue
            elif text.lower().split()[0] in (*_DEMONSTRATIVES, "that"):
                unresolved.append(text)
            else:
                definite.append(text)
        elif subject is not None and subject.text.lower() not in question.lower():
            suffix = _PRONOUNS.get(text.lower(), "")
            replacement = subject.text + suffix if text.lower() not in _DEMONSTRATIVES else subject.text
            spans.append((start, end, replacement))
            resolved.append((text, subject.text))
    if spans:
        standalone = _substitute(question, spans)
        return Rewrite(
            standalone,
            question,
            "resolved",
            tuple(resolved),
            tuple(unresolved),
            (),
            base.subject,
            tuple(definite),
        )
    if _needs_subject(question, own_names) and subject is not None and not unresolved:
        standalone = f"{question.rstrip()} ({subject.text})"
        return Rewrite(
            standalone,
            question,
            "resolved",
            (),
            tuple(unresolved),
            (subject.text,),
            base.subject,
            tuple(definite),
        )
    return Rewrite(question, question, "unchanged", (), tuple(unresolved), (), base.subject, tuple(definite))


def _unresolved_only(
    base: Rewrite, question: str, memory: ConversationMemory, tagger: PartOfSpeechTagger | None
) -> Rewrite:
    references = [(start, text, noun) for start, _, text, noun in _references(question, tagger) if noun]
    unresolved = tuple(
        text
        for start, text, noun in references
        if text.lower().split()[0] in (*_DEMONSTRATIVES, "that") and not _points_back(question, start, noun)
    )
    definite = tuple(text for _, text, _ in references if text.lower().startswith("the "))
    return Rewrite(**{**base.__dict__, "unresolved": unresolved, "definite": definite})


def _points_back(question: str, start: int, noun: str) -> bool:
    """Whether a first turn's demonstrative refers to something the question itself says: the
    documents ("this article"), or what comes before it: a word ("the 2013 elections ... those
    elections") or a name ("how did Russia use its gas ... what risks did this create").
    "What does this library provide?" names nothing before it, so the reader must ask which."""
    before = question[:start]
    return _named_here(question, start, noun) or bool(_names_in(before))


def _named_here(question: str, start: int, noun: str) -> bool:
    """Whether a reference points at something the question itself says: the documents
    ("this article") or a word before it ("the 2013 elections ... those elections")."""
    return noun in _DOCUMENT_NOUNS or stem(noun) in {stem(w) for w in words(question[:start])}


def _needs_subject(question: str, own_names: set[str]) -> bool:
    """A short question that names nothing of its own ("How much does it cost?" minus the pronoun)."""
    content = [
        w
        for w in words(question)
        if w not in STOPWORDS and w not in META_WORDS and w not in _QUESTION_OPENERS
    ]
    return not own_names and len(content) <= 3


def prefix_rewrite(question: str, history: Sequence[Turn]) -> str:
    """The rewrite before conversation memory: a question that refers back, or a short one,
    is prefixed with the previous question (kept to compare against in bench/mtrag_un.py)."""
    if not history:
        return question
    if (
        re.search(
            r"\b(it|its|they|them|their|this|that|these|those|he|she|his|her|there|the same|"
            r"what about|and|also)\b",
            question,
            re.IGNORECASE,
        )
        or len(question.split()) <= 4
    ):
        return f"{history[-1][0]} {question}"
    return question


# --- with an LLM ------------------------------------------------------------------------------

REWRITE_PROMPT = (
    "Rewrite the user's last question as one standalone question that can be understood without the "
    "conversation: replace pronouns and references such as 'it' or 'this company' with what they refer "
    "to, and fill in what a short follow-up leaves out. Keep names, places and dates. If the question "
    "already stands alone, repeat it unchanged. Reply with the question only."
)


def rewrite_messages(question: str, history: Sequence[Turn], *, turns: int = 3) -> list[dict]:
    shown = "\n".join(f"User: {q}\nAssistant: {a[:400]}" for q, a in list(history)[-turns:])
    return [
        {"role": "system", "content": REWRITE_PROMPT},
        {"role": "user", "content": f"Conversation:\n{shown}\n\nLast question: {question}"},
    ]


def llm_rewrite(
    question: str, history: Sequence[Turn], llm: LLM, *, models: PipelineModels | None = None
) -> Rewrite:
    """The LLM's standalone question; the rule-based rewrite when its reply is empty or rambles."""
    rules = rewrite(question, history, models=models)
    if not history:
        return rules
    reply = llm.complete(rewrite_messages(question, history), temperature=0.0, max_tokens=100).strip()
    line = next((ln.strip().strip('"') for ln in reply.splitlines() if ln.strip()), "")
    line = re.sub(r"^(?:standalone question|question|rewritten)\s*:\s*", "", line, flags=re.IGNORECASE)
    if not line or len(line) > 3 * len(question) + 200:
        return rules
    return replace(rules, question=line, method="llm")
