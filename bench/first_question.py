"""The first question after start against the next five, with and without the start-up warm-up.

    nice -n 10 .venv/bin/python -m bench first_question [--repeat 3]

Each run is a fresh Python process that starts as a QA worker's pool process does: Django set up,
the encoder loaded (the worker's preload), then, in the "warm" runs only, the warm-up question of
qa/warmup.py (what workers and the web process now ask at start, timed as start-up cost). It
then answers the demo corpus's six questions (documents/demo_corpus, held in memory, `default`
preset, no LLM) one after another and reports the first question's time, the median of the next
five and their ratio. Cold and warm runs alternate, so a shared machine's load falls on both.
The database, the broker and the web request are left out: they cost the same for every
question, and this measures what the first one pays on top (model loading, first inference).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.common import REPO, bench_environment, log, median, print_table, write_result

DEMO = REPO / "documents" / "demo_corpus"
QUESTIONS = (
    "How many containers did the port handle in 2024?",
    "What is the capital of Westmere?",
    "How many staff did the port authority employ?",
    "When did Westmere gain independence?",
    "How deep is the main channel?",
    "How many residents were evacuated because of the floods?",
)
MODES = ("cold", "warm")


def child(mode: str) -> dict:
    """One fresh process: start as a worker does, then time the six questions."""
    started = time.perf_counter()
    import django

    django.setup()
    from documents.embedding import get_embedder
    from documents.parsing.assemble import document_from_text
    from qa import warmup
    from qa.clients import model_clients
    from qa.pipeline.config.presets import get_preset
    from qa.pipeline.flow.factory import build_pipeline
    from qa.pipeline.flow.runner import answer_question
    from qa.pipeline.search.memory_index import InMemoryCorpusIndex

    get_embedder()
    encoder_ready = time.perf_counter() - started
    rss_before = warmup.resident_mb()
    warmup_seconds = None
    if mode == "warm":
        clock = time.perf_counter()
        warmup.ask_the_warmup_question()
        warmup_seconds = time.perf_counter() - clock
    rss_ready = warmup.resident_mb()
    clients = model_clients()
    documents = [
        document_from_text(path.read_text(), external_id=path.stem, filename=path.name)
        for path in sorted(DEMO.glob("*.txt"))
    ]
    pipeline = build_pipeline(
        get_preset("default"), index=InMemoryCorpusIndex(documents, clients.embedder), clients=clients
    )
    seconds, answers = [], []
    for question in QUESTIONS:
        clock = time.perf_counter()
        run = answer_question(question, pipeline=pipeline)
        seconds.append(time.perf_counter() - clock)
        answers.append(run.answer.text[:60])
    return {
        "mode": mode,
        "encoder_ready_s": encoder_ready,
        "warmup_s": warmup_seconds,
        "rss_mb_before_warmup": rss_before,
        "rss_mb_ready": rss_ready,
        "rss_mb_after_questions": warmup.resident_mb(),
        "question_s": seconds,
        "answers": answers,
    }


def run_child(mode: str) -> dict:
    env = bench_environment(GROUNDEDQA_BENCH_CHILD="1")
    done = subprocess.run(
        [sys.executable, "-m", "bench.first_question", "--child", mode],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        raise RuntimeError(f"first_question {mode}: the child failed:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1].removeprefix("RESULT "))


def summarise(runs: list[dict]) -> dict:
    by_mode = {}
    for mode in MODES:
        mine = [r for r in runs if r["mode"] == mode]
        first = [r["question_s"][0] for r in mine]
        rest = [median(r["question_s"][1:]) for r in mine]
        ratios = [f / r for f, r in zip(first, rest, strict=True)]
        by_mode[mode] = {
            "runs": len(mine),
            "first_s": first,
            "next_five_median_s": rest,
            "ratio": ratios,
            "ratio_median": median(ratios),
            "warmup_s": [r["warmup_s"] for r in mine],
            "rss_mb_ready": [r["rss_mb_ready"] for r in mine],
            "rss_mb_before_warmup": [r["rss_mb_before_warmup"] for r in mine],
        }
    return by_mode


def run(args) -> dict:
    repeat = args.repeat or 3
    runs = []
    for index in range(repeat):
        for mode in MODES:
            load = os.getloadavg()[0]
            log(f"first_question: {mode} run {index + 1} of {repeat}, load {load:.1f}")
            result = run_child(mode)
            result["load_at_start"] = load
            runs.append(result)
    summary = summarise(runs)
    rows = []
    for mode, s in summary.items():
        rows.append(
            (
                mode,
                s["runs"],
                " / ".join(f"{v:.2f}" for v in s["first_s"]),
                " / ".join(f"{v:.2f}" for v in s["next_five_median_s"]),
                " / ".join(f"{v:.1f}x" for v in s["ratio"]),
                f"{s['ratio_median']:.1f}x",
                " / ".join("-" if v is None else f"{v:.1f}" for v in s["warmup_s"]),
                " / ".join(f"{v:.0f}" for v in s["rss_mb_ready"] if v is not None),
            )
        )
    print_table(
        "First question after start vs the next five (demo corpus, default preset, in process, seconds)",
        (
            "start",
            "runs",
            "first",
            "next five, median",
            "first / next five",
            "median ratio",
            "warm-up s",
            "RSS MB when ready",
        ),
        rows,
    )
    payload = {"questions": list(QUESTIONS), "runs": runs, "summary": summary}
    write_result("first_question", payload, quick=args.quick)
    return payload


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        print("RESULT " + json.dumps(child(sys.argv[2])), flush=True)
    else:
        from bench.__main__ import main

        sys.exit(main(["first_question", *sys.argv[1:]]))
