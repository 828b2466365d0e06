"""What LLM replies and injected prompts say: refusals in a model's own words, citation labels,
instructions addressed to a model."""

from __future__ import annotations

# --- LLM replies ------------------------------------------------------------------------------
# SOURCES_LACK_VERBS, NEGATED_AUXILIARIES, UNABLE_VERBS and OVERRIDE_VERBS were collected by hand
# from the replies of the local models tried (generation_output.py) and from published
# prompt-injection examples (prompts.py); the other lists say their own source.

# "The context does not mention ...": what a reply says the sources fail to do when it refuses in
# its own words.
SOURCES_LACK_VERBS = ("contain", "provide", "mention", "say", "state", "answer", "include", "specify", "give")

# "I cannot find ...", "I don't know ...": a reply's own refusal.
NEGATED_AUXILIARIES = ("do not", "don't", "cannot", "can't")
UNABLE_VERBS = ("know", "find", "answer", "determine")

# "The context does not ...": what a reply calls the sources when it refuses in its own words;
# written by the team for generation_output.py. Each plural before its singular, so that a pattern
# built from them reads "sources" whole.
REFUSING_SOURCE_NOUNS = (
    "context",
    "documents",
    "document",
    "sources",
    "source",
    "passages",
    "passage",
    "articles",
    "article",
    "text",
)

# Labels a reply writes before the ids it cites ("[Sources: 1, 3]", "Citations: 2"); written by the
# team for generation_output.py, plural before singular as above.
BRACKET_ID_LABELS = ("sources", "source", "refs", "ref", "citations", "citation")
CITATION_LABEL_WORDS = (
    "sources",
    "source",
    "citations",
    "citation",
    "references",
    "reference",
    "evidence",
    "supporting sentences",
    "supporting sentence",
    "ids",
    "id",
)

# "Ignore the previous instructions": verbs of text addressed to a model rather than to a reader.
OVERRIDE_VERBS = ("ignore", "disregard", "forget", "override")

# "... the previous instructions": what those verbs override; written by the team with
# OVERRIDE_VERBS for prompts.py, plural before singular.
INSTRUCTION_NOUNS = ("instructions", "instruction", "prompts", "prompt", "rules", "guidelines")
