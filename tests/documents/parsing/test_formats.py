"""parse_bytes(): every upload format, and a clear message for every bad file."""

from __future__ import annotations

import datetime
import json

import pytest

from documents.parsing import (
    SUPPORTED_EXTENSIONS,
    EmptyDocument,
    ParsedDocument,
    ParseError,
    UnsupportedFileType,
    parse_bytes,
)

from .files import docx_bytes, pdf_bytes


def only(documents: list[ParsedDocument]) -> ParsedDocument:
    assert len(documents) == 1
    return documents[0]


def texts(document: ParsedDocument) -> list[str]:
    return [sentence.text for sentence in document.sentences]


def assert_offsets_exact(document: ParsedDocument) -> None:
    for sentence in document.sentences:
        assert document.text[sentence.start : sentence.end] == sentence.text


# --- formats -----------------------------------------------------------------


def test_plain_text_is_segmented_with_id_title_and_source_from_the_file():
    data = b"Oman briefing\n\nThe sultanate signed treaties with Britain. It never became a colony.\n"
    document = only(parse_bytes(data, "uploads/oman-briefing.txt"))
    assert document.external_id == "oman-briefing"
    assert document.title == "Oman briefing"
    assert document.source == "oman-briefing.txt"
    assert texts(document) == [
        "Oman briefing",
        "The sultanate signed treaties with Britain.",
        "It never became a colony.",
    ]
    assert_offsets_exact(document)


def test_external_id_argument_replaces_the_file_name():
    assert only(parse_bytes(b"Hello there.", "a.txt", external_id="case-17/a")).external_id == "case-17/a"


def test_windows_line_endings_and_byte_order_mark_do_not_leak_into_the_text():
    document = only(parse_bytes(b"\xef\xbb\xbfFirst line.\r\nSecond line.\r\n", "notes.txt"))
    assert "\r" not in document.text and not document.text.startswith("\ufeff")
    assert document.title == "First line."


def test_markdown_heading_becomes_title_without_hashes():
    document = only(parse_bytes(b"# Field report\n\nTroops moved north. Supplies ran low.", "report.md"))
    assert document.title == "Field report"
    assert texts(document)[1:] == ["Troops moved north.", "Supplies ran low."]


def test_a_long_first_line_gives_a_shortened_title():
    line = "word " * 60
    assert len(only(parse_bytes(line.encode(), "long.txt")).title) <= 121


def test_html_keeps_visible_text_and_block_structure_only():
    html = b"""<!DOCTYPE html><html><head><title>Oman  brief</title>
    <style>p { color: red }</style><script>var hidden = "SCRIPT TEXT";</script></head>
    <body><nav><a href="/">Home</a></nav><h1>Oman</h1>
    <p>The sultanate signed
    treaties with Britain. It never became a colony.</p><!-- editor note -->
    <noscript>Enable JavaScript</noscript><template><p>TEMPLATE TEXT</p></template>
    <h2>Economy</h2><ul><li>Oil exports</li><li>Fishing</li></ul></body></html>"""
    document = only(parse_bytes(html, "oman.html"))
    assert document.title == "Oman brief"
    assert texts(document) == [
        "Oman",
        "The sultanate signed treaties with Britain.",
        "It never became a colony.",
        "Economy",
        "Oil exports",
        "Fishing",
    ]
    for hidden in ("SCRIPT TEXT", "color", "Enable JavaScript", "TEMPLATE TEXT", "editor note", "Home"):
        assert hidden not in document.text
    assert_offsets_exact(document)


def test_html_without_title_uses_the_first_heading():
    document = only(parse_bytes(b"<body><h1>Weekly summary</h1><p>All quiet.</p></body>", "summary.htm"))
    assert document.title == "Weekly summary"


def test_html_in_a_declared_legacy_encoding_is_decoded():
    html = '<meta charset="windows-1252"><p>Café owners protested.</p>'.encode("cp1252")
    assert texts(only(parse_bytes(html, "cafe.html"))) == ["Café owners protested."]


def test_pdf_text_layer_is_read_page_by_page_and_wrapped_lines_rejoined():
    data = pdf_bytes(
        [
            "Introduction",
            "The U.S. Army under Gen. Smith met Dr. Jones on Jan. 1 and the talks went on",
            "for hours. Growth was 3.5 percent.",
        ],
        ["Second page text here."],
        title="Quarterly report",
    )
    document = only(parse_bytes(data, "q3.pdf"))
    assert document.title == "Quarterly report"
    assert [" ".join(text.split()) for text in texts(document)] == [
        "Introduction",
        "The U.S. Army under Gen. Smith met Dr. Jones on Jan. 1 and the talks went on for hours.",
        "Growth was 3.5 percent.",
        "Second page text here.",
    ]
    assert_offsets_exact(document)


def test_pdf_without_a_title_uses_its_first_line():
    # reportlab, like many producers, writes "untitled" when no title was set.
    document = only(parse_bytes(pdf_bytes(["Situation report 12", "All quiet."]), "sitrep.pdf"))
    assert document.title == "Situation report 12"


def test_docx_paragraphs_headings_and_tables_in_document_order():
    data = docx_bytes(
        "The sultanate signed treaties with Britain. It never became a colony.",
        heading="History",
        table=[["Year", "Event"], ["1970", "Qaboos takes power"]],
    )
    document = only(parse_bytes(data, "oman.docx"))
    assert document.title == "History"
    assert texts(document) == [
        "History",
        "The sultanate signed treaties with Britain.",
        "It never became a colony.",
        # A table row is cited whole, with its header row's cells beside its own.
        "Year: 1970 | Event: Qaboos takes power",
    ]
    assert [s.role for s in document.sentences] == ["title", "paragraph", "paragraph", "table_row"]
    assert_offsets_exact(document)


def test_json_document_keeps_its_own_id_title_labels_and_boundaries():
    record = {
        "doc_id": "brief-7",
        "title": "Oman brief",
        "url": "https://example.org/oman",
        "published": "2022-07-21T10:00:00Z",
        "sentences": [
            {"sid": "S1", "text": "Oman signed treaties. With Britain."},
            {"sid": "S2", "text": "It was never a colony."},
        ],
    }
    document = only(parse_bytes(json.dumps(record).encode(), "brief.json"))
    assert (document.external_id, document.title, document.url) == (
        "brief-7",
        "Oman brief",
        "https://example.org/oman",
    )
    assert document.published == datetime.date(2022, 7, 21)
    # The author's boundary is kept even where a splitter would cut.
    assert [(s.label, s.text) for s in document.sentences] == [
        ("S1", "Oman signed treaties. With Britain."),
        ("S2", "It was never a colony."),
    ]
    assert document.text == "Oman signed treaties. With Britain. It was never a colony."
    assert_offsets_exact(document)


def test_json_list_of_documents_with_plain_string_sentences():
    records = [{"sentences": ["First doc."]}, {"id": "named", "sentences": ["Second doc.", "More."]}]
    documents = parse_bytes(json.dumps(records).encode(), "batch.json")
    assert [d.external_id for d in documents] == ["batch-1", "named"]
    assert [s.label for s in documents[1].sentences] == [None, None]


def test_json_document_with_only_text_is_segmented():
    document = only(parse_bytes(b'{"text": "Dr. Ng arrived. She left."}', "note.json"))
    assert texts(document) == ["Dr. Ng arrived.", "She left."]


def test_jsonl_gives_one_document_per_line():
    lines = [{"doc_id": "a", "sentences": ["Alpha."]}, {"doc_id": "b", "sentences": ["Beta."]}]
    data = ("\n".join(json.dumps(line) for line in lines) + "\n\n").encode()
    assert [d.external_id for d in parse_bytes(data, "docs.jsonl")] == ["a", "b"]


GOLD_LIKE = {
    "doc_id": "gold/port-report",
    "source_dataset": "cnn_dailymail",
    "sentences": [
        {"sid": "S1", "text": "The port grew. By 6 percent."},
        {"sid": "S2", "text": "Staff: 1,850."},
    ],
}


@pytest.mark.parametrize("name", ["port-report.txt", "port-report.md"])
def test_presegmented_json_in_a_text_file_is_recognised_by_its_content(name):
    # analyst-bench's gold files are JSON named .txt: their S1..Sn, not "{" and '"doc_id": ...'.
    document = only(parse_bytes(json.dumps(GOLD_LIKE, indent=2).encode(), name, external_id="port-report"))
    assert document.external_id == "gold/port-report"
    assert [(s.label, s.text) for s in document.sentences] == [
        ("S1", "The port grew. By 6 percent."),
        ("S2", "Staff: 1,850."),
    ]


def test_a_text_file_that_only_looks_like_json_stays_text():
    document = only(parse_bytes(b'{"note": "not a document"} was typed first. Then a sentence.', "odd.txt"))
    assert texts(document)[-1] == "Then a sentence."
    assert all(s.label is None for s in document.sentences)


# --- bad input ---------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["notes.txt", "page.html", "scan.pdf", "memo.docx", "doc.json", "docs.jsonl"]
)
def test_empty_file_is_refused_as_empty(name):
    with pytest.raises(EmptyDocument, match=name):
        parse_bytes(b"", name)


def test_whitespace_only_text_is_empty():
    with pytest.raises(EmptyDocument, match="blank.md"):
        parse_bytes(b"  \n\n\t ", "blank.md")


def test_html_without_visible_text_is_empty():
    with pytest.raises(EmptyDocument, match="shell.html"):
        parse_bytes(
            b"<html><head><title>App</title><script>run()</script></head><body></body></html>", "shell.html"
        )


@pytest.mark.parametrize("name, shown", [("sheet.xlsx", "(.xlsx)"), ("README", "(no extension)")])
def test_unsupported_file_type_names_the_file_and_the_accepted_types(name, shown):
    with pytest.raises(UnsupportedFileType) as raised:
        parse_bytes(b"data", name)
    assert name in str(raised.value) and f"unsupported file type {shown}" in str(raised.value)
    assert all(extension in str(raised.value) for extension in SUPPORTED_EXTENSIONS)


def test_extension_is_matched_case_insensitively():
    assert only(parse_bytes(b"Shouting file name.", "NOTES.TXT")).external_id == "NOTES"


@pytest.mark.parametrize("data", [b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", bytes(range(1, 32)) * 40])
def test_binary_garbage_named_txt_is_refused_as_binary(data):
    with pytest.raises(ParseError, match="photo.txt looks like a binary file"):
        parse_bytes(data, "photo.txt")


def test_invalid_utf8_names_the_byte_offset():
    data = "Café".encode() + b" and caf\xe9 again."
    with pytest.raises(ParseError, match=r"latin\.txt is not valid UTF-8: byte 0xe9 at byte offset 13"):
        parse_bytes(data, "latin.txt")


def test_utf16_text_is_refused_with_a_hint_not_called_binary():
    with pytest.raises(ParseError, match="UTF-16"):
        parse_bytes("Hello there.".encode("utf-16"), "notepad.txt")


def test_malformed_jsonl_names_the_file_and_line():
    data = b'{"doc_id": "a", "sentences": ["Fine."]}\n\n{"doc_id": "b", "sentences": [\n'
    with pytest.raises(ParseError, match=r"docs\.jsonl, line 3: not valid JSON"):
        parse_bytes(data, "docs.jsonl")


def test_malformed_json_names_the_file_and_line():
    with pytest.raises(ParseError, match=r"doc\.json is not valid JSON: .* at line 2"):
        parse_bytes(b'{"sentences":\n ["a", }', "doc.json")


@pytest.mark.parametrize(
    "record, complaint",
    [
        ([1, 2], "expected a JSON object"),
        ({"title": "No body"}, '"sentences" list'),
        ({"sentences": "one long string"}, '"sentences" must be a list'),
        ({"sentences": [{"sid": "S1"}]}, "sentence 1 must be a string or an object"),
        ({"sentences": ["   "]}, "no sentences with text"),
        ({"sentences": ["Ok."], "published": "last Tuesday"}, "not a date"),
    ],
)
def test_json_that_is_not_a_document_says_what_is_wrong(record, complaint):
    data = json.dumps(record).encode() if not isinstance(record, list) else b"[1, 2]\n"
    name = "docs.jsonl" if isinstance(record, list) else "doc.json"
    with pytest.raises(ParseError, match=complaint) as raised:
        parse_bytes(data, name)
    assert name in str(raised.value)


def test_jsonl_repeating_an_id_is_refused_with_both_lines():
    data = b'{"id": "a", "sentences": ["One."]}\n{"id": "a", "sentences": ["Two."]}\n'
    with pytest.raises(ParseError, match=r"line 2: the id 'a' is already used by docs\.jsonl, line 1"):
        parse_bytes(data, "docs.jsonl")


def test_pdf_without_text_layer_says_so():
    with pytest.raises(ParseError, match="scan.pdf has no text layer") as raised:
        parse_bytes(pdf_bytes([]), "scan.pdf")
    assert "OCR" in str(raised.value)


@pytest.mark.parametrize(
    "data", [b"%PDF-1.4\ngarbage\n%%EOF", b"just some words", pdf_bytes(["Real text."])[:200]]
)
def test_corrupt_pdf_is_refused_as_unreadable(data):
    with pytest.raises(ParseError, match="broken.pdf is not a readable PDF"):
        parse_bytes(data, "broken.pdf")


@pytest.mark.parametrize("data", [b"PK\x03\x04garbage", b"plain words", docx_bytes("Real text.")[:300]])
def test_corrupt_docx_is_refused_as_unreadable(data):
    with pytest.raises(ParseError, match=r"broken\.docx is not a readable Word document"):
        parse_bytes(data, "broken.docx")


def test_every_parse_error_is_a_value_error_for_callers_that_do_not_care_which():
    assert issubclass(UnsupportedFileType, ParseError) and issubclass(EmptyDocument, ParseError)
    assert issubclass(ParseError, ValueError)
