"""Documents keep their structure: each sentence's role, section path and page, by format.

Tables of (file, what its sentences must be): a heading, title or question is marked so that no
answer quotes it, a FAQ's answer knows the question it sits under, a table row is one sentence
carrying its header cells.
"""

from __future__ import annotations

import pytest

from documents.parsing import MAX_SENTENCE_CHARS, parse_bytes
from tests.documents.parsing.files import docx_bytes, pdf_bytes

ZLIB_FAQ = b"""
                Frequently Asked Questions about zlib


 1. Is zlib Y2K-compliant?

    Yes. zlib doesn't handle dates.

 6. Where's the zlib documentation (man pages, etc.)?

    It's in zlib.h .
"""

APACHE = b"""
   TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION

   3. Grant of Patent License. Subject to the terms and conditions of
      this License, each Contributor hereby grants to You a patent license.

   4. Redistribution. You may reproduce and distribute copies of the
      Work in any medium.
"""

XZ_FAQ = b"""XZ Utils FAQ
============

Q:  I have many .tar.7z files. Can I convert them to .tar.xz without
    spending hours recompressing the data?

A:  In the "extra" directory, there is a script named 7z2lzma.bash.
"""

MAN_DB_FAQ = b"""Frequently Asked Questions
--------------------------

Why use man-db instead of man?
==============================

Some people now ask what the point is.

  * Security and code quality

    Security matters because man can be installed setuid.

  * Performance

    man-db performs this search at least three times as quickly as man.
"""

MARKDOWN_TABLE = b"""# Dominica

| Indicator | 2021 | 2022 |
|---|---|---|
| Population | 72,412 | 72,737 |
| Median age | 34.9 | 35.1 |
"""

HTML = b"""<html><head><title>Users and Groups</title></head><body>
<h1>Users and Groups</h1>
<h2>Static ids</h2>
<dl><dt>mail</dt><dd><p>Mailboxes in /var/mail are owned by group mail.</p></dd></dl>
<table><tr><th>User</th><th>uid</th></tr><tr><td>root</td><td>0</td></tr></table>
<ul><li>First item of a list.</li></ul>
</body></html>"""

MPL = b"""Mozilla Public License Version 2.0
==================================

1. Definitions
--------------

1.1. "Contributor"
    means each individual or legal entity that creates software.

1.5. "Incompatible With Secondary Licenses"
    means

    (a) that the initial Contributor has attached the notice; or

1.6. "Executable Form"
    means any form of the work other than Source Code Form.

2. License Grants and Conditions
--------------------------------

2.1. Grants

Each Contributor hereby grants You a license.

5. Termination
--------------

5.1. The rights granted under this License will terminate automatically
if You fail to comply with any of its terms.
"""

VALGRIND_FAQ = b"""Valgrind FAQ
~~~~~~~~~~~~

------------------------------------------------------------------------
1. Background
------------------------------------------------------------------------

1.1. How do you pronounce "Valgrind"?
The "Val" as in the word "value".

Don't feel bad: almost everyone gets it wrong at first.
------------------------------------------------------------------------

It's not short for "value grinder".
"""

# A country profile saved as text (the World Factbook's layout, public domain): one record a line, no
# blank lines, the short ones under twelve words with no full stop.
FACTBOOK_RECORDS = b"""url: https://www.cia.gov/the-world-factbook/countries/oman/
Introduction: Background: The inhabitants of the area of present-day Oman have long prospered from \
Indian Ocean trade. In the late 18th century, the sultanate in Muscat signed the first in a series of \
friendship treaties with Britain.
Geography: Elevation - highest point: Jabal Shams 3,004 m
Geography: Elevation - lowest point: Arabian Sea 0 m
People and Society: Population - total: 3,901,992
"""

# A README's commands, settings, addresses and links between its prose.
INSTALL_NOTES = b"""Installing zlib

Build and install with:

    ./configure --prefix=/usr
    make install

Bugs go to the list:

    zlib-devel@example.org

Debugging

Set DEBUG=1 to trace every call.
"""

# (file name, data, the expected (role, text, section) of each sentence, in order)
CASES = [
    (
        "zlib-faq.txt",
        ZLIB_FAQ,
        [
            ("title", "Frequently Asked Questions about zlib", ""),
            ("question", "Is zlib Y2K-compliant?", ""),
            # A paragraph's opening reply is cited with the sentence it opens, never alone.
            ("paragraph", "Yes. zlib doesn't handle dates.", "Is zlib Y2K-compliant?"),
            # Brackets and "etc." do not cut the question in two.
            ("question", "Where's the zlib documentation (man pages, etc.)?", ""),
            ("paragraph", "It's in zlib.h .", "Where's the zlib documentation (man pages, etc.)?"),
        ],
    ),
    (
        "apache.txt",
        APACHE,
        [
            ("title", "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION", ""),
            # A numbered clause's run-in heading is a heading of its own, never merged into the text.
            ("heading", "Grant of Patent License.", ""),
            (
                "list_item",
                "Subject to the terms and conditions of\n      this License, each Contributor hereby "
                "grants to You a patent license.",
                "Grant of Patent License.",
            ),
            ("heading", "Redistribution.", ""),
            (
                "list_item",
                "You may reproduce and distribute copies of the\n      Work in any medium.",
                "Redistribution.",
            ),
        ],
    ),
    (
        "xz-faq.txt",
        XZ_FAQ,
        [
            ("title", "XZ Utils FAQ", ""),
            # A short block that ends by asking is a question as a whole; its sentences, like the
            # answer's, start after the FAQ's "Q:" / "A:" label, so no answer quotes the label.
            ("question", "I have many .tar.7z files.", ""),
            (
                "question",
                "Can I convert them to .tar.xz without\n    spending hours recompressing the data?",
                "",
            ),
            (
                "paragraph",
                'In the "extra" directory, there is a script named 7z2lzma.bash.',
                "I have many .tar.7z files. Can I convert them to .tar.xz without spending hours "
                "recompressing the data?",
            ),
        ],
    ),
    (
        "man-db-faq.md",
        MAN_DB_FAQ,
        [
            ("title", "Frequently Asked Questions", ""),
            ("heading", "Why use man-db instead of man?", ""),
            ("paragraph", "Some people now ask what the point is.", "Why use man-db instead of man?"),
            # A list item's short label heads the paragraphs under it.
            ("heading", "Security and code quality", "Why use man-db instead of man?"),
            (
                "paragraph",
                "Security matters because man can be installed setuid.",
                "Why use man-db instead of man? > Security and code quality",
            ),
            ("heading", "Performance", "Why use man-db instead of man?"),
            (
                "paragraph",
                "man-db performs this search at least three times as quickly as man.",
                "Why use man-db instead of man? > Performance",
            ),
        ],
    ),
    (
        "mpl-2.0.txt",
        MPL,
        [
            ("title", "Mozilla Public License Version 2.0", ""),
            # A numbered title over a rule is a section's heading, not a list item.
            ("heading", "1. Definitions", ""),
            # A clause's outline number is its marker, not a sentence "1.1." of its own ...
            (
                "list_item",
                '"Contributor"\n    means each individual or legal entity that creates software.',
                "1. Definitions",
            ),
            ("heading", '1.5. "Incompatible With Secondary Licenses"\n    means', "1. Definitions"),
            (
                "list_item",
                "that the initial Contributor has attached the notice; or",
                '1. Definitions > 1.5. "Incompatible With Secondary Licenses" means',
            ),
            # The next clause of that depth ends the numbered title's scope.
            (
                "list_item",
                '"Executable Form"\n    means any form of the work other than Source Code Form.',
                "1. Definitions",
            ),
            # ... and a numbered title heads its clause, one level below the section.
            ("heading", "2. License Grants and Conditions", ""),
            ("heading", "2.1. Grants", "2. License Grants and Conditions"),
            (
                "paragraph",
                "Each Contributor hereby grants You a license.",
                "2. License Grants and Conditions > 2.1. Grants",
            ),
            ("heading", "5. Termination", ""),
            (
                "list_item",
                "The rights granted under this License will terminate automatically\n"
                "if You fail to comply with any of its terms.",
                "5. Termination",
            ),
        ],
    ),
    (
        "valgrind-faq.txt",
        VALGRIND_FAQ,
        [
            ("title", "Valgrind FAQ", ""),
            # A title between two full-width rules is a heading ...
            ("heading", "1. Background", ""),
            ("question", 'How do you pronounce "Valgrind"?', "1. Background"),
            (
                "paragraph",
                'The "Val" as in the word "value".',
                '1. Background > How do you pronounce "Valgrind"?',
            ),
            # ... but a sentence over a rule stays a sentence: the rule only separates.
            (
                "paragraph",
                "Don't feel bad: almost everyone gets it wrong at first.",
                '1. Background > How do you pronounce "Valgrind"?',
            ),
            (
                "paragraph",
                'It\'s not short for "value grinder".',
                '1. Background > How do you pronounce "Valgrind"?',
            ),
        ],
    ),
    (
        # Short lines among other lines are records of a list, not headings: each can answer
        # ("What is the highest point in Oman?") and none heads the lines after it.
        "oman-profile.txt",
        FACTBOOK_RECORDS,
        [
            ("title", "url: https://www.cia.gov/the-world-factbook/countries/oman/", ""),
            (
                "paragraph",
                "Introduction: Background: The inhabitants of the area of present-day Oman have long "
                "prospered from Indian Ocean trade.",
                "",
            ),
            (
                "paragraph",
                "In the late 18th century, the sultanate in Muscat signed the first in a series of "
                "friendship treaties with Britain.",
                "",
            ),
            ("paragraph", "Geography: Elevation - highest point: Jabal Shams 3,004 m", ""),
            ("paragraph", "Geography: Elevation - lowest point: Arabian Sea 0 m", ""),
            ("paragraph", "People and Society: Population - total: 3,901,992", ""),
        ],
    ),
    (
        # A short line with the marks of code, a setting or an address is code, not a heading; a
        # short line inside a group of lines ("make install") is no heading either.
        "install-notes.txt",
        INSTALL_NOTES,
        [
            ("title", "Installing zlib", ""),
            ("paragraph", "Build and install with:", ""),
            ("code", "./configure --prefix=/usr", ""),
            ("paragraph", "make install", ""),
            ("paragraph", "Bugs go to the list:", ""),
            ("code", "zlib-devel@example.org", ""),
            ("heading", "Debugging", ""),
            ("paragraph", "Set DEBUG=1 to trace every call.", "Debugging"),
        ],
    ),
    (
        "dominica.md",
        MARKDOWN_TABLE,
        [
            ("title", "Dominica", ""),
            ("table_row", "Indicator: Population | 2021: 72,412 | 2022: 72,737", ""),
            ("table_row", "Indicator: Median age | 2021: 34.9 | 2022: 35.1", ""),
        ],
    ),
    (
        "users.html",
        HTML,
        [
            ("title", "Users and Groups", ""),
            ("heading", "Static ids", ""),
            ("heading", "mail", "Static ids"),
            ("paragraph", "Mailboxes in /var/mail are owned by group mail.", "Static ids > mail"),
            ("table_row", "User: root | uid: 0", "Static ids > mail"),
            ("list_item", "First item of a list.", "Static ids > mail"),
        ],
    ),
]


@pytest.mark.parametrize(("name", "data", "expected"), CASES, ids=[case[0] for case in CASES])
def test_each_sentence_keeps_its_role_and_section(name, data, expected):
    document = parse_bytes(data, name)[0]
    found = [(s.role, s.text, s.section) for s in document.sentences]
    assert found == expected
    for sentence in document.sentences:
        assert document.text[sentence.start : sentence.end] == sentence.text


def test_generated_html_docs_lose_their_permalink_marks_and_copy_buttons():
    # Node.js's API pages and Sphinx's put a "#" or "¶" link in every heading, and a "copy" button
    # after every code sample: neither is the document's text.
    data = b"""<html><body>
<h1>URL</h1>
<h2>URL strings<span><a class="mark" href="#url-strings">#</a></span></h2>
<p>A URL string is a structured string.</p>
<h3>Parsing <a class="headerlink" href="#parsing" title="Permalink">\xc2\xb6</a></h3>
<pre><code>const url = new URL('https://example.org/');</code><button class="copy-button">copy</button></pre>
<p>See <a href="#url-strings">URL strings</a> above.</p>
</body></html>"""
    document = parse_bytes(data, "url.html")[0]
    assert [(s.role, s.text, s.section) for s in document.sentences] == [
        ("title", "URL", ""),
        ("heading", "URL strings", ""),
        ("paragraph", "A URL string is a structured string.", "URL strings"),
        ("heading", "Parsing", "URL strings"),
        ("code", "const url = new URL('https://example.org/');", "URL strings > Parsing"),
        ("paragraph", "See URL strings above.", "URL strings > Parsing"),
    ]


def test_word_documents_keep_heading_styles_and_table_rows():
    data = docx_bytes(
        "The sultanate signed treaties with Britain.",
        heading="History",
        table=[["Year", "Event"], ["1970", "Qaboos takes power"]],
    )
    document = parse_bytes(data, "oman.docx")[0]
    assert [(s.role, s.text) for s in document.sentences] == [
        ("title", "History"),
        ("paragraph", "The sultanate signed treaties with Britain."),
        ("table_row", "Year: 1970 | Event: Qaboos takes power"),
    ]


def test_a_pdf_heading_between_lines_stays_a_heading():
    # A PDF's text layer has no blank lines, so a short line there heads what follows wherever it is.
    data = pdf_bytes(
        [
            "Oman is a sultanate.",
            "History",
            "The sultanate in Muscat signed the first in a series of treaties with Britain.",
        ]
    )
    document = parse_bytes(data, "oman.pdf")[0]
    assert [(s.role, s.text, s.section) for s in document.sentences][1:] == [
        ("heading", "History", ""),
        (
            "paragraph",
            "The sultanate in Muscat signed the first in a series of treaties with Britain.",
            "History",
        ),
    ]


def test_a_pdfs_running_header_and_page_numbers_are_no_sentences_and_head_nothing():
    # Printed around every page: left in, each was a heading, and page 2 sat under "Oman country
    # report" instead of "History".
    data = pdf_bytes(
        ["Oman country report", "History", "The sultanate signed treaties with Britain.", "1"],
        ["Oman country report", "Its first treaty with Britain was signed in 1798.", "2"],
        ["Oman country report", "Economy", "Oil and gas make up most of its exports.", "3"],
    )
    document = parse_bytes(data, "oman.pdf")[0]
    assert document.title == "Oman country report"
    assert [(s.role, s.text, s.section, s.page) for s in document.sentences] == [
        ("title", "Oman country report", "", 1),
        ("heading", "History", "", 1),
        ("paragraph", "The sultanate signed treaties with Britain.", "History", 1),
        ("paragraph", "Its first treaty with Britain was signed in 1798.", "History", 2),
        ("heading", "Economy", "", 3),
        ("paragraph", "Oil and gas make up most of its exports.", "Economy", 3),
    ]


def test_pdf_sentences_know_their_page():
    data = pdf_bytes(
        ["Oman is a sultanate on the Arabian Peninsula."], ["Its capital is Muscat, on the coast."]
    )
    document = parse_bytes(data, "oman.pdf")[0]
    pages = {s.text: s.page for s in document.sentences}
    assert pages["Oman is a sultanate on the Arabian Peninsula."] == 1
    assert pages["Its capital is Muscat, on the coast."] == 2


@pytest.mark.parametrize(
    ("wrapped", "joined"),
    [
        # The joined word is a word: the hyphen only broke the line.
        ("Any application program calls the compres-\n    sion routines of the library here.", "compression"),
        # Not a word when joined: the compound keeps its hyphen, the line break goes.
        (
            "The application-\n    provided routines must be thread-safe in every program.",
            "application-provided",
        ),
    ],
)
def test_words_hyphenated_across_a_line_break_are_rejoined(wrapped, joined):
    document = parse_bytes(wrapped.encode(), "notes.txt")[0]
    assert joined in document.sentences[0].text
    assert "-\n" not in document.text


def test_an_opening_reply_joins_its_sentence_only_while_the_two_stay_citable():
    long_sentence = "The answer " + "runs on " * 185 + "here."
    data = f"Q: Is it so?\n\nYes. {long_sentence}\n\nNo. It is short.\n".encode()
    texts = [s.text for s in parse_bytes(data, "faq.txt")[0].sentences]
    assert "No. It is short." in texts
    assert all(len(text) <= MAX_SENTENCE_CHARS for text in texts)
    assert "Yes." in texts  # a sentence at the limit keeps its reply apart rather than grow past it
