"""BM25 in PostgreSQL ranks like rank-bm25's BM25Okapi over the units live at the version asked for.

Real ingestion into the real database; the reference is rank-bm25 itself over
the passages as the pipeline defines them (a chunk and a document are their
sentences joined by spaces). Vectors come from the hashing embedder: only the
lexical side is under test.
"""

from __future__ import annotations

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from documents import services
from documents.models import EMBEDDING_DIM, Document, LexicalTotals, Posting, TermStat
from qa.adapters import DjangoCorpusIndex
from qa.pipeline.search.bm25 import tokenize
from qa.pipeline.search.embedding import HashingEmbedder
from tests.qa.pipeline.test_bm25 import STDLIB_MODULES, sample_queries

UNITS = ("sentence", "chunk", "document")


def stdlib_documents(count: int) -> dict[str, str]:
    """One document per standard-library module docstring set: real prose, a Zipfian vocabulary."""
    import importlib
    import inspect

    documents = {}
    for name in STDLIB_MODULES[:count]:
        module = importlib.import_module(name)
        paragraphs = []
        for _, obj in sorted(vars(module).items()):
            if inspect.isfunction(obj) or inspect.isclass(obj):
                doc = " ".join((inspect.getdoc(obj) or "").split())
                if len(doc) > 40:
                    paragraphs.append(doc if doc.endswith(".") else doc + ".")
        documents[name.replace(".", "-")] = "\n\n".join(paragraphs[:25])
    return documents


def ingest(corpus, documents: dict[str, str]) -> None:
    ingest_parsed(
        corpus, [services.parse_upload(filename=f"{n}.txt", data=t.encode())[0] for n, t in documents.items()]
    )


def ingest_parsed(corpus, parsed_documents) -> None:
    embedder = HashingEmbedder(EMBEDDING_DIM)
    for parsed in parsed_documents:
        staged = services.document_stage(corpus=corpus, parsed=parsed, enqueue=False).document
        staged.refresh_from_db()
        services.document_embed(document_id=staged.pk, expected_hash=staged.pending_hash, embedder=embedder)


def assert_ranks_like_rank_bm25(index: DjangoCorpusIndex, unit: str, queries: list[str], k: int = 10) -> None:
    passages = list(index.passages(unit))
    reference = BM25Okapi([tokenize(p.text) for p in passages])
    position = {p.key: i for i, p in enumerate(passages)}
    for query in queries:
        expected = reference.get_scores(tokenize(query))
        # A unit sharing only a term of idf exactly 0 (in half of the units) scores 0: it is
        # returned, after every positive score, where rank-bm25 cannot tell it from a non-match.
        got = [(key, score) for key, score in index.lexical_search(query, unit, k) if score > 0]
        expected_top = np.sort(expected[expected > 0])[::-1][:k]
        assert [score for _, score in got] == pytest.approx(list(expected_top), rel=1e-9), (unit, query)
        for key, score in got:
            assert expected[position[key]] == pytest.approx(score, rel=1e-9), (unit, query, key)
        # Where no two of the top scores tie (the 11th included: a tie at the cut may go
        # either way), the very same list in the same order.
        eleven = np.sort(expected[expected > 0])[::-1][: k + 1]
        if len(set(np.round(eleven, 9))) == len(eleven):
            reference_order = [
                passages[i].key for i in np.argsort(-expected, kind="stable")[: len(expected_top)]
            ]
            assert [key for key, _ in got] == reference_order, (unit, query)


@pytest.fixture
def library(corpus):
    ingest(corpus, stdlib_documents(12))
    return corpus


@pytest.mark.django_db
def test_top10_matches_rank_bm25_at_every_unit(library):
    index = DjangoCorpusIndex(library)
    texts = [(p.key, p.text) for p in index.passages("sentence")]
    queries = sample_queries(texts, 40) + ["parse command line arguments", "return a new object"]
    for unit in UNITS:
        assert_ranks_like_rank_bm25(index, unit, queries)


@pytest.mark.django_db
def test_clapnq_dev_questions_rank_like_rank_bm25_over_its_passages(corpus):
    import json

    from documents.parsing.benchmarks import iter_clapnq
    from tests.conftest import shared_data

    files = sorted(shared_data("clapnq-dev").glob("*.jsonl"))
    ingest_parsed(corpus, iter_clapnq(files))
    questions = [
        json.loads(line)["input"] for path in files for line in path.read_text().splitlines() if line
    ]

    index = DjangoCorpusIndex(corpus)
    assert len(index.passages("document")) > 100 and len(questions) >= 200
    for unit in UNITS:
        assert_ranks_like_rank_bm25(index, unit, questions)


@pytest.mark.django_db
def test_terms_in_most_units_are_floored_like_rank_bm25(corpus):
    # "harbour" is in every document and "report" in four of five: negative raw idf,
    # floored at epsilon * the mean idf of the whole vocabulary.
    ingest(
        corpus,
        {
            f"report-{i}": f"The harbour report number {i} covers {topic}. The harbour report was filed."
            for i, topic in enumerate(["cranes", "dredging", "staff", "revenue", "tides"])
        },
    )
    index = DjangoCorpusIndex(corpus)
    for unit in UNITS:
        assert_ranks_like_rank_bm25(
            index, unit, ["harbour report", "harbour dredging", "report report cranes"]
        )


@pytest.mark.django_db
def test_an_earlier_version_is_ranked_with_its_own_statistics(library):
    before = DjangoCorpusIndex(library)
    queries = ["return the value", "a new object", "parse the header"]
    expected = {unit: [before.lexical_search(q, unit, 10) for q in queries] for unit in UNITS}
    ingest(library, {"extra": "Return the value of a new object. Parse the header of the message. " * 3})

    again = DjangoCorpusIndex(library, version=before.version)
    now = DjangoCorpusIndex(library)

    for unit in UNITS:
        assert [again.lexical_search(q, unit, 10) for q in queries] == expected[unit]
        assert_ranks_like_rank_bm25(now, unit, queries)
    assert any(
        now.passage(key).document_id == "extra" for key, _ in now.lexical_search(queries[0], "document", 3)
    )


@pytest.mark.django_db
def test_deleting_and_replacing_documents_keeps_the_statistics_exact(library):
    services.document_delete(document=Document.objects.get(corpus=library, external_id="argparse"))
    ingest(library, {"csv": "Comma separated values are read by the reader. The writer writes rows."})

    index = DjangoCorpusIndex(library)

    assert "argparse" not in {p.document_id for p in index.passages("document")}
    assert index.lexical_search("comma separated values reader", "document", 1)[0][0] == "document:csv"
    queries = ["parse command line arguments", "the reader reads rows", "return a new object"]
    for unit in UNITS:
        assert_ranks_like_rank_bm25(index, unit, queries)
    # Document frequencies are exactly those of what is live: nothing left behind by the removals.
    live = {p.key: set(tokenize(p.text)) for p in index.passages("sentence")}
    stored = dict(TermStat.objects.filter(corpus=library, unit=2).values_list("term", "df"))
    counted: dict[str, int] = {}
    for terms in live.values():
        for term in terms:
            counted[term] = counted.get(term, 0) + 1
    assert stored == counted


@pytest.mark.django_db
def test_deleting_a_corpus_leaves_no_index_rows_behind(library):
    corpus_id = library.pk
    assert Posting.objects.filter(corpus_id=corpus_id).exists()

    services.corpus_delete(corpus=library)

    assert not Posting.objects.filter(corpus_id=corpus_id).exists()
    assert not TermStat.objects.filter(corpus_id=corpus_id).exists()
    assert not LexicalTotals.objects.filter(corpus_id=corpus_id).exists()
