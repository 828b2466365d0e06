"""The local LLM's cost through xllamacpp: loading, one grounded chat completion, yes/no judgements.

    make local-llm
    nice -n 10 .venv/bin/python -m bench.local_llm [GGUF] [--threads 2] [--repeat 5]

Runs the product's client (``qa.pipeline.core.llm.LlamaCppLLM``) on a passage of about
120 words: one answer (up to 48 tokens) and ``--repeat`` yes/no judgements ("does
the passage answer the question?", one generated token, read by probability).
Each judgement asks a different question, so llama.cpp's prompt cache reuses only
the shared prefix, as it would across questions about one passage. Writes
bench/results/local_llm-threads<N>.json. Wall times; the machine's load is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from qa.pipeline.core.llm import LlamaCppLLM

DEFAULT_GGUF = Path("var/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
PASSAGE = (
    "The Port of Westmere handled 4.2 million containers in 2024, an increase of 6 percent over 2023. "
    "Most of the growth came from the new eastern terminal, which opened in March. The authority "
    "employed 1,850 staff at the end of the year. Dredging of the main channel to a depth of 16 meters "
    "was completed in October. Operating revenue reached 312 million dollars. The authority plans to "
    "electrify all shore cranes by 2027, and a rail link to the inland depot at Arlen is under study. "
    "Container dwell time fell from 4.1 to 3.6 days after the terminal's gate system was automated."
)
# (question, whether the passage answers it)
QUESTIONS = [
    ("How many containers did the port handle in 2024?", True),
    ("Who is the chief executive of the port authority?", False),
    ("How deep is the main channel after dredging?", True),
    ("What was the port's net profit in 2024?", False),
    ("When will the shore cranes be electrified?", True),
    ("How many ships called at the port in 2024?", False),
]


def judge_messages(passage: str, question: str) -> list[dict[str, str]]:
    ask = f"Passage: {passage}\nQuestion: {question}\nDoes the passage answer the question? Answer yes or no."
    return [{"role": "user", "content": ask}]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("gguf", nargs="?", default=str(DEFAULT_GGUF))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=len(QUESTIONS))
    args = parser.parse_args(argv)
    llm = LlamaCppLLM(args.gguf, n_ctx=2048, n_threads=args.threads)
    load_before = os.getloadavg()[0]

    clock = time.perf_counter()
    llm.yes_probability(judge_messages("Oman has 4.6 million people.", "Who rules Oman?"))
    first_call = time.perf_counter() - clock  # loads the model

    clock = time.perf_counter()
    answer = llm.complete(
        [
            {"role": "system", "content": "Answer from the passage only, in one sentence."},
            {"role": "user", "content": f"Passage: {PASSAGE}\nQuestion: {QUESTIONS[0][0]}"},
        ],
        max_tokens=48,
    )
    completion = time.perf_counter() - clock

    judgements = []
    for question, answerable in (QUESTIONS * 3)[: args.repeat]:
        clock = time.perf_counter()
        probability = llm.yes_probability(judge_messages(PASSAGE, question))
        judgements.append(
            {
                "question": question,
                "answerable": answerable,
                "p_yes": round(probability, 4),
                "seconds": round(time.perf_counter() - clock, 3),
            }
        )
    result = {
        "model": Path(args.gguf).name,
        "threads": args.threads,
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
        "first_call_with_load_s": round(first_call, 3),
        "completion_s": round(completion, 3),
        "completion": answer,
        "judgement_s_median": round(statistics.median(j["seconds"] for j in judgements), 3),
        "judgements": judgements,
    }
    print(json.dumps(result, indent=2))
    out = Path(__file__).with_name("results") / f"local_llm-threads{args.threads}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
