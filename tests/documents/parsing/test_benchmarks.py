"""The analyst-bench and CLAPNQ loaders, on small fixtures and on the real data."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from documents.parsing import (
    MAX_SENTENCE_CHARS,
    analyst_bench_gold_ids,
    clapnq_passage_id,
    iter_analyst_bench_corpus,
    iter_clapnq,
    parse_bytes,
)
from tests.conftest import shared_data

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


def test_real_gold_files_uploaded_or_ingested_give_the_benchmark_loaders_sentences(analyst_bench):
    # `ingest corpus/gold` and uploads read each file as pre-segmented JSON, like import_benchmark.
    root, documents = analyst_bench
    for document in (d for d in documents if d.source == "gold"):
        path = root / "corpus" / f"{document.external_id}.txt"
        [uploaded] = parse_bytes(path.read_bytes(), path.name, external_id=path.stem)
        assert uploaded.external_id == document.external_id
        assert uploaded.sentences == document.sentences and uploaded.text == document.text


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
