"""Numbers and measures: number and scale words, measure nouns, bounds and comparison scales."""

from __future__ import annotations

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

# What text.py's number reader keeps after a figure: NUMBER_SPAN_UNITS and "bn" (SCALE_WORDS).
NUMBER_SUFFIX_WORDS = (*NUMBER_SPAN_UNITS, "bn")

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
# The units a figure of the mismatch check may carry, as a pattern: percent however it is spaced,
# and multiples ("three times", "3x", "threefold"); written by the team for the mismatch check.
FIGURE_UNIT_PATTERN = r"(?:%|per\s*cent\b|percent\b|times\b|x\b|\u00d7|-?fold\b)"
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
