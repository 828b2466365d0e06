"""Run another bench with BM25 over Snowball stems instead of words: a measured alternative, not the product.

The product's BM25 terms are the words as written (``qa.pipeline.search.bm25.tokenize``). This
command replaces that function for one run, so the in-memory indexes and the queries of the bench
it runs both see English Snowball stems ("warranties" and "warranty" become one term). The result
and why it was not adopted: docs/experiments.md, "BM25 over stemmed words". PyStemmer (MIT/BSD,
the Snowball project's C stemmers) is not a requirement of the product; install it first:

    .venv/bin/pip install PyStemmer==3.1.0
    .venv/bin/python -m bench.stemmed_bm25 genre --part heldout
    .venv/bin/python -m bench.stemmed_bm25 mtrag_un --split train
    .venv/bin/python -m bench.stemmed_bm25 confidence_suite collect --rows var/stemmed_rows.json
"""

from __future__ import annotations

import functools
import runpy
import sys

from qa.pipeline.search import bm25


def stem_bm25_terms() -> None:
    """Make ``bm25.tokenize`` return Snowball English stems of its tokens, for this process."""
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    words = bm25.tokenize

    @functools.lru_cache(maxsize=1 << 16)
    def stem(token: str) -> str:
        return stemmer.stemWord(token)

    bm25.tokenize = lambda text: [stem(t) for t in words(text)]


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        raise SystemExit("usage: python -m bench.stemmed_bm25 BENCH [its arguments]  (BENCH: e.g. genre)")
    name = sys.argv[1]
    stem_bm25_terms()
    sys.argv = [f"bench.{name}", *sys.argv[2:]]
    runpy.run_module(f"bench.{name}", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
