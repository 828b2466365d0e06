"""Static embeddings: a text is the IDF-weighted mean of its word-piece vectors, no transformer pass.

The word-piece vectors are the input embedding matrix of the bundled
all-MiniLM-L6-v2 (the first layer of the network, before any context), so
nothing is downloaded and encoding costs a table lookup per token: thousands
of passages per second on one core where the transformer manages tens.
The common direction shared by all rows (the vocabulary mean) is removed
first: left in, it dominates every mean and pushes all cosines towards 1.

IDF comes from the corpus being indexed (``fit``): frequent pieces such as
"the" or "##s" then carry little weight, which is what lets a bag of
context-free vectors retrieve at all.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

TokenIds = Callable[[str], Sequence[int]]


class StaticEmbedder:
    """``protocols.Embedder`` from a token-id function and one vector per token id.

    ``idf`` maps a token id to its weight; ids it lacks weigh ``default_weight``
    (1.0 before ``fit``; after it, the weight of a piece no passage contains,
    which is the largest).
    """

    def __init__(
        self,
        token_ids: TokenIds,
        vectors: np.ndarray,
        *,
        idf: dict[int, float] | None = None,
        default_weight: float = 1.0,
        name: str = "static",
    ) -> None:
        matrix = np.asarray(vectors, dtype=np.float32)
        self._token_ids = token_ids
        self._vectors = matrix - matrix.mean(axis=0, keepdims=True)
        self._idf = dict(idf or {})
        self._default_weight = default_weight
        self.name = name

    @property
    def dimension(self) -> int:
        return int(self._vectors.shape[1])

    def fit(self, texts: Sequence[str]) -> StaticEmbedder:
        """A copy weighting each piece by its smoothed IDF over ``texts`` (one text, one document)."""
        document_frequency: Counter[int] = Counter()
        for text in texts:
            document_frequency.update(set(self._token_ids(text)))
        n = len(texts)
        idf = {token: _idf(n, df) for token, df in document_frequency.items()}
        fitted = StaticEmbedder.__new__(StaticEmbedder)
        fitted._token_ids, fitted._vectors, fitted.name = self._token_ids, self._vectors, self.name
        fitted._idf, fitted._default_weight = idf, _idf(n, 0)
        return fitted

    def weight(self, token_id: int) -> float:
        return self._idf.get(token_id, self._default_weight)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        rows = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = [i for i in self._token_ids(text) if 0 <= i < len(self._vectors)]
            if ids:
                weights = np.array([self.weight(i) for i in ids], dtype=np.float32)
                rows[row] = weights @ self._vectors[ids]
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1.0, norms)


def _idf(n_documents: int, document_frequency: int) -> float:
    """BM25's IDF, kept positive: log(1 + (N - df + 0.5) / (df + 0.5))."""
    return math.log(1.0 + (n_documents - document_frequency + 0.5) / (document_frequency + 0.5))


def minilm_static_embedder(model_dir: str | Path | None = None) -> StaticEmbedder:
    """The static embedder over the word-piece embeddings of a BERT-style sentence-transformers folder.

    ``model_dir=None`` means the bundled all-MiniLM-L6-v2. Special tokens are
    left out ([CLS], [SEP]): they occur in every text and say nothing about it.
    """
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    from qa.pipeline.search.embedding import bundled_minilm_path

    folder = Path(model_dir or bundled_minilm_path())
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    weights = load_file(str(folder / "model.safetensors"))
    (matrix,) = [v for k, v in weights.items() if k.endswith("word_embeddings.weight")]

    def token_ids(text: str) -> list[int]:
        return tokenizer.encode(text, add_special_tokens=False).ids

    return StaticEmbedder(token_ids, matrix, name=f"static ({folder.name} word pieces)")
