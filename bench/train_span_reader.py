"""Train the span reader: start/end logits over passage tokens with a no-answer option at [CLS].

The span reader sits on the shipped passage reader (qa/pipeline/reading/models/reader.safetensors, which
stays untouched): its layers 0-3 are used as they ship, frozen, and only new low-rank deltas on the
top ``--top`` layers (plus their layer norms) and a start/end head over every token are trained.
Because the lower layers are frozen, their output is computed once per training example and the
epochs run only the top layers: what made training on 2 shared CPU cores possible.

Data: SQuAD 2.0 dev half (../shared/data/squad2, CC BY-SA 4.0), split by article. The articles in
``HELD_OUT`` are never trained on (the span deltas and head never see them); they give the EM/F1 of
``--eval``. Unanswerable questions are trained towards [CLS] for both start and end, SQuAD 2.0 style.
Half the training questions are lower-cased without their question mark, as CLAPNQ's search-box
questions are. A caveat the results must carry: the shipped passage reader under the span reader
was trained for answerability (not spans) on all of the SQuAD dev half, held-out articles included.

    nice .venv/bin/python bench/train_span_reader.py --out var/span_reader --limit 4000
    nice .venv/bin/python bench/train_span_reader.py --eval
    qa/pipeline/reading/models/span_reader.safetensors --write
"""

from __future__ import annotations

import argparse
import collections
import copy
import hashlib
import json
import random
import re
import string
import sys
import time
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file
from torch import nn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from retrieval_quality import DATA  # noqa: E402
from train_reader import TARGETS, add_lora, descend, optimiser_for  # noqa: E402

from qa.pipeline.reading.reader import READER_WEIGHTS, PassageReader  # noqa: E402

SQUAD = DATA / "squad2" / "dev-half-v2.0.json"
# The last three articles of the file (1,265 questions): never trained on.
HELD_OUT = ("Warsaw", "French_and_Indian_War", "Force")
RESULTS = REPO / "bench" / "results"


def squad_items(*, held_out: bool) -> list[dict]:
    data = json.loads(SQUAD.read_text())["data"]
    items = []
    for article in data:
        if (article["title"] in HELD_OUT) != held_out:
            continue
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                answers = [a for a in qa["answers"] if a["text"].strip()]
                items.append(
                    {
                        "id": qa["id"],
                        "title": article["title"],
                        "question": qa["question"],
                        "context": paragraph["context"],
                        "answers": [] if qa.get("is_impossible") else answers,
                    }
                )
    return items


def encode(tokenizer, items: list[dict], max_len: int) -> list[dict]:
    """Token ids, the allowed positions ([CLS] and passage tokens), the gold start/end (0: no answer)
    and the character offsets; an answer cut off by truncation drops the item (training only)."""
    encoded = tokenizer(
        [i["question"] for i in items],
        [i["context"] for i in items],
        truncation="only_second",
        max_length=max_len,
        return_offsets_mapping=True,
    )
    out = []
    for row, item in enumerate(items):
        sequence = encoded.sequence_ids(row)
        offsets = encoded["offset_mapping"][row]
        allowed = [position == 0 or s == 1 for position, s in enumerate(sequence)]
        start = end = 0
        if item["answers"]:
            a = item["answers"][0]
            first, last = a["answer_start"], a["answer_start"] + len(a["text"])
            starts = [t for t, (x, y) in enumerate(offsets) if sequence[t] == 1 and x <= first < y]
            ends = [t for t, (x, y) in enumerate(offsets) if sequence[t] == 1 and x < last <= y]
            if not starts or not ends:
                start = end = -1
            else:
                start, end = starts[0], ends[-1]
        out.append(
            {
                "ids": encoded["input_ids"][row],
                "types": encoded["token_type_ids"][row],
                "allowed": allowed,
                "start": start,
                "end": end,
                "offsets": offsets,
                "in_context": [s == 1 for s in sequence],
            }
        )
    return out


def padded(batch: list[dict]) -> dict[str, torch.Tensor]:
    n = max(len(b["ids"]) for b in batch)
    ids = torch.zeros(len(batch), n, dtype=torch.long)
    types = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    allowed = torch.zeros(len(batch), n, dtype=torch.bool)
    for i, b in enumerate(batch):
        k = len(b["ids"])
        ids[i, :k] = torch.tensor(b["ids"])
        types[i, :k] = torch.tensor(b["types"])
        mask[i, :k] = 1
        allowed[i, :k] = torch.tensor(b["allowed"])
    return {"ids": ids, "types": types, "mask": mask, "allowed": allowed}


def additive_mask(mask: torch.Tensor) -> torch.Tensor:
    return (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min


class SpanTop(nn.Module):
    """The reader's top layers with new low-rank deltas, and the start/end head."""

    def __init__(self, layers: list[nn.Module], rank: int, alpha: float) -> None:
        super().__init__()
        self.layers = nn.ModuleList(copy.deepcopy(layer) for layer in layers)
        add_lora(self.layers, self.layers, rank, alpha)
        self.span = nn.Linear(layers[0].output.dense.out_features, 2)

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        attention = additive_mask(mask)
        for layer in self.layers:
            out = layer(hidden, attention_mask=attention)
            hidden = out[0] if isinstance(out, tuple) else out
        logits = self.span(hidden)
        return logits[..., 0], logits[..., 1]


def lower_states(model, batch: dict[str, torch.Tensor], bottom: int) -> torch.Tensor:
    """The frozen reader's hidden states entering layer ``bottom``."""
    hidden = model.embeddings(input_ids=batch["ids"], token_type_ids=batch["types"])
    attention = additive_mask(batch["mask"])
    for layer in model.encoder.layer[:bottom]:
        out = layer(hidden, attention_mask=attention)
        hidden = out[0] if isinstance(out, tuple) else out
    return hidden


def shipped_tensors(top: SpanTop, bottom: int) -> dict[str, torch.Tensor]:
    """Named as the reader's file names them, so ``qa.pipeline.reading.reader`` merges them the same way."""
    out = {}
    for name, p in top.named_parameters():
        if not p.requires_grad:
            continue
        if name.startswith("span."):
            out[name] = p.detach().float().contiguous()
            continue
        index, _, rest = name.removeprefix("layers.").partition(".")
        out[f"bert.encoder.layer.{int(index) + bottom}.{rest}"] = p.detach().half().contiguous()
    return out


def normalise(text: str) -> str:
    """SQuAD's official answer normalisation: lower case, no punctuation, articles or extra spaces."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def f1(prediction: str, gold: str) -> float:
    p, g = normalise(prediction).split(), normalise(gold).split()
    if not p or not g:
        return float(p == g)
    common = sum((collections.Counter(p) & collections.Counter(g)).values())
    if not common:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def train(args) -> None:
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    reader = PassageReader(threads=0)
    model, tokenizer = reader.model, reader.tokenizer
    bottom = len(model.encoder.layer) - args.top
    items = squad_items(held_out=False)
    rng.shuffle(items)
    for item in items[::2]:
        item["question"] = item["question"].strip().rstrip("?").strip().lower()
    if args.limit:
        items = items[: args.limit]
    started = time.time()
    data = [d for d in encode(tokenizer, items, args.max_len) if d["start"] >= 0]
    # Precompute the frozen layers' output once; batches of similar length waste less padding.
    order = sorted(range(len(data)), key=lambda i: len(data[i]["ids"]))
    batches = [[data[i] for i in order[k : k + args.batch]] for k in range(0, len(order), args.batch)]
    cached = []
    # no_grad, not inference_mode: the cached states feed layers that are trained.
    with torch.no_grad():
        for batch in batches:
            tensors = padded(batch)
            tensors["hidden"] = lower_states(model, tensors, bottom).half().clone()
            tensors["start"] = torch.tensor([b["start"] for b in batch])
            tensors["end"] = torch.tensor([b["end"] for b in batch])
            cached.append(tensors)
    precompute_s = time.time() - started
    unanswerable = sum(1 for d in data if d["start"] == 0)
    print(
        f"{len(data)} training questions ({unanswerable} unanswerable), lower layers in {precompute_s:.0f}s",
        flush=True,
    )
    top = SpanTop(list(model.encoder.layer[bottom:]), args.rank, args.alpha)
    params = [p for p in top.parameters() if p.requires_grad]
    steps = args.epochs * len(cached)
    optimiser, schedule = optimiser_for(params, args.lr, steps)
    top.train()
    step, train_started = 0, time.time()
    for _epoch in range(args.epochs):
        rng.shuffle(cached)
        for b in cached:
            start_logits, end_logits = top(b["hidden"].float(), b["mask"])
            blocked = ~b["allowed"]
            start_logits = start_logits.masked_fill(blocked, -1e4)
            end_logits = end_logits.masked_fill(blocked, -1e4)
            loss = (
                nn.functional.cross_entropy(start_logits, b["start"])
                + nn.functional.cross_entropy(end_logits, b["end"])
            ) / 2
            descend(loss, params, optimiser, schedule)
            step += 1
            if step % 20 == 0 or step == steps:
                print(
                    f"  step {step}/{steps} loss {loss.item():.3f} {time.time() - train_started:.0f}s",
                    flush=True,
                )
        # Written after every epoch: a run cut short still leaves a usable reader.
        write(
            args,
            top,
            bottom,
            len(model.encoder.layer),
            data,
            precompute_s,
            time.time() - train_started,
            _epoch + 1,
        )


def write(
    args,
    top: SpanTop,
    bottom: int,
    layers: int,
    data: list[dict],
    precompute_s: float,
    train_s: float,
    epochs: int,
) -> None:
    unanswerable = sum(1 for d in data if d["start"] == 0)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tensors = shipped_tensors(top, bottom)
    trained_on = (
        f"SQuAD 2.0 dev half without the articles {', '.join(HELD_OUT)}: {len(data)} questions "
        f"({unanswerable} unanswerable), {epochs} epochs; span deltas (rank {args.rank}) on layers "
        f"{bottom}-{layers - 1} and a start/end head over the shipped passage reader "
        f"(itself trained on all of the SQuAD dev half for answerability); on CPU, {args.threads} threads, "
        f"{precompute_s + train_s:.0f}s"
    )
    meta = {
        "rank": str(args.rank),
        "alpha": str(args.alpha),
        "max_len": str(args.max_len),
        "top_layers": str(args.top),
        "targets": ",".join(TARGETS),
        "reader_sha256": hashlib.sha256(READER_WEIGHTS.read_bytes()).hexdigest(),
        "trained_on": json.dumps(trained_on),
        "args": json.dumps(vars(args)),
    }
    save_file(tensors, str(out / "span_reader.safetensors"), metadata=meta)
    print(f"wrote {out / 'span_reader.safetensors'}; precompute {precompute_s:.0f}s, training {train_s:.0f}s")


def calibration_items(trained: argparse.Namespace) -> list[dict]:
    """The training articles' questions that training left out (past ``--limit`` in its shuffled
    order, questions lower-cased as there): the no-answer threshold is fitted on them, never on the
    held-out articles."""
    rng = random.Random(trained.seed)
    items = squad_items(held_out=False)
    rng.shuffle(items)
    for item in items[::2]:
        item["question"] = item["question"].strip().rstrip("?").strip().lower()
    return items[trained.limit :]


def scored(reader, items: list[dict]) -> list[tuple[dict, tuple[int, int, float]]]:
    return [(item, reader.span_scores(item["question"], [item["context"]])[0]) for item in items]


def squad_scores(item: dict, span: tuple[int, int, float], threshold: float) -> tuple[float, float]:
    """(exact match, F1) of the reader's answer: its span where the span's score over no answer
    passes ``threshold``, else no answer."""
    prediction = item["context"][span[0] : span[1]] if span[2] > threshold else ""
    golds = [a["text"] for a in item["answers"]] or [""]
    return (
        max(float(normalise(prediction) == normalise(g)) for g in golds),
        max(f1(prediction, g) for g in golds),
    )


def fit_threshold(args) -> None:
    """The no-answer threshold maximising F1 on the calibration questions, written into the file."""
    from qa.pipeline.reading.reader import SpanReader

    torch.set_num_threads(args.threads)
    reader = SpanReader(args.fit_threshold, threads=0)
    with safe_open(args.fit_threshold, framework="pt") as handle:
        trained = argparse.Namespace(**json.loads(handle.metadata()["args"]))
    items = calibration_items(trained)[: args.calibration]
    rows = scored(reader, items)
    candidates = sorted({round(span[2], 2) for _, span in rows} | {0.0})
    best = max(
        candidates,
        key=lambda t: (sum(squad_scores(item, span, t - 1e-6)[1] for item, span in rows), -abs(t)),
    )
    threshold = best - 1e-6
    f1_at = {
        name: round(100 * sum(squad_scores(i, s, t)[1] for i, s in rows) / len(rows), 2)
        for name, t in (("0", 0.0), ("fitted", threshold))
    }
    with safe_open(args.fit_threshold, framework="pt") as handle:
        meta = dict(handle.metadata() or {})
        tensors = {key: handle.get_tensor(key) for key in handle.keys()}
    meta["null_threshold"] = f"{threshold:.4f}"
    meta["trained_on"] = json.dumps(
        json.loads(meta["trained_on"]) + f"; no-answer threshold {threshold:.2f} fitted on {len(rows)} "
        "questions of the training articles that training left out"
    )
    save_file(tensors, args.fit_threshold, metadata=meta)
    print(f"threshold {threshold:.3f} on {len(rows)} calibration questions; F1 at 0 / fitted: {f1_at}")


def evaluate(args) -> None:
    from qa.pipeline.reading.reader import SpanReader

    torch.set_num_threads(args.threads)
    reader = SpanReader(args.eval, threads=0)
    items = squad_items(held_out=True)[:: args.every]
    if args.limit:
        items = items[: args.limit]
    started = time.time()
    em = f1_total = 0.0
    counts = collections.Counter()
    by_kind = collections.defaultdict(lambda: [0.0, 0.0, 0])
    forced = [0.0, 0.0]
    for item, span in scored(reader, items):
        found = span if span[2] > reader.null_threshold else None
        e, f = squad_scores(item, span, reader.null_threshold)
        if item["answers"]:  # the best span with no-answer left out: what the answer card marks
            forced = [a + b for a, b in zip(forced, squad_scores(item, span, float("-inf")), strict=True)]
        em += e
        f1_total += f
        kind = "HasAns" if item["answers"] else "NoAns"
        by_kind[kind][0] += e
        by_kind[kind][1] += f
        by_kind[kind][2] += 1
        counts["predicted_no_answer"] += found is None
    n = len(items)
    result = {
        "command": "nice .venv/bin/python " + " ".join(sys.argv),
        "data": f"SQuAD 2.0 dev half, held-out articles {', '.join(HELD_OUT)}, every {args.every}. question "
        "(never trained on by the span deltas or head; the passage reader under them saw them for "
        "answerability)",
        "model": reader.trained_on,
        "n": n,
        "exact_match": round(100 * em / n, 2),
        "f1": round(100 * f1_total / n, 2),
        **{
            f"{kind}_{name}": round(100 * value[index] / value[2], 2)
            for kind, value in sorted(by_kind.items())
            for index, name in ((0, "exact_match"), (1, "f1"))
        },
        **{f"{kind}_n": value[2] for kind, value in sorted(by_kind.items())},
        "predicted_no_answer": counts["predicted_no_answer"],
        "no_answer_threshold": reader.null_threshold,
        "HasAns_best_span_exact_match": round(100 * forced[0] / max(by_kind["HasAns"][2], 1), 2),
        "HasAns_best_span_f1": round(100 * forced[1] / max(by_kind["HasAns"][2], 1), 2),
        "seconds": round(time.time() - started, 1),
    }
    print(json.dumps(result, indent=2))
    if args.write:
        (RESULTS / "span_reader_squad2_heldout.json").write_text(json.dumps(result, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="var/span_reader")
    parser.add_argument("--eval", default="", help="a span reader file: EM/F1 on the held-out articles")
    parser.add_argument("--write", action="store_true", help="with --eval: write bench/results")
    parser.add_argument("--fit-threshold", default="", help="a span reader file: fit its no-answer threshold")
    parser.add_argument("--calibration", type=int, default=300, help="questions the threshold is fitted on")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--every", type=int, default=1, help="with --eval: every n-th held-out question")
    parser.add_argument("--top", type=int, default=2)
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--alpha", type=float, default=16)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--max-len", type=int, default=384)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.fit_threshold:
        fit_threshold(args)
    elif args.eval:
        evaluate(args)
    else:
        train(args)


if __name__ == "__main__":
    main()
