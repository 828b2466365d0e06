"""Query expansion by pseudo-relevance feedback: words the best passages share, added to the query.

Retrieval runs once, the ``passages`` best passages are read as if relevant,
and the ``terms`` words that most of them contain and the rest of the ranking
rarely does (a document-frequency contrast, Rocchio-like without vectors) are
appended to the question for a second retrieval. Off by default
(``PipelineConfig.expansion`` = 0); bench/mtrag_un.py measures it on and off.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from qa.pipeline.core.text import META_WORDS, STOPWORDS, content_words, stem, words
from qa.pipeline.core.types import ScoredPassage


def feedback_terms(
    question: str, ranked: Sequence[ScoredPassage], *, terms: int = 5, passages: int = 3, background: int = 30
) -> tuple[str, ...]:
    """Up to ``terms`` words (as written in the passages) to add to ``question``."""
    top = ranked[:passages]
    if len(top) < 2:
        return ()
    asked = content_words(question)
    surface: dict[str, Counter] = {}
    in_top: Counter = Counter()
    for hit in top:
        seen = set()
        for word in words(hit.passage.text):
            if word in STOPWORDS or word in META_WORDS or len(word) < 4 or word[0].isdigit():
                continue
            stemmed = stem(word)
            surface.setdefault(stemmed, Counter())[word] += 1
            seen.add(stemmed)
        in_top.update(seen - asked)
    rest = ranked[passages:background]
    in_rest = Counter(s for hit in rest for s in content_words(hit.passage.text))
    scored = {
        term: count / len(top) * math.log((len(rest) + 1) / (in_rest[term] + 0.5))
        for term, count in in_top.items()
        if count >= 2
    }
    best = sorted(scored, key=lambda term: (-scored[term], term))[:terms]
    return tuple(surface[term].most_common(1)[0][0] for term in best if scored[term] > 0)
