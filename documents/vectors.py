"""Which embedding space a corpus reads, and writing a document's vectors into a space.

A space "in the columns" (the site's model) keeps its vectors in the
Sentence, Chunk and Document ``embedding`` columns; any other in
StoredVector rows. ``None`` stands for the columns everywhere here: a corpus
that was never re-embedded has no space row at all, so nothing changes for it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from documents.models import Chunk, Corpus, Document, EmbeddingSpace, LexicalUnit, Sentence, StoredVector

SAVE_BATCH = 2000


def pool(vectors: np.ndarray) -> np.ndarray:
    """Mean of unit vectors, re-normalised: the chunk/document vector (see README, chunk vectors)."""
    mean = vectors.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else mean


def stored(space: EmbeddingSpace | None) -> EmbeddingSpace | None:
    """``space`` when its vectors live in StoredVector, else None (the columns)."""
    return None if space is None or space.in_columns else space


def current_space(corpus_id: int) -> EmbeddingSpace | None:
    """The corpus's space now, None for the columns. Inside a transaction holding the corpus row's
    lock, it cannot change until commit."""
    space_id = Corpus.objects.filter(pk=corpus_id).values_list("embedding_space_id", flat=True).first()
    if space_id is None:
        return None
    return stored(EmbeddingSpace.objects.filter(pk=space_id).first())


def space_at(corpus_id: int, version: int) -> EmbeddingSpace | None:
    """The space questions reading the corpus at ``version`` search, None for the columns.

    Each re-embedding moves the corpus version as it activates its space, so
    one version has one space: the last activated at or before it.
    """
    space = (
        EmbeddingSpace.objects.filter(
            corpus_id=corpus_id, activated_version__isnull=False, activated_version__lte=version
        )
        .order_by("-activated_version")
        .first()
    )
    return stored(space)


def space_key(space: EmbeddingSpace | None) -> int | None:
    return None if space is None else space.pk


def write_document_vectors(
    space: EmbeddingSpace,
    document_id: int,
    *,
    sentences: Sequence[tuple[int, np.ndarray]],
    chunks: Sequence[tuple[int, np.ndarray]],
    document: np.ndarray,
) -> None:
    """Store one document's vectors in ``space`` (pks with their vectors). Writing them twice is
    harmless: (space, unit, item) is unique and a second write keeps the first."""
    rows = [
        StoredVector(
            space_id=space.pk,
            unit=unit,
            item=item,
            document_id=document_id,
            dimension=space.dimension,
            embedding=np.asarray(vector, dtype=np.float32),
        )
        for unit, items in ((LexicalUnit.SENTENCE, sentences), (LexicalUnit.CHUNK, chunks))
        for item, vector in items
    ]
    rows.append(
        StoredVector(
            space_id=space.pk,
            unit=LexicalUnit.DOCUMENT,
            item=document_id,
            document_id=document_id,
            dimension=space.dimension,
            embedding=np.asarray(document, dtype=np.float32),
        )
    )
    StoredVector.objects.bulk_create(rows, batch_size=SAVE_BATCH, ignore_conflicts=True)


def write_column_vectors(
    document_id: int,
    *,
    sentences: Sequence[tuple[int, np.ndarray]],
    chunks: Sequence[tuple[int, np.ndarray]],
    document: np.ndarray,
) -> None:
    """Fill the site model's columns of one document's rows (a re-embedding back to that model)."""
    Sentence.objects.bulk_update(
        [Sentence(pk=pk, embedding=vector) for pk, vector in sentences], ["embedding"], batch_size=SAVE_BATCH
    )
    Chunk.objects.bulk_update(
        [Chunk(pk=pk, embedding=vector) for pk, vector in chunks], ["embedding"], batch_size=SAVE_BATCH
    )
    Document.objects.filter(pk=document_id).update(embedding=document)
