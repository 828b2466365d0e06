"""The shipped span reader on CLAPNQ-dev through the ``default`` pipeline: does the highlighted span
hold the gold answer's key words, and what does reading spans cost per question?

Each CLAPNQ-dev question runs twice over the in-memory index (as bench/answer_quality.py builds it),
in alternating order so both runs see the same machine load: with the shipped span reader (what a
site without QA_SPAN_READER_MODEL now runs) and without it (today's). The answers must be the same
(the span decides nothing): the bench counts any difference.

The goal check, on the answerable questions the pipeline answers (not refused):
- the gold answer's key words: the reference answer's content words (lower case, letters and
  digits, not in the lexicon's CONTENT_STOPWORDS) that are not in the question, so words the span
  could copy from the question count for nothing;
- the highlighted span: the highest-scoring span among the answer's sentences (the card marks one
  per sentence; this is the one a reader's eye goes to first); no span counts as a miss;
- a hit: the span holds at least one gold key word, and at least half of the span's own key words
  (its content words not in the question) are gold key words, so a long span that sweeps in half a
  sentence does not pass on one shared word.
Reported beside it: the loose share (at least one gold key word) and the share with any span.

    nice .venv/bin/python bench/span_reader_goal.py --json bench/results/span_reader_clapnq.json
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.answer_quality import clapnq_cases  # noqa: E402
from bench.retrieval_quality import CACHE, DATA, MODEL, MemoEmbedder, analyst_bench, build, clapnq  # noqa: E402
from qa.pipeline.checks.spans import spans_by_sentence  # noqa: E402
from qa.pipeline.config.presets import get_preset  # noqa: E402
from qa.pipeline.core.lexicon import CONTENT_STOPWORDS  # noqa: E402
from qa.pipeline.flow.factory import ModelClients, build_pipeline  # noqa: E402
from qa.pipeline.flow.runner import answer_question  # noqa: E402
from qa.pipeline.reading.reader import SpanReader  # noqa: E402
from qa.pipeline.search.embedding import CachingEmbedder, SentenceTransformerEmbedder  # noqa: E402
from review.evaluation.reference import load_gold_cases  # noqa: E402

_WORD = re.compile(r"[a-z0-9]+")


def key_words(text: str, question: str = "") -> set[str]:
    asked = set(_WORD.findall(question.lower()))
    return {w for w in _WORD.findall(text.lower()) if w not in CONTENT_STOPWORDS and w not in asked}


def span_hit(span_text: str, gold: str, question: str) -> tuple[bool, bool]:
    """(strict hit, loose hit) as the module docstring defines them."""
    gold_words = key_words(gold, question)
    own = key_words(span_text, question)
    shared = own & gold_words
    return bool(shared) and len(shared) >= 0.5 * len(own), bool(shared)


class TimedSpanReader:
    """A span reader, timing each call (the verification stage reads every answer sentence)."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.guesses, self.seconds = inner, inner.name, inner.guesses, 0.0

    def best_spans(self, question, contexts):
        started = time.perf_counter()
        try:
            return self.inner.best_spans(question, contexts)
        finally:
            self.seconds += time.perf_counter() - started


def suite_set(name: str, corpus_embedder):
    """The set's cases and the in-memory index of its corpus."""
    if name == "analyst":
        documents, _ = analyst_bench()
        cases = load_gold_cases("train", data_dir=DATA)
    else:
        documents, _ = clapnq()
        cases, _ = clapnq_cases()
    index, _ = build(documents, corpus_embedder)
    return cases, index


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", help="write the results here")
    parser.add_argument(
        "--set", choices=("clapnq", "analyst"), default="clapnq", help="CLAPNQ-dev, or analyst-bench train"
    )
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--show", type=int, default=0, help="print this many answered cases")
    parser.add_argument(
        "--judged",
        action="store_true",
        help="mark only spans over the reader's no-answer threshold (not the shipped guessing mode)",
    )
    parser.add_argument("--weights", help="a span reader file other than the shipped one")
    args = parser.parse_args()
    config = get_preset("default")
    corpus_embedder = CachingEmbedder(SentenceTransformerEmbedder(), CACHE, MODEL)
    embedder = MemoEmbedder(corpus_embedder)
    cases, index = suite_set(args.set, corpus_embedder)
    if args.limit:
        cases = cases[: args.limit]
    timed = TimedSpanReader(SpanReader(args.weights, guesses=not args.judged))
    without = build_pipeline(config, index=index, clients=ModelClients(embedder=embedder))
    with_spans = build_pipeline(
        config, index=index, clients=ModelClients(embedder=embedder, span_reader=timed)
    )
    answer_question(cases[0].question, pipeline=with_spans)  # load the reader outside the timings
    seconds = {"with": [], "without": []}
    span_seconds, changed, rows = [], 0, []
    for number, case in enumerate(cases):
        order = ("with", "without") if number % 2 == 0 else ("without", "with")
        runs = {}
        for which in order:
            pipeline = with_spans if which == "with" else without
            before = timed.seconds
            started = time.perf_counter()
            runs[which] = answer_question(case.question, pipeline=pipeline)
            seconds[which].append(time.perf_counter() - started)
            if which == "with":
                span_seconds.append(timed.seconds - before)
        answer, plain = runs["with"].answer, runs["without"].answer
        if answer is None or plain is None:
            continue
        if (answer.refused, [s.text for s in answer.sentences]) != (
            plain.refused,
            [s.text for s in plain.sentences],
        ):
            changed += 1
        if not case.answerable or answer.refused:
            continue
        spans = spans_by_sentence(runs["with"])
        shown = [spans[s.text] for s in answer.sentences if s.text in spans]
        best = max(shown, key=lambda span: span.score, default=None)
        strict, loose = span_hit(best.text, case.reference_answer, case.question) if best else (False, False)
        rows.append(
            {
                "case_id": case.case_id,
                "question": case.question,
                "span": best.text if best else None,
                "score": best.score if best else None,
                "gold": case.reference_answer,
                "hit": strict,
                "loose_hit": loose,
            }
        )
    answered = len(rows)
    result = {
        "command": "nice .venv/bin/python " + " ".join(sys.argv),
        "data": "analyst-bench train"
        if args.set == "analyst"
        else "CLAPNQ-dev (the span deltas never "
        "saw it; the passage reader under them did, for answerability)",
        "mode": "judged (spans over the no-answer threshold)" if args.judged else "guesses (as shipped)",
        "preset": "default",
        "questions": len(cases),
        "answerable_answered": answered,
        "with_span": sum(r["span"] is not None for r in rows),
        "hit_share": round(sum(r["hit"] for r in rows) / max(answered, 1), 4),
        "loose_hit_share": round(sum(r["loose_hit"] for r in rows) / max(answered, 1), 4),
        "goal": ">= 0.70 of answerable answered questions: the highlighted span holds the gold answer's "
        "key words",
        "answers_changed_by_span_reader": changed,
        "seconds_per_question_p50": {k: round(statistics.median(v), 4) for k, v in seconds.items()},
        "seconds_per_question_mean": {k: round(statistics.fmean(v), 4) for k, v in seconds.items()},
        "span_reading_seconds_p50": round(statistics.median(span_seconds), 4),
        "span_reading_seconds_p90": round(sorted(span_seconds)[int(0.9 * len(span_seconds))], 4),
        "ratio_p50_with_to_without": round(
            statistics.median(seconds["with"]) / statistics.median(seconds["without"]), 3
        ),
        "threads": "span reader 1 torch thread (QA_READER_THREADS' default); 2 shared cores",
        "examples": rows[: max(args.show, 12)],
    }
    print(json.dumps({k: v for k, v in result.items() if k != "examples"}, indent=1))
    for row in rows[: args.show]:
        print(
            f"  {'HIT ' if row['hit'] else 'miss'} {row['question']!r}: span {row['span']!r} "
            f"| gold {row['gold'][:160]!r}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
