"""Every English word list the pipeline reads, defined once, each with where its words come from.

Pure data: no imports from the pipeline, so any module (text.py included) can read it. A module
that needs a list in another shape derives it where it is used (stemmed with ``text.stem``, turned
into a regular expression with ``alternation``) rather than writing the words again.
tests/test_layers.py fails when a qa/pipeline module other than this one defines a module-level
collection of four or more lowercase words, or a regular expression alternating four or more.

Most lists outside the closed grammatical classes were collected by hand while the pipeline was
tuned on the Westmere demo corpus and its probe questions (tests/qa/pipeline/test_probes.py);
their comments say so, and say which question a word was added for where the commit did. Such a
list is as wide as the questions that were tried, no wider.
"""

from __future__ import annotations

from collections.abc import Iterable


def alternation(words: Iterable[str]) -> str:
    """``(?:a|b|c)``: a non-capturing regular-expression group matching any of the words.

    The words are plain lowercase words or phrases (no regular-expression syntax), so they are
    joined as written.
    """
    return "(?:" + "|".join(words) + ")"


# --- Function words -------------------------------------------------------------------------

# NLTK's English stopword list (nltk_data corpora/stopwords/english, 179 words) without its 53
# contractions and their fragments ("don't", "don", "ll", "ve" ...: the tokenizer keeps
# contractions whole and the fragments never occur), plus "could" and "would". BM25 indexes and
# queries with it, so a change re-ranks every stored corpus.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because
    been before being below between both but by can could did do does doing down
    during each few for from further had has have having he her here hers herself
    him himself his how i if in into is it its itself just me more most my myself
    no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then
    there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours
    yourself yourselves""".split()
)

# STOPWORDS plus function words and reporting verbs added by hand for content-word overlap
# (answer sentences against cited sentences, questions against passages): connectives and
# quantifiers news text uses ("however", "among", "many"), reporting verbs ("said", "told",
# "according") and ordinal suffixes split off by the tokenizer ("st", "nd"). BM25 keeps the
# shorter list; merging the two would change every BM25 score.
CONTENT_STOPWORDS = STOPWORDS | frozenset(
    """also per via upon among amid within without onto however therefore thus meanwhile
    moreover furthermore although though whereas while yet still since ago even ever many much
    may might must shall one ones another either neither whether according said says say told
    st nd rd th""".split()
)

# Words an answer uses to talk about its sources rather than to assert facts (collected by hand
# from answers written by LLMs on the demo corpus: "The article states that ..."). They never
# appear in the cited sentence, so counting them would punish every such answer.
META_WORDS = frozenset(
    """article articles report reports reported reporting text context source sources document
    documents passage passages state states stated mention mentions mentioned note notes
    noted describe describes described explain explains explained indicate indicates
    indicated suggest suggests suggested provide provides provided information""".split()
)

# Capitalised words that start sentences without naming anything, beyond the stopwords and meta
# words (collected by hand from the demo corpus).
NOT_NAMES_EXTRA = frozenset({"i", "overall", "today", "yes"})

# English prepositions that join a question's subject to what is asked about it ("the population
# of", "news about"); a closed class, only the common ones.
PREPOSITIONS = frozenset("of about in on for from with at to by into".split())

# Prepositions between the items a list question asks for and its subject ("What are the
# population and capital of Westmere?"); the common ones, as decompose.py needed them.
SUBJECT_PREPOSITIONS = ("of", "in", "for", "at")

# Words joining the two things "compare A and/with/to/against B" compares.
COMPARISON_JOINERS = ("and", "with", "to", "against")

# English definite and demonstrative determiners (closed class).
DETERMINERS = frozenset({"the", "this", "these", "those", "that"})

# Complements that say which one is meant ("the report of", "a ship called"); collected by hand
# for references.py. A location ("the animal in California") does not pin the referent.
PINNING_WORDS = frozenset({"of", "for", "called", "named"})

# Present and past forms of "be" (closed class), with the negated forms and "will" that open a
# yes/no question the same way.
BE_FORMS = frozenset("is are was were be isn't aren't wasn't weren't will".split())

# The four finite forms of "be" a question or a definition turns on ("what is", "X was a ...");
# closed class. None is a prefix of another, so a pattern matches the same whatever their order.
COPULAS = ("is", "are", "was", "were")

# Indefinite and definite articles and "one", as after a copula ("is a", "was the", "is one").
ARTICLES_AFTER_COPULA = ("a", "an", "the", "one")

# Words joining clauses of contrast (closed class): where one claim of a sentence ends.
CONTRAST_CONJUNCTIONS = ("but", "while", "whereas", "although")

# Words that end the part of a question naming what is counted ("how many staff and ...").
SLOT_END_WORDS = ("and", "or", "but", "while", "whereas", "compared")

# English negators (closed class) and "without": a claim carrying one says the opposite of the
# same claim without it.
NEGATIONS = frozenset({"not", "no", "never", "none", "neither", "nor", "cannot", "without"})

# --- Pronouns ---------------------------------------------------------------------------------

# English third-person personal and possessive pronouns (closed class).
THIRD_PERSON_PRONOUNS = ("it", "its", "they", "them", "their", "he", "him", "his", "she", "her")

# English demonstrative pronouns (closed class).
DEMONSTRATIVES = ("this", "that", "these", "those")

# The third-person pronouns that refer to a person (closed class), "hers" included.
PERSON_PRONOUNS = frozenset({"he", "him", "his", "she", "her", "hers"})

# A pronoun a follow-up question uses for something named earlier, and what replaces it when the
# name is put in its place: "'s" for a possessive ("its capital" -> "Westmere's capital").
# THIRD_PERSON_PRONOUNS plus "there" (a place named earlier), which conversation.py keeps only
# when it is not existential ("there are").
PRONOUN_POSSESSIVE_SUFFIX = {
    "it": "",
    "its": "'s",
    "they": "",
    "them": "",
    "their": "'s",
    "he": "",
    "him": "",
    "his": "'s",
    "she": "",
    "her": "'s",
    "there": "",
}

# Nouns that, after "the", refer back to an event or actor named in the sentence before ("the move",
# "the deal"): collected by hand from the demo corpus's news reports, for answers that would
# otherwise open with a sentence whose subject is elsewhere.
REFERRING_NOUNS = (
    "move",
    "deal",
    "plan",
    "vote",
    "decision",
    "agreement",
    "measure",
    "step",
    "party",
    "country",
    "government",
    "group",
)

# --- Question words ---------------------------------------------------------------------------

# English wh-words (closed class).
WH_WORDS = ("what", "who", "whom", "whose", "when", "where", "which", "why", "how")

# Words that open an English question: the wh-words, auxiliaries and modals (closed classes),
# and the openers of requests and follow-ups ("tell", "please", "and", "so", "also") collected by
# hand from the conversation probes.
QUESTION_OPENERS = frozenset(
    "what which who whom whose when where why how is are was were do does did can could should "
    "would will may might tell please and or but so also".split()
)

# Auxiliaries that open the next question of a turn after ", and" (", and did it ..."); closed
# class, the common ones.
AUXILIARIES = ("is", "are", "was", "were", "did", "does", "do", "has", "have", "had", "can", "will")

# Conjunctions before a second wh-question in one sentence ("... and what ...", "..., but who").
QUESTION_JOINERS = ("and", "but", "also", "as well as")

# Words after ", and" that begin the next part of a question: wh-words and auxiliaries, as the
# decomposition probes needed them.
NEXT_PART_OPENERS = ("how", "what", "which", "who", "when", "where", "why", "did", "does", "is", "are", "was")

# Question words that never name what is asked about, with the framing words of "according to
# the article" and "a specific/exact ..." questions (collected by hand from the probes).
QUESTION_WORDS = tuple(
    """what which who whom whose when where why how does did do is are was were according article
    based solely only overview historical account reporting report specific exact describe explain""".split()
)

# Wh-questions "<wh> is ..." whose wh-phrase may take "how many/much/long/old/big/large".
HOW_DEGREE_WORDS = ("many", "much", "long", "old", "big", "large")

# Adjectives after "how" that ask for a measure ("how long", "how deep"); collected by hand.
HOW_MEASURE_ADJECTIVES = (
    "long",
    "far",
    "tall",
    "old",
    "big",
    "large",
    "high",
    "deep",
    "wide",
    "fast",
    "often",
    "heavy",
)

# Nouns after "what/which" that ask for a person ("which president"): roles and professions
# collected by hand from the probes and SQuAD-style questions.
PERSON_NOUNS = (
    "person",
    "president",
    "king",
    "queen",
    "leader",
    "prime minister",
    "author",
    "singer",
    "actor",
    "actress",
    "player",
    "coach",
    "founder",
    "ruler",
    "emperor",
    "chancellor",
    "minister",
    "general",
)

# Nouns after "what/which" that ask for a place ("which country"); collected by hand.
PLACE_NOUNS = (
    "country",
    "countries",
    "city",
    "cities",
    "state",
    "states",
    "place",
    "region",
    "continent",
    "province",
    "town",
    "island",
    "capital",
)

# Nouns after "what/which" (optionally "in/by/since/until what") that ask for a time.
TIME_NOUNS = ("year", "date", "day", "month", "decade", "century", "period")

# The time nouns a part of a question asks "in what ..." of (text.py's when-question parts).
TIME_QUESTION_NOUNS = ("year", "month", "day", "date", "decade")

# Prepositions "in/by/since/until what year" opens with.
TIME_PREPOSITIONS = ("in", "by", "since", "until")

# Words saying a role is held now ("the current president"); collected by hand.
CURRENT_WORDS = ("present", "incumbent", "sitting", "now", "today")

# Words saying a role was held before or first ("the first president", "the former mayor"):
# collected by hand from the probes about office holders.
PAST_HOLDER_WORDS = frozenset(
    "first second third former formerly previous founding late then onetime ex last outgoing".split()
)

# --- Framing words ----------------------------------------------------------------------------
# Words that frame a question without naming what it asks about. Three lists, used in three
# different tests, written separately and still different: merging them would change which
# questions are answered in part or refused.

# Focus words that are the question's own framing, never something a source must state
# (turns.py, stemmed there). Collected by hand from the probes: "people" because sources count
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

# Requests for an overview rather than one fact ("What do the sources say about the floods?"):
# the auxiliaries of "what do/does/did/can the sources say about ...", collected by hand from the
# probes for questions.py's overview pattern.
OVERVIEW_AUXILIARIES = ("do", "does", "did", "can")

# Prepositions after "what happened" that make it ask for an overview of a time or place ("What
# happened in the port?"), collected by hand from the probes with OVERVIEW_AUXILIARIES.
HAPPENED_PREPOSITIONS = ("in", "on", "at", "during", "to", "after", "before")

# --- Time -------------------------------------------------------------------------------------

# The English month names and their usual abbreviations (closed class). "may" is a month and a
# modal verb; verification.py removes it from claim keys either way.
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
MONTH_ABBREVIATIONS = ("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec")

# A month name, full or abbreviated, as a regular expression (capturing group): "jan", "january",
# "sep", "sept", "september". dates.py reads dates with it.
MONTH_PATTERN = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)

# The same months as questions.py writes them (non-capturing, "sep(?:t(?:ember)?)?"). It differs
# from MONTH_PATTERN only on the misspelling "sepember", which MONTH_PATTERN accepts.
MONTH_NAME_PATTERN = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)

# The stems of the English weekday names before "day" (closed class).
WEEKDAY_STEMS = ("mon", "tues", "wednes", "thurs", "fri", "satur", "sun")

# English ordinal suffixes after a numeral ("1st", "22nd", "19th"); closed class.
ORDINAL_SUFFIXES = ("st", "nd", "rd", "th")

# Relative day words that date a question ("tomorrow's weather").
RELATIVE_DAYS = ("yesterday", "tomorrow", "tonight", "weekend")

# Parts of a year, as months (first, last): seasons of the northern hemisphere, quarters and the
# phrases news text uses for a part of a year ("early 2024", "the second half of 2023").
YEAR_PARTS = {
    "early": (1, 4),
    "beginning of": (1, 3),
    "start of": (1, 3),
    "mid": (5, 8),
    "middle of": (5, 8),
    "late": (9, 12),
    "end of": (10, 12),
    "first half of": (1, 6),
    "second half of": (7, 12),
    "spring": (3, 5),
    "summer": (6, 8),
    "autumn": (9, 11),
    "fall": (9, 11),
    "first quarter of": (1, 3),
    "second quarter of": (4, 6),
    "third quarter of": (7, 9),
    "fourth quarter of": (10, 12),
    "q1": (1, 3),
    "q2": (4, 6),
    "q3": (7, 9),
    "q4": (10, 12),
}

# --- Numbers and measures ---------------------------------------------------------------------

# English number words (closed class, the ones news text spells out), with "dozen".
NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty "
    "hundred hundreds thousand thousands million millions billion billions dozen".split()
)

# Scale words after a number and their values ("4.2 million"); "bn" as financial news writes it.
SCALE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "bn": 1e9, "trillion": 1e12}

# Percentages and scale words a number span may end with (verification.py's number spans).
NUMBER_SPAN_UNITS = ("percent", "per cent", "thousand", "million", "billion", "trillion")

# Nouns that name a measure a question asks for ("the population of", "the cost of"), collected
# by hand from the probes and SQuAD-style questions; questions.py stems them.
MEASURE_NOUNS = tuple(
    """population number amount total cost price rate gdp budget revenue income salary height
    length width depth area size distance speed age temperature value score percentage percent share
    proportion fraction weight capacity count tally toll""".split()
)

# The measure nouns "what is the ... of" asks for, in the order questions.py's pattern tries them
# ("death toll" before "toll").
MEASURE_HEAD_NOUNS = (
    "population",
    "number",
    "amount",
    "total",
    "cost",
    "price",
    "rate",
    "gdp",
    "budget",
    "revenue",
    "income",
    "salary",
    "height",
    "length",
    "width",
    "depth",
    "area",
    "size",
    "distance",
    "speed",
    "age",
    "temperature",
    "value",
    "score",
    "weight",
    "capacity",
    "death toll",
    "toll",
)

# Words a source uses for a measure the question names differently ("home to 72,000 people");
# collected by hand from the probes.
MEASURE_SYNONYMS = {
    "population": {"people", "inhabitant", "resident", "citizen"},
    "cost": {"price", "spent", "spend", "paid"},
    "price": {"cost", "paid"},
    "age": {"old", "aged", "born"},
    "height": {"tall", "high", "metre", "meter", "feet", "foot"},
    "distance": {"far", "mile", "kilometre", "kilometer", "km"},
    "toll": {"killed", "dead", "death"},
}

# "How deep ...?" asks for a measure the passages name by its noun ("to a depth of 16 meters"):
# the English adjective-noun pairs of dimension, collected by hand.
MEASURE_ADJECTIVE_NOUNS = {
    "deep": {"depth"},
    "long": {"length"},
    "wide": {"width", "broad"},
    "broad": {"breadth", "width", "wide"},
    "high": {"height", "tall", "altitude", "elevation"},
    "tall": {"height", "high"},
    "heavy": {"weight"},
    "large": {"size", "area", "big"},
    "fast": {"speed"},
}

# "the total number of jobs": the measure is what is counted, not "number".
GENERIC_MEASURES = frozenset({"number", "amount", "total", "value", "count", "size"})

# Words around a quantity trigger that say nothing about *what* is counted (collected by hand).
SLOT_FILLER_WORDS = tuple(
    """exact total number amount figure count value size overall approximate approximately
    roughly estimated additional extra percentage percent proportion share fraction""".split()
)

# "how much/many", "what percentage/proportion ...", "the exact/total number/cost ...": the
# pieces of text.py's quantity-question pattern (collected by hand).
HOW_QUANTITY_WORDS = ("many", "much")
SHARE_NOUNS = ("percentage", "percent", "proportion", "share", "fraction")
EXACT_WORDS = ("exact", "total")
COUNTED_NOUNS = ("number", "amount", "figure", "count", "cost", "budget", "value", "size")

# Words for one direction of change, any of which a source may use for another ("How much did the
# container volume grow?" is answered by "an increase of 6 percent"); collected by hand.
CHANGE_DIRECTIONS = (
    "grow grew grown growth increase increased increases rise rose risen rising climb climbed gain "
    "gained expand expanded expansion jump jumped",
    "fall fell fallen falling decline declined decrease decreased decreases drop dropped shrink shrank "
    "shrunk contract contracted contraction",
)

# The words of figures and comparisons that the mismatch check reads (qa/pipeline/checks/mismatch.py).
# Sources: the English cardinal number words and multiplicatives (CGEL ch. 5 section 7), the
# bounding phrases of numeric expressions (Cummins, "The semantics and pragmatics of numerical
# expressions", 2015: comparative and superlative quantifiers), and the gradable antonym pairs of
# comparatives (WordNet adjective clusters fast/slow, high/low, large/small, good/bad, early/late,
# many/few; verb pair increase/decrease). Spelled-out numbers carry their values here, unlike
# NUMBER_WORDS, which only tells a count question.
FIGURE_NUMBER_WORDS: dict[str, float] = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
    "hundred": 100, "dozen": 12,
}  # fmt: skip
# Scale words and their values, "hundred" included (a figure's "3 hundred"); same sources.
FIGURE_SCALE_WORDS: dict[str, float] = {
    "hundred": 1e2, "thousand": 1e3, "million": 1e6, "billion": 1e9, "bn": 1e9, "trillion": 1e12,
}  # fmt: skip
# English multiplicatives (CGEL ch. 5 section 7) and their factors.
MULTIPLICATIVES: dict[str, float] = {"twice": 2, "thrice": 3, "double": 2, "triple": 3, "quadruple": 4}
# The bounding phrases before a figure: lower, upper, approximate (Cummins 2015, above).
LOWER_BOUNDS = (
    "at least",
    "more than",
    "greater than",
    "over",
    "above",
    "exceeding",
    "upwards of",
    "no fewer than",
    "no less than",
    "min",
)
UPPER_BOUNDS = ("at most", "less than", "fewer than", "under", "below", "up to", "no more than", "max")
APPROXIMATE_BOUNDS = ("about", "around", "approximately", "roughly", "nearly", "almost", "some", "circa", "~")
# Comparative words that bound a figure rather than compare two things ("more than 3" is a bound,
# "more slowly" a direction): removed before comparison directions are read (same sources).
COMPARATIVE_BOUND_PHRASES = (
    "more than",
    "less than",
    "fewer than",
    "greater than",
    "at least",
    "at most",
    "no more",
    "no less",
    "no fewer",
)
# Each scale: the words of one pole, then the other's. "more"/"less" stand for a pole only outside a
# bound ("more than 3" is a bound) and when no other scale's word follows ("more slowly" is slow).
COMPARISON_SCALES: tuple[tuple[str, frozenset[str], frozenset[str]], ...] = tuple(
    (name, frozenset(a.split()), frozenset(b.split()))
    for name, a, b in (
        ("speed", "fast faster fastest quick quicker quickest quickly rapid rapidly speedier speedy",
         "slow slower slowest slowly sluggish"),
        ("height", "high higher highest", "low lower lowest"),
        ("size", "large larger largest big bigger biggest", "small smaller smallest little"),
        ("amount", "more most many greater greatest", "less least fewer fewest"),
        ("change", "increase increased increases increasing rise rises rose risen rising grow grows grew "
         "grown growing gain gained gains", "decrease decreased decreases decreasing fall falls fell "
         "fallen falling decline declined declines declining drop dropped drops dropping shrink shrank "
         "shrinks reduced reduce reduces"),
        ("quality", "better best improve improved improves", "worse worst worsen worsened worsens"),
        ("time", "earlier earliest before sooner", "later latest after"),
        ("length", "long longer longest", "short shorter shortest"),
    )
)  # fmt: skip

# --- Outcomes and claims ----------------------------------------------------------------------

# Each pair: the words of one outcome and of its opposite. Stemmed forms are not enough
# ("won"/"win", "rose"/"rise"), so each side lists its forms. Collected by hand from the demo
# corpus's news reports (votes, trials, markets, rulings).
OPPOSITE_OUTCOMES = (
    ("won win wins winning victory victorious", "lost lose loses losing defeated defeat"),
    ("approved approve approves approval", "rejected reject rejects rejection vetoed veto"),
    (
        "rose rise rises risen rising increased increase increases grew",
        "fell fall falls fallen falling "
        "decreased decrease decreases declined decline declines dropped drop drops",
    ),
    ("passed", "failed"),
    ("accepted accept accepts", "refused refuse refuses declined"),
    ("confirmed confirm confirms", "denied deny denies"),
    (
        "resumed resume resumes restarted restart reopened reopen",
        "halted halt stopped stop suspended suspend shut closed",
    ),
    ("convicted", "acquitted"),
    ("guilty", "innocent"),
    ("allowed allow allows permitted", "banned ban bans prohibited forbade"),
    ("alive survived", "dead died killed"),
)

# Verbs that reverse the outcome after them ("lifted a ban"), besides the negations; collected by
# hand with OPPOSITE_OUTCOMES.
REVERSING_VERBS = frozenset({"lift", "lifted", "lifts", "ended", "end", "overturned", "reversed", "eased"})

# --- Names, places and abbreviations ----------------------------------------------------------
# Name particles, two lists written for two different tests and not merged (a merge changes which
# names match): claims.py lets two names differ by these and still be one name ("Charles de
# Gaulle", "Gaulle"), entities.py drops these from a person's name before looking for it in a
# sentence ("von" Steuben, "bin" Salman, "the" Great).

# Romance, Dutch, German and Arabic surname particles (claims.py).
NAME_PARTICLES = frozenset({"de", "van", "von", "al", "bin", "el", "la", "le", "da"})

# Dutch, German, Italian and Arabic particles and "the" of epithets (entities.py).
PERSON_NAME_PARTICLES = frozenset({"von", "van", "der", "den", "del", "della", "bin", "ibn", "the"})

# Lowercase words inside proper names ("Bank of England", "Trinidad and Tobago", "Charles de
# Gaulle"); turns.py keeps them when it reads a name.
SMALL_WORDS_IN_NAMES = frozenset({"of", "the", "and", "for", "on", "de"})

# English demonym endings ("Japanese", "Canadian", "Mexican", "British", "Iraqi").
DEMONYM_ENDINGS = ("ese", "ian", "an", "n", "ish", "i")

# How passages speak of what crosses borders, whichever the countries (stems, as
# ``content_words`` gives them); collected by hand from the trade probes.
ACROSS_BORDERS_WORDS = frozenset(
    {"international", "internationally", "oversea", "abroad", "foreign", "cross-border"}
)

# Words nupunkt learned as abbreviations from its training text that are ordinary English words
# ending a sentence ("... in the port."). Derived by bench/segmentation.py (see segment.py's
# docstring), kept as data so that run time needs only nupunkt and the list can be reviewed; the
# script reports when a package upgrade would change it.
NOT_ABBREVIATIONS = frozenset(
    """
    a academe accent acres ad add ago aims alike all am amok an applause apt arb
    arrows art ashore at auto awry b backs bail bank bat bed bets biting black
    bleak bold bombed bond book brash broad bull bus call can cancer cap car cent
    century chaos chase chases cheerful chest chip civilization climb closes coal
    code cold crazy day decks des dig doldrums drunk dull elect enter equal et etc
    faded farce fed fish flag flak flourish found fray free gracefully greenmail
    hall hand hard hers highs holidays horse how human ills in invaders joke jour
    just knees la lab lack lead leg life lock low luck mart me memo mend mess met
    mills miss month nonsense nor okay or overt par parade park pen per pet pick
    pop port prod prods prop rash raw re reporter reports reproach rest rich rife
    rob roll row ruin ruined sand sane sat saw scandal se sent series shade sir
    sleep so soar south spruce stake stars stock story sum sun tables tale talent
    tasks tax taxis tech ten thanks traumas vain victories vise walk wall wave week
    west wheat wheel whites will win wisely woes woods wool works wrath
    """.split()
)

# Abbreviations nupunkt's model lacks that the demo corpus uses ("Lt. Col.", "Cmdr.", "pct.").
EXTRA_ABBREVIATIONS = ("lt", "lieut", "cmdr", "pct")

# --- LLM replies ------------------------------------------------------------------------------
# Collected by hand from the replies of the local models tried (generation_output.py) and from
# published prompt-injection examples (prompts.py).

# "The context does not mention ...": what a reply says the sources fail to do when it refuses in
# its own words.
SOURCES_LACK_VERBS = ("contain", "provide", "mention", "say", "state", "answer", "include", "specify", "give")

# "I cannot find ...", "I don't know ...": a reply's own refusal.
NEGATED_AUXILIARIES = ("do not", "don't", "cannot", "can't")
UNABLE_VERBS = ("know", "find", "answer", "determine")

# "Ignore the previous instructions": verbs of text addressed to a model rather than to a reader.
OVERRIDE_VERBS = ("ignore", "disregard", "forget", "override")
