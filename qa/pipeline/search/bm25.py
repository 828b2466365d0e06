"""Okapi BM25 over (key, text) pairs, scored with sparse numpy arithmetic.

The design card names rank-bm25's ``BM25Okapi``; this module reproduces its
scores exactly (k1=1.5, b=0.75, idf = ln((N - n + 0.5) / (n + 0.5)), and a
term found in more than half of the documents gets the floor
``epsilon * mean idf`` instead of a negative idf) and ``tests/qa/pipeline/
test_bm25.py`` checks that against rank-bm25 itself. rank-bm25 scores every
document in Python for every query term, which takes about a second per query
on 100k sentences; here each document's weight per term is precomputed once,
so a query touches only the posting lists of its terms (milliseconds).

bm25s would be as fast, but none of its idf variants floors idf like rank-bm25
does, so it ranks frequent-term queries differently from the design card.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

# Small on purpose (STOPWORDS, not the longer CONTENT_STOPWORDS): BM25's idf already discounts
# frequent words; the list only removes function words that would otherwise match every passage
# weakly and make "no lexical evidence" impossible to tell from "weak evidence".
from qa.pipeline.core.lexicon import STOPWORDS

_TOKEN = re.compile(r"[^\W_]+")  # runs of letters or digits, any script

# rank-bm25's BM25Okapi defaults; the PostgreSQL index (documents/lexical.py) uses the same.
K1, B, EPSILON = 1.5, 0.75, 0.25


def tokenize(text: str) -> list[str]:
    """Lowercased alphanumeric tokens without stopwords; used for index and query alike."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


def raw_idf(df: np.ndarray, n_docs: int) -> np.ndarray:
    """BM25Okapi's idf before the floor: negative for a term in more than half of the units."""
    return np.log(n_docs - df + 0.5) - np.log(df + 0.5)


class BM25Index:
    """An immutable BM25 index; build once, query many times."""

    def __init__(
        self,
        items: Iterable[tuple[str, str]],
        *,
        k1: float = K1,
        b: float = B,
        epsilon: float = EPSILON,
    ) -> None:
        self.k1, self.b, self.epsilon = k1, b, epsilon
        keys: list[str] = []
        vocabulary: dict[str, int] = {}
        term_ids: list[int] = []
        doc_lengths: list[int] = []
        for key, text in items:
            tokens = tokenize(text)
            keys.append(key)
            doc_lengths.append(len(tokens))
            term_ids.extend(vocabulary.setdefault(t, len(vocabulary)) for t in tokens)
        self.keys: tuple[str, ...] = tuple(keys)
        self.vocabulary = vocabulary
        n_docs = len(keys)
        lengths = np.asarray(doc_lengths, dtype=np.int64)
        doc_of_token = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
        terms = np.asarray(term_ids, dtype=np.int64)

        # Term-major postings: one sort of (term, doc) pairs gives, per term, its
        # documents in ascending order with their term frequencies.
        pair = terms * max(n_docs, 1) + doc_of_token
        unique_pairs, tf = np.unique(pair, return_counts=True)
        post_terms = unique_pairs // max(n_docs, 1)
        self._post_docs = (unique_pairs % max(n_docs, 1)).astype(np.int32)
        df = np.bincount(post_terms, minlength=len(vocabulary))
        self._indptr = np.concatenate(([0], np.cumsum(df)))

        self.idf = self._idf(df, n_docs)
        avgdl = lengths.mean() if n_docs else 0.0
        norm = k1 * (1 - b + b * lengths / avgdl) if avgdl > 0 else np.full(n_docs, k1)
        self._post_weights = (self.idf[post_terms] * tf * (k1 + 1) / (tf + norm[self._post_docs])).astype(
            np.float64
        )

    def _idf(self, df: np.ndarray, n_docs: int) -> np.ndarray:
        if len(df) == 0:
            return np.zeros(0)
        idf = raw_idf(df, n_docs)
        # rank-bm25 averages the raw idf (negatives included) before flooring,
        # and floors only strictly negative values.
        floor = self.epsilon * float(idf.mean())
        return np.where(idf < 0, floor, idf)

    def __len__(self) -> int:
        return len(self.keys)

    def scores(self, query: str) -> np.ndarray:
        """Score of every document, in index order (zeros where no query term occurs)."""
        scores = np.zeros(len(self.keys))
        docs, weights = self._postings(query)
        if len(docs):
            scores += np.bincount(docs, weights=weights, minlength=len(self.keys))
        return scores

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """The k best (key, score), best first; only documents sharing a term with the query.

        Equal scores keep index order, so results are deterministic.
        """
        docs, weights = self._postings(query)
        if k <= 0 or not len(docs):
            return []
        touched, inverse = np.unique(docs, return_inverse=True)
        summed = np.bincount(inverse, weights=weights)
        if len(touched) > k:
            # argpartition is O(n); ties at the cut are then settled by index.
            cut = np.partition(summed, len(summed) - k)[len(summed) - k]
            keep = summed >= cut
            touched, summed = touched[keep], summed[keep]
        order = np.lexsort((touched, -summed))[:k]
        return [(self.keys[touched[i]], float(summed[i])) for i in order]

    def _postings(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        # A repeated query term counts once per repetition, as in rank-bm25.
        spans = [
            (self._indptr[t], self._indptr[t + 1])
            for t in (self.vocabulary.get(tok) for tok in tokenize(query))
            if t is not None
        ]
        if not spans:
            return np.zeros(0, dtype=np.int32), np.zeros(0)
        docs = np.concatenate([self._post_docs[s:e] for s, e in spans])
        weights = np.concatenate([self._post_weights[s:e] for s, e in spans])
        return docs, weights
