"""Words that frame a question or a conversation without naming what it asks about, and the
words of overview requests."""

from __future__ import annotations

from qa.pipeline.core.lexicon.patterns import alternation

# --- Framing words ----------------------------------------------------------------------------
# Words that frame a question without naming what it asks about. Three lists, used in three
# different tests, written separately and still different: merging them would change which
# questions are answered in part or refused.

# Focus words that are the question's own framing, never something a source must state
# (gaps.py, stemmed there). Collected by hand from the probes: "people" because sources count
# people by what they are ("2,400 residents"); "volumes", "levels", "figures" because they are the
# measure of what is asked about ("Why did container volumes grow?").
FOCUS_FRAMING_WORDS = tuple(
    """tell know want need like help please difference different differ compare comparison
    example examples mean meaning way ways thing things work works best good better use used get able
    possible happen happens happened today currently current isn't aren't don't doesn't last come
    seem leave answer recommend next week include call really actually exactly also
    exact precise precisely specific specifically particular general number kind kinds type types
    people person persons volume volumes level levels figure figures amount amounts total totals
    statistics data""".split()
)

# Words that frame a question ("Based only on this article, ...") without asking anything
# (generation.py; collected by hand from the demo's framed questions).
SOURCE_FRAMING_WORDS = ("based", "according", "solely", "only", "reportedly")

# Nouns naming the document a framed question points at ("According to the report provided, ...");
# decompose.py strips that framing before splitting. Collected by hand from the probes.
FRAMED_DOCUMENT_NOUNS = (
    "article",
    "report",
    "reporting",
    "overview",
    "account",
    "document",
    "text",
    "source",
)

# "this article", "the report": the documents being searched (conversation.py; collected by hand).
# Asking "which article do you mean?" back would stop a question the corpus can answer.
DOCUMENT_NOUNS = frozenset(
    """article articles report reports reporting document documents text passage story paper study
    overview account coverage piece""".split()
)

# Verbs of happening: "What happened in southern Westmere?" asks for the event a sentence tells,
# not for a sentence using the word (collected by hand for that probe).
EVENT_WORDS = ("happen", "happened", "happens", "happening", "occur", "occurred", "occurs")

# Words a one-word follow-up says about the conversation rather than a subject to search for
# (collected by hand from the conversation probes).
NOT_A_SUBJECT_WORDS = tuple(
    """tell more example examples interesting interested thanks thank okay great cool wow sure
    yes yeah really explain elaborate detail details else info information help mean""".split()
)

# Conversational chatter that is no question at all (collected by hand with SUBJECT_FOLLOWING_VERBS).
CHATTER_WORDS = frozenset("yes yeah sure thanks thank okay ok hello hi great please sorry think know".split())

# Words that follow "the"/"this" without naming a thing one could ask "which one?" about
# (collected by hand from the conversation probes).
NOT_REFERENT_WORDS = frozenset(
    """way time case same other first last best most following above next one ones thing things
    difference differences end answer question information world us kind type types lot amount
    number cost price rate process reason reasons benefit benefits purpose role use""".split()
)

# Verbs that follow a question's subject ("does this library provide ..."), never a noun: common
# English verbs in their present and past forms, collected by hand while conversation memory was
# tuned on the conversation probes and MTRAG-UN train (bench/mtrag_un.py); the tagger reads some
# of them as nouns.
SUBJECT_FOLLOWING_VERBS = frozenset(
    """employ employs play plays think know want like believe heard hear tell said say provide provides
    offer offers have has had pay pays paid do does make makes work works mean means
    use uses give gives take takes get gets need needs cost costs affect affects happen happens support
    supports require requires include includes apply applies charge charges allow allows accept accepts
    compare compares differ differs help helps cover covers stand stands come comes go goes run runs
    play plays start started open opens close closes serve serves issue issues
    came become became went made said took gave got found began knew thought told wrote saw brought
    held kept left led won grew""".split()
)

# English suffixes of adverbs, participles and adjectives ("-ly", "-ed", "-ous"): a word ending in
# one is not the head noun of a question's subject.
NOT_NOUN_ENDINGS = ("ly", "ed", "en", "wn", "ing", "ous", "ful", "ive", "able", "ible", "est")

# Weather verbs whose "it" refers to nothing ("is it raining?"); collected by hand for that probe.
WEATHER_VERBS = frozenset(
    "rain rains raining rained snow snows snowing snowed pour pouring hail hailing".split()
)

# Plural nouns without a plural "-s" that the tagger reads as singular (collected by hand).
GROUP_NOUNS = frozenset("people staff police personnel".split())

# Words that open a follow-up fragment continuing the last question ("and in 2019?", "also the
# capital?"); written by the team with conversation memory (conversation.py), with "what about".
FRAGMENT_OPENERS = ("and", "also", "or")

# Requests for an overview rather than one fact ("What do the sources say about the floods?"):
# the auxiliaries of "what do/does/did/can the sources say about ...", collected by hand from the
# probes for questions.py's overview pattern.
OVERVIEW_AUXILIARIES = ("do", "does", "did", "can")

# Prepositions after "what happened" that make it ask for an overview of a time or place ("What
# happened in the port?"), collected by hand from the probes with OVERVIEW_AUXILIARIES.
HAPPENED_PREPOSITIONS = ("in", "on", "at", "during", "to", "after", "before")

# "Tell me about the port.", "What do the sources say about the floods?": a request for what the
# sources say about a subject (named group ``subject``), not for one fact. The phrases were written
# by the team with OVERVIEW_AUXILIARIES from the probes, for questions.py's overview questions;
# kept as one pattern since its words only mean a request in this order.
OVERVIEW_PATTERN = (
    r"^\s*(?:(?:please|can you|could you)\s+)?(?:"
    r"tell\s+(?:me|us)\s+(?:more\s+)?about"
    rf"|what\s+{alternation(OVERVIEW_AUXILIARIES)}\s+(?:the\s+|these\s+|your\s+)?"
    r"(?:sources?|documents?|reports?|articles?|corpus|texts?|you)\s+(?:say|tell\s+(?:me|us)|report|know)\s+about"
    r"|what\s+is\s+(?:known|said|reported)\s+about"
    r"|(?:give\s+(?:me\s+)?)?(?:an?\s+)?(?:overview|summary)\s+of"
    r"|summari[sz]e|describe"
    rf"|what\s+(?:happened|has\s+happened|took\s+place)\s+(?={alternation(HAPPENED_PREPOSITIONS)}\s)"
    r")\s*(?P<subject>\S.*)$"
)
