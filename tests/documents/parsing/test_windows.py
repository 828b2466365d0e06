"""sentence_windows(): which sentences each retrieval chunk holds."""

from __future__ import annotations

from itertools import pairwise

import pytest

from documents.parsing import sentence_windows


def test_windows_advance_by_size_minus_overlap_and_end_at_the_last_sentence():
    assert sentence_windows(20, size=8, overlap=2) == [(0, 7), (6, 13), (12, 19)]
    assert sentence_windows(15, size=8, overlap=2) == [(0, 7), (6, 13), (12, 14)]


def test_every_sentence_is_in_some_window_and_each_window_adds_new_ones():
    for n in range(1, 40):
        windows = sentence_windows(n, size=5, overlap=2)
        covered = {i for first, last in windows for i in range(first, last + 1)}
        assert covered == set(range(n))
        assert all(b_last > a_last for (_, a_last), (_, b_last) in pairwise(windows))


def test_short_documents_get_one_window_and_empty_ones_none():
    assert sentence_windows(0) == []
    assert sentence_windows(1) == [(0, 0)]
    assert sentence_windows(8) == [(0, 7)]
    assert sentence_windows(9) == [(0, 7), (6, 8)]


def test_overlap_zero_tiles_the_document():
    assert sentence_windows(5, size=2, overlap=0) == [(0, 1), (2, 3), (4, 4)]


@pytest.mark.parametrize(
    "args",
    [(-1, 8, 2), (10, 0, 0), (10, 4, 4), (10, 4, -1), (10, 2.5, 1), (True, 8, 2)],
)
def test_invalid_arguments_are_refused(args):
    with pytest.raises(ValueError):
        sentence_windows(*args)


# Each sentence's section path, in document order: a heading carries the path above it, the
# sentences under it that path and its own text.
MANUAL = [
    "",  # the title
    "",  # "Installing"
    "Installing",
    "Installing",
    "Installing",
    "",  # "Platform list"
    "Platform list",  # a table row
    "Platform list",  # a table row
    "Platform list",  # "Footnotes", a sub-heading
    "Platform list > Footnotes",
    "",  # "Toolchains"
    "Toolchains",  # a table row of the next table
]


def test_section_windows_never_hold_the_end_of_one_section_and_the_start_of_the_next():
    from documents.parsing import section_windows

    # A section's heading opens its chunk; a sub-section's sentences stay with the section it is in.
    assert section_windows(MANUAL, size=8, overlap=2) == [(0, 4), (5, 9), (10, 11)]
    # Without sections a document is one run: the windows are sentence_windows'.
    assert section_windows([""] * 20, size=8, overlap=2) == sentence_windows(20, size=8, overlap=2)
    # A long section is still cut into overlapping windows, inside it.
    assert section_windows([""] + ["Long"] * 12 + [""], size=8, overlap=2) == [(0, 7), (6, 12), (13, 13)]
