"""The analyst-bench and CLAPNQ loaders, on small fixtures and on the real data."""

from __future__ import annotations

import datetime
import json
from collections import Counter
from pathlib import Path

import pytest

from documents.parsing import (
    MAX_SENTENCE_CHARS,
    ParseError,
    analyst_bench_gold_ids,
    clapnq_passage_id,
    iter_analyst_bench_corpus,
    iter_clapnq,
)

SHARED_DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"


def shared_data(name: str) -> Path:
    path = SHARED_DATA / name
    if not path.is_dir():
        pytest.skip(
            f"benchmark data not found at {path.resolve()} (../shared/data is absent on this machine)"
        )
    return path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --- analyst-bench, small fixture ----------------------------------------------


@pytest.fixture
def bench_root(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    write(
        corpus / "cia-world-factbook" / "the-world-factbook-by-cia__Korea,_North.txt",
        "url: https://www.cia.gov/the-world-factbook/countries/korea-north/\n"
        "Introduction: Background: The first recorded kingdom dates from approx. 2300 B.C. and grew.\n"
        "Geography: Coastline: 2,495 km\n"
        "Geography: Climate: temperate\n",
    )
    write(
        corpus / "hugginglearners" / "russia-ukraine-conflict-articles__2022-02-24T06_24_27Z.txt",
        "Top story: Kremlin invokes demilitarisation\n\n"
        "Russian forces have attacked Ukraine. Sirens went off.",
    )
    write(corpus / "hugginglearners" / "russia-ukraine-conflict-articles__2022_05_10.txt", "Kyiv held.")
    write(
        corpus / "abisee" / "cnn_dailymail__00eb.txt",
        "By . Associated Press . PUBLISHED: . 21:27 EST, 11 September 2013 . | . UPDATED: . "
        "21:27 EST, 11 September 2013 . Star quality: a judge spared him jail . He wept.",
    )
    gold = {
        "doc_id": "gold/the-world-factbook-by-cia__Oman_history",
        "source_dataset": "the-world-factbook-by-cia",
        "source": "Oman",
        "sentences": [
            {"sid": "S1", "text": "Oman traded. Widely."},
            {"sid": "S2", "text": "It signed treaties."},
        ],
    }
    write(corpus / "gold" / "the-world-factbook-by-cia__Oman_history.txt", json.dumps(gold))
    write(
        tmp_path / "questions" / "dev.jsonl",
        json.dumps({"doc_id": "gold/the-world-factbook-by-cia__Oman_history", "question": "?"}) + "\n",
    )
    return tmp_path


def test_analyst_bench_ids_are_paths_under_corpus_in_sorted_order(bench_root):
    ids = [document.external_id for document in iter_analyst_bench_corpus(bench_root)]
    assert ids == [
        "abisee/cnn_dailymail__00eb",
        "cia-world-factbook/the-world-factbook-by-cia__Korea,_North",
        "gold/the-world-factbook-by-cia__Oman_history",
        "hugginglearners/russia-ukraine-conflict-articles__2022-02-24T06_24_27Z",
        "hugginglearners/russia-ukraine-conflict-articles__2022_05_10",
    ]


def test_factbook_entry_has_url_country_title_and_one_record_per_line(bench_root):
    document = next(d for d in iter_analyst_bench_corpus(bench_root) if d.source == "cia-world-factbook")
    assert document.url == "https://www.cia.gov/the-world-factbook/countries/korea-north/"
    assert document.title == "Korea, North"
    assert "url:" not in document.text
    assert [s.text for s in document.sentences] == [
        "Introduction: Background: The first recorded kingdom dates from approx. 2300 B.C. and grew.",
        "Geography: Coastline: 2,495 km",
        "Geography: Climate: temperate",
    ]


def test_gold_document_keeps_labels_and_boundaries_joined_by_one_space(bench_root):
    document = next(d for d in iter_analyst_bench_corpus(bench_root) if d.source == "gold")
    assert document.text == "Oman traded. Widely. It signed treaties."
    assert [(s.label, s.text, s.start, s.end) for s in document.sentences] == [
        ("S1", "Oman traded. Widely.", 0, 20),
        ("S2", "It signed treaties.", 21, 40),
    ]
    assert document.title == "Oman (history)"


def test_news_articles_get_dates_from_file_names_and_a_title_without_byline(bench_root):
    documents = {d.external_id.split("__")[-1]: d for d in iter_analyst_bench_corpus(bench_root)}
    assert documents["2022-02-24T06_24_27Z"].published == datetime.date(2022, 2, 24)
    assert documents["2022-02-24T06_24_27Z"].title == "Top story: Kremlin invokes demilitarisation"
    assert documents["2022_05_10"].published == datetime.date(2022, 5, 10)
    assert documents["00eb"].title == "Star quality: a judge spared him jail ."
    assert documents["00eb"].source == "abisee"


def test_gold_ids_come_from_the_questions(bench_root):
    assert analyst_bench_gold_ids(bench_root) == ["gold/the-world-factbook-by-cia__Oman_history"]


def test_malformed_question_line_names_file_and_line(bench_root):
    write(bench_root / "questions" / "test.jsonl", '{"doc_id": "x"}\n{"doc_id": \n')
    with pytest.raises(ParseError, match=r"test\.jsonl, line 2"):
        analyst_bench_gold_ids(bench_root)


def test_a_folder_without_corpus_is_refused(tmp_path):
    with pytest.raises(ParseError, match="no corpus/ folder"):
        list(iter_analyst_bench_corpus(tmp_path))


# --- CLAPNQ, small fixture -----------------------------------------------------


def clapnq_line(title: str, text: str, sentences: list[str]) -> str:
    return json.dumps(
        {"id": "1", "input": "q?", "passages": [{"title": title, "text": text, "sentences": sentences}]}
    )


def test_clapnq_keeps_given_sentences_and_dedupes_passages_across_files(tmp_path):
    text = "Gabriel Okara 's poem has 10 stanzas . It is about laughter . "
    line = clapnq_line("Poem", text, ["Gabriel Okara 's poem has 10 stanzas .", "It is about laughter ."])
    first = write(tmp_path / "answerable.jsonl", line + "\n")
    second = write(
        tmp_path / "unanswerable.jsonl", line + "\n" + clapnq_line("Other", "Short one .", []) + "\n"
    )
    documents = list(iter_clapnq([first, second]))
    assert [d.external_id for d in documents] == [
        clapnq_passage_id("Poem", text),
        clapnq_passage_id("Other", "Short one ."),
    ]
    poem = documents[0]
    assert poem.text == text and poem.title == "Poem" and poem.source == "clapnq"
    assert [(s.text, s.start, s.end) for s in poem.sentences] == [
        ("Gabriel Okara 's poem has 10 stanzas .", 0, 38),
        ("It is about laughter .", 39, 61),
    ]
    assert [s.text for s in documents[1].sentences] == ["Short one ."]


def test_clapnq_sentence_missing_from_text_falls_back_to_joined_sentences(tmp_path):
    path = write(
        tmp_path / "a.jsonl", clapnq_line("T", "Something else entirely.", ["First .", "Second ."]) + "\n"
    )
    document = next(iter_clapnq(path))
    assert document.text == "First . Second ."
    assert [document.text[s.start : s.end] for s in document.sentences] == ["First .", "Second ."]


def test_clapnq_malformed_line_names_file_and_line(tmp_path):
    path = write(tmp_path / "dev.jsonl", clapnq_line("T", "Fine .", ["Fine ."]) + "\n{not json\n")
    with pytest.raises(ParseError, match=r"dev\.jsonl, line 2: not valid JSON"):
        list(iter_clapnq(path))


def test_clapnq_passage_without_text_names_file_and_line(tmp_path):
    path = write(tmp_path / "dev.jsonl", json.dumps({"passages": [{"title": "T"}]}) + "\n")
    with pytest.raises(ParseError, match=r"dev\.jsonl, line 1: .*\"text\""):
        list(iter_clapnq(path))


def test_clapnq_passage_id_is_a_readable_stable_slug_and_hash():
    # Stored documents and imported questions meet on this id: it must never change.
    assert clapnq_passage_id("Café: The Story!", "Text .") == "clapnq/cafe-the-story-73fe2e9e"
    assert clapnq_passage_id("Café: The Story!", "Other .") != clapnq_passage_id("Café: The Story!", "Text .")
    assert clapnq_passage_id("", "x").startswith("clapnq/passage-")


# --- the real data ---------------------------------------------------------------


@pytest.fixture(scope="module")
def analyst_bench() -> tuple[Path, list]:
    root = shared_data("analyst-bench")
    return root, list(iter_analyst_bench_corpus(root))


def test_real_analyst_bench_yields_all_787_documents_with_exact_offsets(analyst_bench):
    _, documents = analyst_bench
    assert len(documents) == 787
    assert Counter(d.source for d in documents) == {
        "cia-world-factbook": 257,
        "abisee": 300,
        "hugginglearners": 217,
        "gold": 13,
    }
    assert len({d.external_id for d in documents}) == 787
    for document in documents:
        assert document.sentences, document.external_id
        for sentence in document.sentences:
            assert document.text[sentence.start : sentence.end] == sentence.text
            assert sentence.text == sentence.text.strip() and len(sentence.text) <= MAX_SENTENCE_CHARS


def test_real_gold_documents_keep_labels_s1_to_sn_and_their_exact_sentences(analyst_bench):
    root, documents = analyst_bench
    gold = [d for d in documents if d.source == "gold"]
    assert len(gold) == 13
    for document in gold:
        source = json.loads((root / "corpus" / f"{document.external_id}.txt").read_text(encoding="utf-8"))
        assert [s.label for s in document.sentences] == [
            f"S{i}" for i in range(1, len(document.sentences) + 1)
        ]
        assert [s.text for s in document.sentences] == [s["text"] for s in source["sentences"]]
        assert document.text == " ".join(s["text"] for s in source["sentences"])


def test_real_questions_point_at_gold_documents_and_their_evidence_ids_exist(analyst_bench):
    root, documents = analyst_bench
    by_id = {d.external_id: d for d in documents}
    gold_ids = analyst_bench_gold_ids(root)
    assert len(gold_ids) == 13 and all(doc_id.startswith("gold/") and doc_id in by_id for doc_id in gold_ids)
    for path in sorted((root / "questions").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            question = json.loads(line)
            labels = {s.label for s in by_id[question["doc_id"]].sentences}
            assert set(question["evidence_sentences"]) <= labels


def test_real_factbook_and_news_metadata(analyst_bench):
    _, documents = analyst_bench
    by_id = {d.external_id: d for d in documents}
    oman = by_id["cia-world-factbook/the-world-factbook-by-cia__Oman"]
    assert oman.title == "Oman" and oman.url == "https://www.cia.gov/the-world-factbook/countries/oman/"
    assert "Geography: Coastline: 2,092 km" in {s.text for s in oman.sentences}
    assert all(d.published for d in documents if d.source == "hugginglearners")


@pytest.fixture(scope="module")
def clapnq() -> tuple[list[dict], list]:
    root = shared_data("clapnq-dev")
    paths = sorted(root.glob("*.jsonl"))
    records = [json.loads(line) for path in paths for line in path.read_text(encoding="utf-8").splitlines()]
    return records, list(iter_clapnq(paths))


def test_real_clapnq_gives_one_document_per_distinct_passage_with_its_sentences(clapnq):
    records, documents = clapnq
    passages = {(p["title"], p["text"]): p for r in records for p in r["passages"]}
    assert len(records) == 200 and len(documents) == len(passages) == 199
    for document in documents:
        passage = passages[(document.title, document.text)]
        assert [s.text for s in document.sentences] == passage["sentences"]
        assert all(document.text[s.start : s.end] == s.text for s in document.sentences)


def test_real_clapnq_questions_find_their_passage_and_gold_sentences(clapnq):
    records, documents = clapnq
    by_id = {d.external_id: d for d in documents}
    for record in records:
        passage = record["passages"][0]
        document = by_id[clapnq_passage_id(passage["title"], passage["text"])]
        assert set(record["output"][0]["selected_sentences"]) <= {s.text for s in document.sentences}
