"""BM25Index ranks like rank-bm25's BM25Okapi (the design card's reference)."""

from __future__ import annotations

import importlib
import inspect
import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from qa.pipeline.search.bm25 import BM25Index, tokenize

# Real English prose that every Python install carries: the paragraphs of
# standard-library docstrings (~1,700 passages with a natural Zipfian vocabulary).
STDLIB_MODULES = (
    "argparse asyncio collections csv datetime decimal email.message functools "
    "http.client inspect itertools json logging os pathlib random re shutil sqlite3 "
    "statistics string subprocess tarfile textwrap threading typing unittest "
    "urllib.parse xml.etree.ElementTree zipfile"
).split()


@pytest.fixture(scope="module")
def docstring_corpus() -> list[tuple[str, str]]:
    paragraphs = []
    for module_name in STDLIB_MODULES:
        module = importlib.import_module(module_name)
        for _, obj in sorted(vars(module).items()):
            if inspect.isfunction(obj) or inspect.isclass(obj):
                for paragraph in (inspect.getdoc(obj) or "").split("\n\n"):
                    paragraph = " ".join(paragraph.split())
                    if len(paragraph) > 40:
                        paragraphs.append(paragraph)
    # Docstrings repeat (inherited classes); duplicates would only add ties.
    return [(f"p{i}", text) for i, text in enumerate(dict.fromkeys(paragraphs))]


def sample_queries(corpus: list[tuple[str, str]], n: int, seed: int = 7) -> list[str]:
    """Queries of 2-6 words drawn from random passages, as a user would paraphrase them."""
    rng = random.Random(seed)
    queries = []
    while len(queries) < n:
        words = tokenize(rng.choice(corpus)[1])
        if len(words) >= 2:
            queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 6)))))
    return queries


def assert_same_top_k(index: BM25Index, reference: BM25Okapi, query: str, k: int) -> None:
    expected = reference.get_scores(tokenize(query))
    got = index.search(query, k)
    expected_top = np.sort(expected[expected > 0])[::-1][:k]
    assert [score for _, score in got] == pytest.approx(list(expected_top), rel=1e-9, abs=1e-12)
    position = {key: i for i, key in enumerate(index.keys)}
    for key, score in got:
        assert expected[position[key]] == pytest.approx(score, rel=1e-9, abs=1e-12)
    # Where scores are not tied the ranking must be the very same list.
    by_score = np.lexsort((np.arange(len(expected)), -expected))
    reference_order = [index.keys[i] for i in by_score][: len(expected_top)]
    if len(set(np.round(expected_top, 9))) == len(expected_top):
        assert [key for key, _ in got] == reference_order


def test_top10_matches_rank_bm25_on_real_prose(docstring_corpus):
    index = BM25Index(docstring_corpus)
    reference = BM25Okapi([tokenize(text) for _, text in docstring_corpus])
    queries = sample_queries(docstring_corpus, 200) + [
        "parse command line arguments",
        "open a file and return a stream",
        "return a new deque object",
        "how do I join path components",
    ]
    for query in queries:
        assert_same_top_k(index, reference, query, k=10)


def test_idf_floor_for_terms_in_most_documents_matches_rank_bm25():
    # "report" is in 4 of 5 documents: its raw idf is negative and both
    # implementations must replace it by epsilon * mean idf.
    corpus = [
        ("a", "annual report on oil exports"),
        ("b", "report about fishing quotas"),
        ("c", "report report report on tourism"),
        ("d", "weather report"),
        ("e", "oil prices fell sharply"),
    ]
    index = BM25Index(corpus)
    reference = BM25Okapi([tokenize(text) for _, text in corpus])
    raw_idf = np.log(5 - 4 + 0.5) - np.log(4 + 0.5)
    assert raw_idf < 0
    assert index.idf[index.vocabulary["report"]] == pytest.approx(reference.idf["report"])
    assert index.idf[index.vocabulary["report"]] > 0
    for query in ("report", "oil report", "report report tourism", "fishing"):
        assert_same_top_k(index, reference, query, k=5)


def test_the_passage_about_the_query_ranks_first():
    index = BM25Index(
        [
            ("oman", "Sultan Qaboos enacted political reforms after the 2011 protests in Oman."),
            ("mali", "Mali held presidential elections in 2013 and 2018."),
            ("gas", "Germany could run for weeks on stored gas if Russia cut supplies."),
        ]
    )
    assert index.search("What reforms did Sultan Qaboos enact?", 3)[0][0] == "oman"
    assert [key for key, _ in index.search("presidential elections", 3)] == ["mali"]


def test_tokenisation_is_case_and_punctuation_blind_and_drops_stopwords():
    tokens = tokenize("The U.S.-backed KYIV offensive, in 2022!")
    assert tokens == ["u", "s", "backed", "kyiv", "offensive", "2022"]
    assert tokenize("Über Café naïve") == ["über", "café", "naïve"]


def test_no_shared_word_means_no_result():
    index = BM25Index([("a", "oil exports"), ("b", "gas storage")])
    assert index.search("wheat harvest", 5) == []
    assert index.search("", 5) == []
    assert index.search("the of and", 5) == []  # stopwords only


def test_empty_corpus_and_empty_documents():
    assert BM25Index([]).search("anything", 3) == []
    index = BM25Index([("empty", ""), ("stop", "the and of"), ("real", "oil")])
    assert index.search("oil", 3) == [("real", pytest.approx(index.search("oil", 3)[0][1]))]


def test_equal_scores_keep_insertion_order_and_k_cuts():
    index = BM25Index([(f"d{i}", "identical text about oil") for i in range(6)])
    hits = index.search("oil", 4)
    assert [key for key, _ in hits] == ["d0", "d1", "d2", "d3"]
    assert len({score for _, score in hits}) == 1
    assert index.search("oil", 0) == []
