"""Write the passage reader's training and scoring data (bench/train_reader.py reads them).

Training pairs, (question, passage, answerable, evidence sentence indices):
- SQuAD 2.0 dev half: each question with its own paragraph (answerable or not, as
  annotated; the evidence is the sentence holding the answer's start) and, for
  each answerable one, a paragraph of the same article that does not contain the
  answer text (an on-topic passage that does not answer: CLAPNQ's unanswerable
  kind). Half the questions are lower-cased without their question mark, as
  CLAPNQ's search-box questions are.
- CLAPNQ-dev (200): the question with its passage, with the fold number of
  bench/answerability.py's 5-fold split (seed 0), so each fold's reader never
  sees the questions it scores; with ``--retrieved-negatives`` (tried, not
  adopted) also the question with each other passage the ``default`` pipeline
  put in its top 3 (not answering: another document).
Nothing from analyst-bench or MTRAG-UN is used.

Scoring items: for each CLAPNQ question its gold passage (``gold``) and the top
passages the ``default`` pipeline retrieved (from var/answerability_rows.json,
written by bench/answerability.py), each with the question's fold; and the top
passages of every analyst-bench row (fold -1: scored by the final model, which
never saw analyst-bench).

    GROUNDEDQA_SHARED_DATA=/work/shared/data .venv/bin/python bench/reader_data.py --out /work/main/.gpu
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from answerability import ROWS, folds_of  # noqa: E402
from retrieval_quality import DATA  # noqa: E402

_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def sentences_of(text: str) -> list[str]:
    return [s for s in _SPLIT.split(text.strip()) if s]


def search_box(question: str) -> str:
    return question.strip().rstrip("?").strip().lower()


def squad_pairs(rng: random.Random) -> list[dict]:
    data = json.loads((DATA / "squad2" / "dev-half-v2.0.json").read_text())["data"]
    pairs = []
    for article in data:
        paragraphs = article["paragraphs"]
        for number, paragraph in enumerate(paragraphs):
            context = paragraph["context"]
            sentences = sentences_of(context)
            starts, position = [], 0
            for sentence in sentences:
                position = context.find(sentence, position)
                starts.append(position)
            for qa in paragraph["qas"]:
                question = qa["question"] if rng.random() < 0.5 else search_box(qa["question"])
                base = {
                    "q": question,
                    "title": article["title"].replace("_", " "),
                    "source": "squad",
                    "fold": -1,
                }
                if qa["is_impossible"] or not qa["answers"]:
                    pairs.append({**base, "id": qa["id"], "sentences": sentences, "label": 0, "evidence": []})
                    continue
                start = qa["answers"][0]["answer_start"]
                evidence = max((i for i, s in enumerate(starts) if 0 <= s <= start), default=0)
                pairs.append(
                    {**base, "id": qa["id"], "sentences": sentences, "label": 1, "evidence": [evidence]}
                )
                answer = qa["answers"][0]["text"].lower()
                others = [
                    p for i, p in enumerate(paragraphs) if i != number and answer not in p["context"].lower()
                ]
                if others:
                    other = rng.choice(others)
                    pairs.append(
                        {
                            **base,
                            "id": qa["id"] + ":other",
                            "sentences": sentences_of(other["context"]),
                            "label": 0,
                            "evidence": [],
                        }
                    )
    return pairs


def clapnq_records() -> list[dict]:
    records = []
    for kind in ("answerable", "unanswerable"):
        for line in (DATA / "clapnq-dev" / f"clapnq_dev_{kind}.jsonl").read_text().splitlines():
            records.append(json.loads(line))
    return records


def retrieved_negatives(rows: list[dict], fold_of: dict[str, int]) -> list[dict]:
    """CLAPNQ passages the default pipeline retrieved for a question that are not its own passage:
    passages near the question that do not answer it (each with the question's fold)."""
    pairs = []
    for row in rows:
        if row["dataset"] != "clapnq-dev":
            continue
        for rank, passage in enumerate(row["passages"]):
            if passage["document_id"] in row["gold_documents"]:
                continue
            pairs.append(
                {
                    "id": f"{row['case_id']}:retrieved{rank}",
                    "q": row["question"],
                    "title": passage["title"],
                    "sentences": passage["sentences"],
                    "label": 0,
                    "evidence": [],
                    "source": "clapnq",
                    "fold": fold_of[row["question"]],
                }
            )
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--retrieved-negatives",
        action="store_true",
        help="add CLAPNQ's retrieved non-gold passages (not adopted)",
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    rows = json.loads(ROWS.read_text()) if ROWS.exists() else []
    records = clapnq_records()
    # bench/answerability.py's folds: its CLAPNQ rows come in this order (answerable file first).
    folds = folds_of([{"answerable": bool(r["output"][0]["answer"])} for r in records]).tolist()
    fold_of = {r["input"]: fold for r, fold in zip(records, folds, strict=True)}
    train = squad_pairs(rng)
    score = []
    for record in records:
        passage = record["passages"][0]
        chosen = set(record["output"][0]["selected_sentences"])
        answerable = bool(record["output"][0]["answer"])
        item = {
            "id": record["id"],
            "q": record["input"],
            "title": passage["title"],
            "sentences": passage["sentences"],
            "label": int(answerable),
            "evidence": [i for i, s in enumerate(passage["sentences"]) if s in chosen],
            "source": "clapnq",
            "fold": fold_of[record["input"]],
        }
        train.append(item)
        score.append({**item, "gold": True})
    if args.retrieved_negatives:
        train += retrieved_negatives(rows, fold_of)
    for row in rows:
        fold = fold_of.get(row["question"], -1) if row["dataset"] == "clapnq-dev" else -1
        for rank, passage in enumerate(row["passages"]):
            score.append(
                {
                    "id": f"{row['dataset']}|{row['case_id']}|{rank}",
                    "q": row["question"],
                    "title": passage["title"],
                    "sentences": passage["sentences"],
                    "label": int(row["answerable"]),
                    "source": row["dataset"],
                    "fold": fold,
                    "gold": False,
                }
            )
    args.out.mkdir(parents=True, exist_ok=True)
    for name, items in (("reader_train.jsonl", train), ("reader_score.jsonl", score)):
        with (args.out / name).open("w") as handle:
            for item in items:
                handle.write(json.dumps(item) + "\n")
    sources = {s: sum(i["source"] == s for i in train) for s in ("squad", "clapnq")}
    print(
        f"training pairs {sources} (answerable {sum(i['label'] for i in train)}), scoring items {len(score)}"
    )


if __name__ == "__main__":
    main()
