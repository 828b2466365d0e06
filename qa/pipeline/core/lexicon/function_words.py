"""English function words and pronouns: stopwords, prepositions, determiners, copulas,
negators, conjunctions and the pronouns a follow-up refers back with."""

from __future__ import annotations

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

# English articles (closed class); turn_kind.py strips a capitalised one from the start of a name
# ("The Port Authority").
ARTICLES = ("the", "a", "an")

# The present and past forms of "do" (closed class) that open a yes/no question ("Does this
# library provide ...?").
DO_FORMS = ("do", "does", "did")

# Prepositions between an attribute and what it belongs to in a comparison ("compare the
# population of A and B", "the capital and the currency of Westmere"); written by the team for
# decompose.py's comparisons. SUBJECT_PREPOSITIONS without "at", as decompose.py wrote them.
ATTRIBUTE_PREPOSITIONS = ("of", "in", "for")

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

# The third-person pronouns that are no possessive (closed class): after one is resolved, the name
# put in its place drops a possessive "'s" ("it" -> "Mali", not "Mali's"; decompose.py).
NON_POSSESSIVE_PRONOUNS = tuple(p for p in THIRD_PERSON_PRONOUNS if not PRONOUN_POSSESSIVE_SUFFIX[p])

# Words after "there" that make it existential ("is there any ...", "are there a few ..."), besides
# the forms of "be"; written by the team for conversation.py.
EXISTENTIAL_FOLLOWERS = frozenset({"any", "anything", "a", "an"})

# "a specific city", "any particular year": the asker has one in mind and has not said which.
# Written by the team for conversation.py's open references: the adjectives, then the determiners
# before them.
UNSAID_CHOICE_ADJECTIVES = ("specific", "particular", "certain")
UNSAID_CHOICE_DETERMINERS = ("a", "any", "one")

# --- Word endings -----------------------------------------------------------------------------

# The English inflectional suffixes text.stem strips (progressive, past, plural), in the order it
# tries them; written by the team. The answerability models were fitted on these stems.
STEM_SUFFIXES = ("ing", "ed", "es", "s")

# Endings of English singular nouns that end in "s" ("class", "bonus", "analysis"); written by the
# team for turns.py, which refers back to a plural noun with "them".
SINGULAR_S_ENDINGS = ("ss", "us", "is")

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
