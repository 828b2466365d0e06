"""Every English word list the pipeline reads, defined once, each with where its words come from.

The lists live in themed modules beside this one: ``function_words`` (stopwords, prepositions,
copulas, negators, pronouns), ``question_words`` (wh-words, auxiliaries, what a question asks
for), ``framing`` (words that frame a question or a conversation, overview requests),
``time_words``, ``amounts`` (numbers, measures, bounds, comparison scales), ``names_and_outcomes``
(outcome opposites, name particles, abbreviations) and ``llm_replies`` (what a model's reply or an
injected prompt says); ``patterns.alternation`` turns a list into a regular expression. This
package re-exports every name, so ``from qa.pipeline.core.lexicon import COPULAS`` and
``lexicon.COPULAS`` read the same object as the themed module.

Pure data: no imports from the rest of the pipeline, so any module (text.py included) can read it.
A module that needs a list in another shape derives it where it is used (stemmed with
``text.stem``, a subset, turned into a regular expression with ``alternation``) rather than
writing the words again. tests/test_layers.py fails when a qa/pipeline module outside this package
defines a module-level collection of three or more lowercase words, or a regular expression
alternating three or more words (``bench/lexicon_inventory.py`` is the scan).

Most lists outside the closed grammatical classes were collected by hand while the pipeline was
tuned on the Westmere demo corpus and its probe questions (tests/qa/pipeline/test_probes.py);
their comments say so, and say which question a word was added for where the commit did. Such a
list is as wide as the questions that were tried, no wider.
"""

# The imports below are the package's re-exports, not unused names.
# ruff: noqa: F401

from __future__ import annotations

from qa.pipeline.core.lexicon.amounts import (
    APPROXIMATE_BOUNDS,
    CHANGE_DIRECTIONS,
    COMPARATIVE_BOUND_PHRASES,
    COMPARISON_SCALES,
    COUNTED_NOUNS,
    EXACT_WORDS,
    FIGURE_NUMBER_WORDS,
    FIGURE_SCALE_WORDS,
    FIGURE_UNIT_PATTERN,
    GENERIC_MEASURES,
    HOW_QUANTITY_WORDS,
    LOWER_BOUNDS,
    MEASURE_ADJECTIVE_NOUNS,
    MEASURE_HEAD_NOUNS,
    MEASURE_NOUNS,
    MEASURE_SYNONYMS,
    MULTIPLICATIVES,
    NUMBER_SPAN_UNITS,
    NUMBER_SUFFIX_WORDS,
    NUMBER_WORDS,
    SCALE_WORDS,
    SHARE_NOUNS,
    SLOT_FILLER_WORDS,
    UPPER_BOUNDS,
)
from qa.pipeline.core.lexicon.framing import (
    CHATTER_WORDS,
    DOCUMENT_NOUNS,
    EVENT_WORDS,
    FOCUS_FRAMING_WORDS,
    FRAGMENT_OPENERS,
    FRAMED_DOCUMENT_NOUNS,
    GROUP_NOUNS,
    HAPPENED_PREPOSITIONS,
    NOT_A_SUBJECT_WORDS,
    NOT_NOUN_ENDINGS,
    NOT_REFERENT_WORDS,
    OVERVIEW_AUXILIARIES,
    OVERVIEW_PATTERN,
    SOURCE_FRAMING_WORDS,
    SUBJECT_FOLLOWING_VERBS,
    WEATHER_VERBS,
)
from qa.pipeline.core.lexicon.function_words import (
    ARTICLES,
    ARTICLES_AFTER_COPULA,
    ATTRIBUTE_PREPOSITIONS,
    BE_FORMS,
    COMPARISON_JOINERS,
    CONTENT_STOPWORDS,
    CONTRAST_CONJUNCTIONS,
    COPULAS,
    DEMONSTRATIVES,
    DETERMINERS,
    DO_FORMS,
    EXISTENTIAL_FOLLOWERS,
    META_WORDS,
    NEGATIONS,
    NON_POSSESSIVE_PRONOUNS,
    NOT_NAMES_EXTRA,
    PERSON_PRONOUNS,
    PINNING_WORDS,
    PREPOSITIONS,
    PRONOUN_POSSESSIVE_SUFFIX,
    REFERRING_NOUNS,
    SINGULAR_S_ENDINGS,
    SLOT_END_WORDS,
    STEM_SUFFIXES,
    STOPWORDS,
    SUBJECT_PREPOSITIONS,
    THIRD_PERSON_PRONOUNS,
    UNSAID_CHOICE_ADJECTIVES,
    UNSAID_CHOICE_DETERMINERS,
)
from qa.pipeline.core.lexicon.llm_replies import (
    BRACKET_ID_LABELS,
    CITATION_LABEL_WORDS,
    INSTRUCTION_NOUNS,
    NEGATED_AUXILIARIES,
    OVERRIDE_VERBS,
    REFUSING_SOURCE_NOUNS,
    SOURCES_LACK_VERBS,
    UNABLE_VERBS,
)
from qa.pipeline.core.lexicon.names_and_outcomes import (
    ACROSS_BORDERS_WORDS,
    DEMONYM_ENDINGS,
    EXTRA_ABBREVIATIONS,
    NAME_PARTICLES,
    NOT_ABBREVIATIONS,
    OPPOSITE_OUTCOMES,
    PERSON_NAME_PARTICLES,
    RECORD_LABEL_WORDS,
    REVERSING_VERBS,
    SMALL_WORDS_IN_NAMES,
)
from qa.pipeline.core.lexicon.patterns import (
    alternation,
)
from qa.pipeline.core.lexicon.question_words import (
    AUXILIARIES,
    CURRENT_WORDS,
    HOW_DEGREE_WORDS,
    HOW_MEASURE_ADJECTIVES,
    NEXT_PART_OPENERS,
    PAST_HOLDER_WORDS,
    PERSON_NOUNS,
    PERSON_WH_WORDS,
    PLACE_NOUNS,
    QUESTION_JOINERS,
    QUESTION_OPENERS,
    QUESTION_WORDS,
    TIME_NOUNS,
    TIME_PREPOSITIONS,
    TIME_QUESTION_NOUNS,
    WH_WORDS,
)
from qa.pipeline.core.lexicon.time_words import (
    MONTH_ABBREVIATIONS,
    MONTH_NAME_PATTERN,
    MONTH_PART_WORDS,
    MONTH_PATTERN,
    MONTHS,
    ORDINAL_SUFFIXES,
    RELATIVE_DAYS,
    WEEKDAY_STEMS,
    YEAR_PARTS,
)
