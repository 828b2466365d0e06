"""segment(): sentence spans an analyst can cite, with exact offsets."""

from __future__ import annotations

import textwrap
from itertools import pairwise

import pytest

from documents.parsing import MAX_SENTENCE_CHARS, segment


def sentences(text: str, **options) -> list[str]:
    return [text[start:end] for start, end in segment(text, **options)]


@pytest.mark.parametrize(
    "text",
    [
        "The U.S. Army under Gen. Smith met Dr. Jones at noon.",
        "It ranked No. 5 on the list of the largest producers.",
        "The law changed on Jan. 1 after a long debate.",
        "Growth was 3.5 percent, the fastest in a decade.",
        "Some crops, e.g. wheat and barley, failed that year.",
        "See Fig. 2 for the results, i.e. the chart below.",
        "It cost approx. 5 dollars at the time.",
        "Lt. Col. Smith spoke at 5 p.m. Friday in Kyiv.",
        "Polls opened at 7 a.m. (1 a.m. ET) in Harare.",
        "The kingdom dates from approximately 2300 B.C. and grew.",
        "Sen. John McCain (R-Ariz.) voted against the bill.",
    ],
)
def test_abbreviations_and_decimals_do_not_end_a_sentence(text):
    assert sentences(text) == [text]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("He moved to the U.S. Then he died.", ["He moved to the U.S.", "Then he died."]),
        (
            "Russia attacked from the south. Ukraine held.",
            ["Russia attacked from the south.", "Ukraine held."],
        ),
        (
            "Talks stalled, Reuters reports. Ukraine denies it.",
            ["Talks stalled, Reuters reports.", "Ukraine denies it."],
        ),
        ("The bank said no. Nobody asked why.", ["The bank said no.", "Nobody asked why."]),
        ('"We will win," he said. "Never give up."', ['"We will win," he said.', '"Never give up."']),
    ],
)
def test_ordinary_words_before_a_full_stop_still_end_a_sentence(text, expected):
    assert sentences(text) == expected


def test_offsets_point_exactly_at_the_sentence_text():
    text = "  Résumé: Dr. Ng arrived.\r\n\r\nShe left at 5 p.m. on Friday.  Nobody noticed — or did they?\n"
    spans = segment(text)
    assert [text[start:end] for start, end in spans] == [
        "Résumé: Dr. Ng arrived.",
        "She left at 5 p.m. on Friday.",
        "Nobody noticed — or did they?",
    ]
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in pairwise(spans))


def test_a_heading_without_full_stop_stays_apart_from_the_paragraph_below():
    text = (
        "Background\nOman has long prospered from Indian Ocean trade. It signed treaties with Britain."
        "\n\nEconomy\nOil dominates."
    )
    assert sentences(text) == [
        "Background",
        "Oman has long prospered from Indian Ocean trade.",
        "It signed treaties with Britain.",
        "Economy",
        "Oil dominates.",
    ]


def test_list_items_are_separate_sentences():
    assert sentences("Exports:\n- crude oil\n- natural gas\n- fish") == [
        "Exports:",
        "- crude oil",
        "- natural gas",
        "- fish",
    ]


def test_a_sentence_wrapped_over_several_lines_is_one_sentence():
    sentence = (
        "Russian forces attacked Ukraine on the orders of Vladimir Putin, who announced what he "
        "called a special military operation at dawn on Thursday while sirens sounded in Kyiv."
    )
    text = (
        "Top story\n"
        + textwrap.fill(sentence, 72)
        + "\n"
        + textwrap.fill("Markets fell sharply. Oil rose.", 72)
    )
    found = sentences(text)
    assert found[0] == "Top story"
    assert " ".join(found[1].split()) == sentence
    assert found[2:] == ["Markets fell sharply.", "Oil rose."]


def test_a_wrapped_line_opening_with_an_option_continues_its_sentence():
    # "--port" is no list item (a bullet is followed by a space), so the wrap is soft.
    text = (
        'Please use "pg_lsclusters" for displaying the cluster <-> port\n'
        "mapping, and please have a look at the pg_createcluster manpage (the\n"
        "--port option) for details."
    )
    assert [" ".join(s.split()) for s in sentences(text)] == [" ".join(text.split())]


@pytest.mark.parametrize("mark", ["=", "-"])
def test_a_rule_under_a_long_title_is_never_part_of_the_title(mark):
    title = "Default clusters and upgrading between major versions"
    text = f"{title}\n{mark * len(title)}\n\nWhen installing a package from scratch, a cluster is made."
    assert sentences(text)[0] == title


def test_labelled_records_stay_apart_however_full_a_line_is():
    # The first record is the block's longest line, so it looked "full", as a wrapped line is.
    text = (
        "Geography: Location: Middle East, bordering the Arabian Sea, Gulf of Oman, and Persian Gulf\n"
        "Geography: Area - total: 309,500 sq km\n"
        "Geography: Elevation - highest point: Jabal Shams 3,004 m"
    )
    assert sentences(text) == text.split("\n")


def test_hard_line_breaks_keep_one_record_per_line():
    text = (
        "Geography: Location: Middle East, bordering the Arabian Sea and the Gulf of Oman\n"
        "Geography: Area - total: 309,500 sq km"
    )
    assert sentences(text, hard_line_breaks=True) == text.split("\n")


def test_a_table_run_together_is_cut_into_citable_pieces():
    row = "Oman | 2020 | 3.5 | oil, gas, fish; "
    text = row * 200
    spans = segment(text)
    assert len(spans) > 1
    assert all(end - start <= MAX_SENTENCE_CHARS for start, end in spans)
    # Nothing is lost: the pieces cover every non-space character.
    assert "".join(text[start:end] for start, end in spans).replace(" ", "") == text.replace(" ", "")


def test_whitespace_only_text_has_no_sentences():
    assert segment("") == []
    assert segment(" \n\t\n ") == []
