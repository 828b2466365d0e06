"""Latency of the `default` preset against an earlier version of the code, as a ratio in one run.

``python -m bench.default_latency [--baseline COMMIT] [--rounds N] [--questions N]``

The baseline's tree is taken from git (``git archive``, no checkout is touched) into a temporary
folder. Each round starts one child process per version, in alternating order (A B, then B A),
so load that comes and goes on a shared machine falls on both; each child builds the same
in-memory corpus (analyst-bench's train questions over their gold documents and 30 others, the
reply-rules bench's sample), answers the last three train questions to load its models (not
timed), then the others timed with `default`. Document vectors come from the shared embedding cache;
questions and the answer checks are encoded by the model, as a worker would. What is compared is
the median per-question time of each version over all rounds, and the ratio new / baseline.

The child imports whichever layout its tree has (qa.pipeline.flow.* or the flat qa.pipeline.*),
so the baseline can be any commit whose bench/retrieval_quality.py builds the corpus this way.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

# Only the standard library at module level: a child loads this file into the baseline's tree,
# whose bench/ package is older (see _child_times).
REPO = Path(__file__).resolve().parent.parent
# The commit the reply-decision issue was written against (README's issue text: "main at c165259").
BASELINE = "c165259"
# A child loads this file by path, so the baseline's tree needs no copy of it; ``-c`` puts the
# child's working folder (the tree) first on sys.path.
WARM_UP = 3  # analyst-bench train questions answered first, untimed, and never timed
CHILD = (
    "import importlib.util, json, sys\n"
    "spec = importlib.util.spec_from_file_location('default_latency_child', sys.argv[1])\n"
    "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
    "print(json.dumps(module.answer_all_timed(int(sys.argv[2]))))\n"
)


def _tree(commit: str, into: Path) -> Path:
    """The files of ``commit`` under ``into``, with this checkout's embedding cache linked in."""
    archive = subprocess.run(["git", "archive", commit], cwd=REPO, check=True, capture_output=True).stdout
    tree = into / commit
    tree.mkdir(parents=True)
    with tempfile.TemporaryFile() as raw:
        raw.write(archive)
        raw.seek(0)
        with tarfile.open(fileobj=raw) as tar:
            tar.extractall(tree, filter="data")
    (tree / "var").mkdir(exist_ok=True)
    (tree / "var" / "cache").symlink_to(REPO / "var" / "cache")
    return tree


def _child_times(tree: Path, questions: int) -> list[float]:
    env = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        # The data beside this checkout (a tree in a temporary folder has no ../shared beside it).
        "GROUNDEDQA_SHARED_DATA": os.environ.get(
            "GROUNDEDQA_SHARED_DATA", str(REPO.parent / "shared" / "data")
        ),
    }
    done = subprocess.run(
        [sys.executable, "-c", CHILD, __file__, str(questions)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"the child in {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def answer_all_timed(questions: int) -> list[float]:
    """In a child: the per-question seconds of `default` in this tree (see the module docstring)."""
    from bench.answer_quality import with_distractors
    from bench.retrieval_quality import CACHE, DATA, MODEL, MemoEmbedder, analyst_bench, build
    from review.evaluation.reference import load_gold_cases

    try:  # the layout by stage
        from qa.pipeline.config.presets import get_preset
        from qa.pipeline.flow.factory import ModelClients, build_pipeline
        from qa.pipeline.flow.runner import answer_question
        from qa.pipeline.search.embedding import CachingEmbedder, SentenceTransformerEmbedder
    except ImportError:  # the flat layout before it
        from qa.pipeline.embedding import CachingEmbedder, SentenceTransformerEmbedder
        from qa.pipeline.factory import ModelClients, build_pipeline
        from qa.pipeline.presets import get_preset
        from qa.pipeline.runner import answer_question

    documents, _ = analyst_bench()
    documents = with_distractors(documents, 30)
    index, _ = build(documents, MemoEmbedder(CachingEmbedder(SentenceTransformerEmbedder(), CACHE, MODEL)))
    texts = [case.question for case in load_gold_cases("train", data_dir=DATA)]
    # Loading the models takes questions of their own: one the timed ones include would be
    # answered from vectors the warm-up left behind (qa.pipeline.search.embedding.RecentVectors).
    warm, texts = texts[-WARM_UP:], texts[: min(questions, len(texts) - WARM_UP)]
    pipeline = build_pipeline(
        get_preset("default"), index=index, clients=ModelClients(embedder=SentenceTransformerEmbedder())
    )
    for text in warm:  # loads every model the preset uses; not timed
        answer_question(text, pipeline=pipeline)
    seconds = []
    for text in texts:
        started = time.perf_counter()
        answer_question(text, pipeline=pipeline)
        seconds.append(time.perf_counter() - started)
    return seconds


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--baseline", default=BASELINE, help=f"the commit to compare with (default {BASELINE})"
    )
    parser.add_argument("--rounds", type=int, default=2, help="child processes per version, alternating")
    parser.add_argument(
        "--questions", type=int, default=21, help="analyst-bench train questions timed (at most 21)"
    )
    args = parser.parse_args(argv)
    from bench.common import latency_summary, median, write_result

    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, check=True, capture_output=True)
    current = head.stdout.decode().strip()
    times: dict[str, list[float]] = {"baseline": [], "current": []}
    with tempfile.TemporaryDirectory(prefix="default-latency-") as folder:
        trees = {"baseline": _tree(args.baseline, Path(folder)), "current": REPO}
        for n in range(args.rounds):
            order = ("baseline", "current") if n % 2 == 0 else ("current", "baseline")
            for version in order:
                seconds = _child_times(trees[version], args.questions)
                times[version].extend(seconds)
                print(
                    f"round {n + 1}: {version} median {median(seconds):.3f} s over {len(seconds)} questions"
                )
    ratio = median(times["current"]) / median(times["baseline"])
    result = {
        "preset": "default",
        "baseline": args.baseline,
        "current": current,
        "rounds": args.rounds,
        "questions_per_round": args.questions,
        "sample": "analyst-bench train questions over their gold documents and 30 others, in memory",
        "baseline_seconds": latency_summary(times["baseline"]),
        "current_seconds": latency_summary(times["current"]),
        "ratio_p50": ratio,
    }
    print(
        f"default, p50 per question: baseline {args.baseline} {median(times['baseline']):.3f} s, "
        f"current {current} {median(times['current']):.3f} s, ratio {ratio:.2f}"
    )
    write_result("default_latency", result, quick=args.rounds == 1 and args.questions < 21)
    return result


def run(args) -> None:
    """``python -m bench default_latency``: two alternating rounds (--quick: one, 8 questions)."""
    main(["--rounds", "1", "--questions", "8"] if args.quick else [])


if __name__ == "__main__":
    main()
