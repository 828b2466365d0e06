"""A corpus at a glance: how long its passages are, and how its sentences spread in embedding space.

The map is a PCA projection (the two directions of largest variance) of an even
sample of sentence vectors: instant and deterministic, unlike t-SNE or UMAP, whose
layouts need tuning and seconds per page. Clusters there mean topics the encoder
separates; a document far from the rest is one retrieval will rarely confuse.
"""

from __future__ import annotations

import numpy as np
from django.db.models.expressions import RawSQL

from documents.models import Chunk, Document, LexicalUnit, Sentence, StoredVector
from documents.vectors import current_space
from ui.charts import ScatterPoint, bins_of, histogram, scatter


def _words(model) -> RawSQL:
    """Words in the row's text, counted by PostgreSQL (the texts themselves never leave it)."""
    column = f'"{model._meta.db_table}"."text"'
    return RawSQL(f"array_length(regexp_split_to_array(btrim({column}), '\\s+'), 1)", [])


MAP_SAMPLE = 1500


def _ready(model, corpus):
    return model.objects.filter(document__corpus=corpus, document__status=Document.Status.READY)


def length_charts(corpus) -> list[dict]:
    """Word-count histograms of sentences and chunks, with their medians."""
    charts = []
    for name, model in (("sentences", Sentence), ("chunks", Chunk)):
        lengths = [
            n or 0
            for n in _ready(model, corpus).annotate(words=_words(model)).values_list("words", flat=True)
        ]
        if not lengths:
            continue
        charts.append(
            {
                "unit": name,
                "count": len(lengths),
                "median": float(np.median(lengths)),
                "p95": float(np.percentile(lengths, 95)),
                "svg": histogram(bins_of(lengths), title=f"Words per {name[:-1]}", unit="words"),
            }
        )
    return charts


def embedding_map(corpus, sample: int = MAP_SAMPLE) -> dict | None:
    ids = list(_ready(Sentence, corpus).order_by("pk").values_list("pk", flat=True))
    if len(ids) < 3:
        return None
    step = max(1, len(ids) // sample)
    rows = list(
        Sentence.objects.filter(pk__in=ids[::step][:sample])
        .select_related("document")
        .values_list("pk", "document__title", "text")
    )
    found = _sentence_vectors(corpus, [row[0] for row in rows])
    # A document replaced since the ids were read has new sentences: its old ones are left out.
    rows = [row for row in rows if found.get(row[0]) is not None]
    if len(rows) < 3:
        return None
    vectors = np.asarray([np.asarray(found[row[0]], dtype=np.float32) for row in rows])
    centred = vectors - vectors.mean(axis=0)
    _, singular, directions = np.linalg.svd(centred, full_matrices=False)
    projected = centred @ directions[:2].T
    explained = float((singular[:2] ** 2).sum() / (singular**2).sum())
    points = [
        ScatterPoint(float(x), float(y), title or "untitled", text[:80])
        for (x, y), (_, title, text) in zip(projected, rows, strict=True)
    ]
    return {
        "points": len(points),
        "of": len(ids),
        "explained": explained,
        "svg": scatter(points, title="Sentence embeddings, PCA to 2-D, coloured by document"),
    }


def _sentence_vectors(corpus, sentence_ids: list[int]) -> dict:
    """The sentences' vectors in the corpus's current embedding model (the columns or StoredVector)."""
    space = current_space(corpus.pk)
    if space is None:
        found = dict(Sentence.objects.filter(pk__in=sentence_ids).values_list("pk", "embedding"))
    else:
        found = dict(
            StoredVector.objects.filter(
                space=space, unit=LexicalUnit.SENTENCE, item__in=sentence_ids
            ).values_list("item", "embedding")
        )
    return found
