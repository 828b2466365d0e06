"""Question words: wh-words, auxiliaries that open a question, and the nouns and adjectives
after them that say what kind of answer is asked for."""

from __future__ import annotations

# --- Question words ---------------------------------------------------------------------------

# English wh-words (closed class).
WH_WORDS = ("what", "who", "whom", "whose", "when", "where", "which", "why", "how")

# The wh-words that ask for a person (closed class).
PERSON_WH_WORDS = ("who", "whom", "whose")

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
