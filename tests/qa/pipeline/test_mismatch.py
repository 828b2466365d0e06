"""A claim whose figures, comparison direction or negation differ from its citation is not supported.

One table: (claim, cited text, expected verdict, words the plain-word reason must contain). None means
nothing differs, so the sentence is left to the overlap verifier."""

from __future__ import annotations

import pytest

from qa.pipeline.checks.mismatch import check_claim, figures
from qa.pipeline.checks.verification import LexicalVerifier, Verdict, checked_for_mismatch
from qa.pipeline.core.types import SUPPORTED, UNSUPPORTED, SourceSentence
from qa.pipeline.drafting.generation import DraftSentence

MAN_DB_SOURCE = "man-db's full-text search, when it has an index, is at least three times as quickly as man."

CASES = [
    # --- the man-db case: another figure and the other direction ---
    (
        "man-db performs a full-text search about ten times more slowly than man.",
        MAN_DB_SOURCE,
        "contradicted",
        ["'about ten times'", "'at least three times'", "'slowly'", "'quickly'"],
    ),
    # --- figures: the same figure written another way stays supported ---
    ("It is three times faster.", "It is 3 times faster.", None, []),
    ("It is 3x faster.", "It is three times faster.", None, []),
    ("Compression is two-fold faster.", "Compression is twice as fast.", None, []),
    ("More than 3 people came.", "Over three people came.", None, []),
    ("At least 5 releases shipped.", "Seven releases shipped.", None, []),
    ("Fewer than 10 bugs remain.", "Six bugs remain.", None, []),
    ("The population is 3.2 million.", "The population is 3,215,000.", None, []),
    ("The licence lasts twenty-five years.", "The licence lasts 25 years.", None, []),
    ("Prices rose by 12 percent in 2010.", "In 2010 prices rose 12%.", None, []),
    ("It was released in 1995.", "It was first released in May 1995.", None, []),
    ("About 100 people came.", "Some 95 people came.", None, []),
    ("zlib 1.2.11 fixed it.", "The bug was fixed in zlib 1.2.11.", None, []),
    # --- figures that differ ---
    (
        "It is ten times faster.",
        "It is three times faster.",
        "contradicted",
        ["'ten times'", "'three times'"],
    ),
    ("It was released in 1996.", "It was first released in May 1995.", "contradicted", ["'1996'", "'1995'"]),
    ("Prices rose by 15%.", "Prices rose by 12 percent.", "contradicted", ["'15%'", "'12 percent'"]),
    (
        "The licence lasts 20 years.",
        "The licence lasts twenty-five years.",
        "contradicted",
        ["'20'", "'twenty-five'"],
    ),
    ("Two people came.", "At least five people came.", "contradicted", ["'Two'", "'At least five'"]),
    ("More than 10 people came.", "Fewer than 8 people came.", "contradicted", ["'More than 10'"]),
    # Weaker source: "at least three" neither states nor rules out "ten".
    ("It is ten times faster.", "It is at least three times faster.", "not_stated", ["'ten times'"]),
    ("It is 40 percent smaller.", "It is much smaller.", "not_stated", ["'40 percent'", "no such figure"]),
    # --- comparison direction ---
    ("man-db is faster than man.", "man-db is slower than man.", "contradicted", ["'faster'", "'slower'"]),
    ("man-db is faster than man.", "man is slower than man-db.", None, []),  # the compared swap places
    ("Prices fell in 2010.", "In 2010 prices rose.", "contradicted", ["'fell'", "'rose'"]),
    ("Usage increased after the release.", "Usage grew after the release.", None, []),
    (
        "The new index uses less memory.",
        "The new index uses more memory.",
        "contradicted",
        ["'less'", "'more'"],
    ),
    ("The peak is higher than the pass.", "The peak is lower than the pass.", "contradicted", ["'higher'"]),
    ("Prices rose, then fell.", "Prices rose and later fell.", None, []),  # both poles on each side
    ("It runs more slowly than man.", "It runs slower than man.", None, []),  # "more" only grades "slowly"
    # --- negation ---
    (
        "zlib handles dates.",
        "zlib doesn't handle dates, so it is Y2K compliant.",
        "contradicted",
        ["'not handle dates'", "the claim does not"],
    ),
    ("zlib does not handle dates.", "zlib doesn't handle dates.", None, []),
    ("zlib is Y2K compliant.", "zlib doesn't handle dates, so it is Y2K compliant.", None, []),  # an aside
    ("The grant is never revocable.", "The grant is revocable.", "contradicted", ["'never revocable'"]),
    (
        "The library works without threads.",
        "The library works with threads.",
        "contradicted",
        ["'without threads'"],
    ),
    ("Root has uid 0.", "The root account has uid 0.", None, []),
]


@pytest.mark.parametrize(("claim", "source", "verdict", "reason"), CASES, ids=[c[0][:40] for c in CASES])
def test_claim_against_its_citation(claim, source, verdict, reason):
    check = check_claim(claim, source)
    assert check.verdict == verdict, check.describe()
    for fragment in reason:
        assert fragment in check.describe()


FIGURES = [
    ("about ten times more slowly", [(10, "times", "about")]),
    ("at least three times as quickly", [(3, "times", "lower")]),
    ("3x faster and 12% smaller", [(3, "times", "exact"), (12, "percent", "exact")]),
    ("twice as fast", [(2, "times", "exact")]),
    ("3.2 million people in 2010", [(3_200_000, "count", "exact"), (2010, "count", "exact")]),
    ("up to 4 GB", [(4, "count", "upper")]),
    ("no one came, one of them said", []),  # "one" alone is a pronoun
    ("RFC 1950 and zlib 1.2.11", []),  # identifiers
]


@pytest.mark.parametrize(("text", "expected"), FIGURES)
def test_figures_are_read_with_unit_and_bound(text, expected):
    assert [(f.value, f.unit, f.bound) for f in figures(text)] == expected


def _cited(text: str) -> tuple[SourceSentence, ...]:
    return (SourceSentence(1, "man-db-faq", "man-db FAQ", 0, "s1", text),)


def test_the_lexical_verifier_labels_the_man_db_claim_contradicted_not_supported():
    claim = "man-db performs a full-text search about ten times more slowly than man."
    [verdict] = LexicalVerifier().verify("", [DraftSentence(claim, _cited(MAN_DB_SOURCE))]).verdicts
    assert verdict.label == UNSUPPORTED and verdict.contradicted
    assert verdict.reason.startswith("contradicts its citation: the claim says 'about ten times'")


def test_the_lexical_verifier_keeps_a_paraphrase_with_the_figure_in_words_supported():
    claim = "man-db's full-text search with an index is at least 3 times as quick as man."
    [verdict] = LexicalVerifier().verify("", [DraftSentence(claim, _cited(MAN_DB_SOURCE))]).verdicts
    assert verdict.label == SUPPORTED, verdict.reason


def test_any_verifier_verdict_is_overruled_when_the_citation_says_otherwise():
    """An LLM verifier's SUPPORTED is checked too: the stage applies the check whatever judged."""
    claim = "man-db performs a full-text search about ten times more slowly than man."
    verdict = checked_for_mismatch(Verdict(SUPPORTED, "LLM verdict"), claim, MAN_DB_SOURCE)
    assert verdict.label == UNSUPPORTED and "'slowly'" in verdict.mismatch
    untouched = checked_for_mismatch(Verdict(SUPPORTED, "LLM verdict"), "man-db is quick.", MAN_DB_SOURCE)
    assert untouched.label == SUPPORTED
