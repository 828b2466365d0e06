"""The statement-conflict heuristic (qa.pipeline.checks.claims) run over analyst-bench's articles.

    python -m bench.claims [--folder hugginglearners] [--sample 20] [--seed 15]

Every pair of sentences from two different articles that share at least
three content words is checked (no question: the shared words stand in for
it), and the conflicts found are counted by kind; a random sample is printed
with both sentences for judging by hand. Needs only the parsed corpus, no
model and no database.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter, defaultdict
from pathlib import Path

from documents.parsing.benchmarks import iter_analyst_bench_corpus
from qa.pipeline.checks.claims import claim_conflict
from qa.pipeline.core.text import content_words
from qa.pipeline.core.types import SourceSentence

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "analyst-bench"


def sentences_of(folder: str) -> list[tuple[SourceSentence, object]]:
    out = []
    for document in iter_analyst_bench_corpus(DATA):
        if not document.external_id.startswith(folder + "/"):
            continue
        for ordinal, parsed in enumerate(document.sentences):
            sentence = SourceSentence(
                len(out),
                document.external_id,
                document.title,
                ordinal,
                parsed.label or str(ordinal + 1),
                parsed.text,
            )
            out.append((sentence, document.published))
    return out


def scan(folder: str) -> list[tuple]:
    sentences = sentences_of(folder)
    words = [content_words(s.text) for s, _ in sentences]
    postings: dict[str, list[int]] = defaultdict(list)
    for i, own in enumerate(words):
        for word in own:
            postings[word].append(i)
    found = []
    for i, own in enumerate(words):
        shared: Counter[int] = Counter()
        for word in own:
            if len(postings[word]) < 200:  # a word in hundreds of sentences says nothing alone
                shared.update(j for j in postings[word] if j > i)
        for j, count in shared.items():
            a, b = sentences[i][0], sentences[j][0]
            if count < 3 or a.document_id == b.document_id:
                continue
            conflict = claim_conflict(a, b, own & words[j])
            if conflict is not None:
                found.append((conflict, sentences[i][1], sentences[j][1]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", default="hugginglearners")
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    found = scan(args.folder)
    print(f"{len(found)} conflicts among {args.folder}: {dict(Counter(c[0][0] for c in found))}")
    for (kind, a, b, about, left, right), date_a, date_b in random.Random(args.seed).sample(
        found, min(args.sample, len(found))
    ):
        print(f"\n[{kind}] {left!r} vs {right!r} (shared: {', '.join(about[:8])})")
        print(f"  {a.document_id} ({date_a}): {a.text}")
        print(f"  {b.document_id} ({date_b}): {b.text}")


if __name__ == "__main__":
    main()
