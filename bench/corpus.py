"""Benchmark inputs: analyst-bench samples, real sentence vectors, queries, and scaled-up corpora.

Scaling (``scaled_corpus``): copy 0 is the real corpus, its documents in a
seeded random order; copies 1, 2, ... repeat those documents with light
perturbation until the requested number of sentences, the last document cut
short. In a copy every word is kept with probability 0.82, replaced by a word
drawn from the corpus' own word frequencies with probability 0.15, and with
probability 0.03 replaced by a new word (the word plus a copy-specific
suffix), so the vocabulary grows with size as real text does. A copy's
sentence vector is the original's plus isotropic Gaussian noise of norm
``VECTOR_NOISE``, re-normalised: cosine 0.90 to the original and 0.80
between two copies, inside the range of how close a real sentence is to its
nearest neighbour in analyst-bench (measured on 2,000 sentences, exact
duplicates left out: quartiles 0.71 / 0.95 / 0.995; factbook lines are
near-templates). Encoding 1M sentences for real would take about an hour on
2 cores.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.common import BENCH_VAR_DIR, EMBEDDING_CACHE_DIR, EMBEDDING_CACHE_NAMESPACE, REPO

SHARED_DATA = REPO.parent / "shared" / "data"
VECTOR_NOISE = 0.5
KEEP, SWAP = 0.82, 0.15  # the rest (0.03) becomes a new word
_WORD = re.compile(r"[^\W_]+")


def analyst_bench_root() -> Path:
    root = SHARED_DATA / "analyst-bench"
    if not (root / "corpus").is_dir():
        raise SystemExit(f"analyst-bench not found at {root} (../shared/data is absent on this machine)")
    return root


def analyst_bench_sample(every: int) -> Path:
    """A temporary analyst-bench folder holding every ``every``-th corpus file (all when 1).

    Sorted-path sampling keeps the mix of sources (factbook, news, gold) of the whole.
    """
    root = analyst_bench_root()
    if every <= 1:
        return root
    target = Path(tempfile.mkdtemp(prefix="bench-analyst-"))
    files = sorted((root / "corpus").rglob("*.txt"), key=lambda p: p.relative_to(root / "corpus").as_posix())
    for path in files[::every]:
        destination = target / "corpus" / path.relative_to(root / "corpus")
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)
    (target / "questions").mkdir()
    return target


def load_documents(root: Path | None = None) -> list[tuple[str, str, list[str]]]:
    """(external id, title, sentence texts) per document, as ingestion stores the sentences."""
    from documents.parsing import iter_analyst_bench_corpus

    documents = []
    for parsed in iter_analyst_bench_corpus(root or analyst_bench_root()):
        texts = [parsed.text[s.start : s.end] for s in parsed.sentences]
        documents.append((parsed.external_id, parsed.title, [t for t in texts if t.strip()]))
    return documents


def questions(limit: int | None = None) -> list[str]:
    """analyst-bench's 30 questions, then CLAPNQ dev's 200 (out of domain, still real questions)."""
    found = []
    for path in sorted((analyst_bench_root() / "questions").glob("*.jsonl")):
        found += [json.loads(line)["question"] for line in path.read_text().splitlines() if line.strip()]
    for path in sorted((SHARED_DATA / "clapnq-dev").glob("*.jsonl")):
        found += [json.loads(line)["input"] for line in path.read_text().splitlines() if line.strip()]
    return found[:limit] if limit else found


def real_vectors(texts: list[str]) -> np.ndarray:
    """The all-MiniLM-L6-v2 vectors of ``texts``, encoded once and kept in var/bench/cache.

    Vectors already cached by ``qa.pipeline.search.embedding.CachingEmbedder`` under
    the namespace "all-MiniLM-L6-v2" (in var/cache or var/bench/cache, either
    of its file layouts) are reused rather than encoded; those caches are only
    read, since two writers would lose each other's saves.
    """
    known = _cached_vectors()
    keys = [hashlib.sha1(t.encode()).digest() for t in texts]
    missing = list(dict.fromkeys(k for k in keys if k not in known))
    if missing:
        from qa.pipeline.search.embedding import SentenceTransformerEmbedder

        text_of = dict(zip(keys, texts, strict=True))
        model = SentenceTransformerEmbedder()
        for start in range(0, len(missing), 4096):  # saved as it goes: an interrupted run keeps its work
            batch = missing[start : start + 4096]
            known.update(zip(batch, model.encode([text_of[k] for k in batch]), strict=True))
            _save_vectors({k: known[k] for k in dict.fromkeys(keys) if k in known})
    return np.stack([known[k] for k in keys]).astype(np.float32)


def _cache_files() -> list[Path]:
    slug = hashlib.sha256(EMBEDDING_CACHE_NAMESPACE.encode()).hexdigest()[:16]
    return [
        folder / name
        for folder in (EMBEDDING_CACHE_DIR, BENCH_VAR_DIR / "cache")
        for name in (f"embeddings-{slug}", f"embeddings-{slug}.npz")
    ] + [BENCH_VAR_DIR / "cache" / "bench.npz"]


def _cached_vectors() -> dict[bytes, np.ndarray]:
    found: dict[bytes, np.ndarray] = {}
    for path in _cache_files():
        try:
            if path.is_dir() and (path / "keys.npy").exists():
                keys = np.load(path / "keys.npy")
                vectors = np.load(path / "vectors.npy")[: len(keys)]
            elif path.is_file():
                with np.load(path) as stored:
                    keys, vectors = stored["keys"], stored["vectors"]
            else:
                continue
        except (OSError, ValueError, KeyError):
            continue  # a cache being rewritten by its owner: skip it this time
        found.update(zip((bytes(k) for k in keys), vectors, strict=False))
    return found


def _save_vectors(vectors: dict[bytes, np.ndarray]) -> None:
    path = BENCH_VAR_DIR / "cache" / "bench.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    keys = np.frombuffer(b"".join(vectors), dtype=np.uint8).reshape(len(vectors), 20)
    partial = path.with_name("bench.partial.npz")
    np.savez(partial, keys=keys, vectors=np.stack(list(vectors.values())).astype(np.float32))
    partial.replace(path)


@dataclass
class ScaledCorpus:
    size: int
    documents: list[tuple[str, str, list[str]]]  # external id, title, sentence texts
    vectors: np.ndarray | None  # (size, 384) float32, sentences in document order; None for text only
    copies: int  # how many passes over the real corpus it took (1 = real sentences only)


def scaled_corpus(
    size: int, base: list[tuple[str, str, list[str]]], base_vectors: np.ndarray | None, *, seed: int = 0
) -> ScaledCorpus:
    """``size`` sentences: the real corpus first, then perturbed copies (see module docstring).

    The same ``seed`` gives the same texts whether or not vectors are asked for.
    """
    rng, vector_rng = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    offsets = np.cumsum([0] + [len(texts) for _, _, texts in base])
    order = rng.permutation(len(base))
    words = _WORD.findall(" ".join(t for _, _, texts in base for t in texts))
    documents, parts, total, copy = [], [], 0, 0
    while total < size:
        for index in order:
            if total >= size:
                break
            external_id, title, texts = base[index]
            take = min(len(texts), size - total)
            rows = None if base_vectors is None else base_vectors[offsets[index] : offsets[index] + take]
            if copy:
                texts = [_perturb_text(t, rng, copy, words) for t in texts[:take]]
                # A generator of its own keeps texts identical with and without vectors.
                rows = None if rows is None else _perturb_vectors(rows, vector_rng)
                external_id, title = f"{external_id}~copy{copy}", f"{title} ({copy})"
            documents.append((external_id, title, list(texts[:take])))
            if rows is not None:
                parts.append(np.asarray(rows, dtype=np.float32))
            total += take
        copy += 1
    return ScaledCorpus(size, documents, np.concatenate(parts) if parts else None, copy)


def _perturb_text(text: str, rng: np.random.Generator, copy: int, words: list[str]) -> str:
    draws = iter(rng.random(len(text) // 2 + 1).tolist())
    suffix = _suffix(copy)

    def replace(match: re.Match) -> str:
        u = next(draws)
        if u < KEEP:
            return match.group(0)
        if u < KEEP + SWAP:
            return words[int((u - KEEP) / SWAP * len(words))]
        return match.group(0) + suffix

    return _WORD.sub(replace, text)


def _suffix(copy: int) -> str:
    letters = ""
    while True:
        copy, digit = divmod(copy, 26)
        letters += "abcdefghijklmnopqrstuvwxyz"[digit]
        if not copy:
            return "q" + letters


def _perturb_vectors(rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    noise = rng.standard_normal(rows.shape, dtype=np.float32) * (VECTOR_NOISE / np.sqrt(rows.shape[1]))
    moved = rows + noise
    return moved / np.linalg.norm(moved, axis=1, keepdims=True)


def chunk_rows(texts: list[str], vectors: np.ndarray, size: int = 8, overlap: int = 2):
    """(first, last, text, pooled vector) per chunk, as ingestion builds them."""
    from documents.parsing import sentence_windows

    for first, last in sentence_windows(len(texts), size, overlap):
        mean = vectors[first : last + 1].mean(axis=0)
        norm = float(np.linalg.norm(mean))
        yield first, last, " ".join(texts[first : last + 1]), mean / norm if norm else mean
