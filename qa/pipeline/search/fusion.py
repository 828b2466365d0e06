"""Score fusion for hybrid retrieval: min-max interpolation and reciprocal rank fusion.

Both take ranked ``(key, score)`` lists, best first, and return ``{key: fused}``
over the union of their keys. Pure arithmetic, so tests check hand-computed
numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

Ranking = Sequence[tuple[str, float]]


def minmax_normalise(ranking: Ranking) -> dict[str, float]:
    """Scores mapped linearly onto [0, 1] over this ranking's own candidates.

    When every candidate has the same score (one candidate, say) they all get
    1.0: they are the best this retriever found, and 0.0 would silently turn
    the retriever off.
    """
    if not ranking:
        return {}
    scores = [score for _, score in ranking]
    low, high = min(scores), max(scores)
    if high == low:
        return {key: 1.0 for key, _ in ranking}
    return {key: (score - low) / (high - low) for key, score in ranking}


def fuse_minmax(lexical: Ranking, dense: Ranking, alpha: float) -> dict[str, float]:
    """``alpha * dense' + (1 - alpha) * lexical'`` with each side min-max normalised.

    ``alpha`` is the weight of the dense retriever (1.0 = dense only). A key one
    retriever did not return scores 0 on that side: it fell below that
    retriever's candidate cut, so it is at most as good as its worst candidate.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must lie in [0, 1], got {alpha}")
    lexical_norm, dense_norm = minmax_normalise(lexical), minmax_normalise(dense)
    keys = list(dict.fromkeys([k for k, _ in lexical] + [k for k, _ in dense]))
    return {key: alpha * dense_norm.get(key, 0.0) + (1 - alpha) * lexical_norm.get(key, 0.0) for key in keys}


def fuse_rrf(rankings: Sequence[Ranking], k: int = 60) -> dict[str, float]:
    """Reciprocal rank fusion (Cormack et al. 2009): sum over rankings of 1 / (k + rank).

    Ranks start at 1. Scores are ignored, so retrievers on different scales
    combine without normalisation; ``k`` damps the weight of the very top ranks.
    """
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, (key, _) in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + rank)
    return fused
