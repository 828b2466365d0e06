"""Combine or extract the passage reader's trained deltas (bench/train_reader.py writes them).

``soup``: the average of several models trained from the same base (a weight
"soup"): the mean of low-rank deltas B_i A_i is itself a low-rank delta, the B's
and A's side by side, so the soup is exact and ships as one file of rank n*r.
``extract``: one model of a file holding several (``final.`` or ``fold3.``), written
without the prefix, as qa/pipeline/reading/models/reader.safetensors is.

    .venv/bin/python bench/reader_pack.py soup OUT.safetensors A_models.safetensors B_models.sft
    .venv/bin/python bench/reader_pack.py extract OUT.sft IN.sft --prefix final. --trained-on "..."
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file


def read(path: str) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    with safe_open(path, framework="pt") as handle:
        return {key: handle.get_tensor(key) for key in handle.keys()}, handle.metadata() or {}


def soup(paths: list[str]) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    models = [read(path) for path in paths]
    n = len(models)
    ranks = {int(meta["rank"]) for _, meta in models}
    alphas = {float(meta["alpha"]) for _, meta in models}
    assert len(ranks) == 1 and len(alphas) == 1, "a soup needs models of one rank and alpha"
    rank, alpha = ranks.pop(), alphas.pop()
    out = {}
    for key, first in models[0][0].items():
        parts = [tensors[key] for tensors, _ in models]
        if key.endswith(".lora_a"):
            out[key] = torch.cat(parts, dim=0)  # (n r, in)
        elif key.endswith(".lora_b"):
            out[key] = torch.cat(parts, dim=1)  # (out, n r)
        else:
            out[key] = (sum(p.float() for p in parts) / n).to(first.dtype)
    # scale = alpha / rank: keeping alpha with rank n r divides each member's delta by n, the mean.
    meta = dict(
        models[0][1], rank=str(rank * n), alpha=str(alpha), soup=json.dumps([Path(p).name for p in paths])
    )
    return out, meta


def truncated(tensors: dict[str, torch.Tensor], meta: dict[str, str], rank: int) -> dict[str, torch.Tensor]:
    """Each delta B A cut to its best rank-``rank`` approximation (SVD): a soup of three rank-16 models
    is rank 48, and most of its energy lies in fewer directions."""
    out = dict(tensors)
    scale = float(meta["alpha"]) / float(meta["rank"])
    for key in [k for k in tensors if k.endswith(".lora_a")]:
        stem = key.removesuffix(".lora_a")
        delta = scale * (tensors[stem + ".lora_b"].float() @ tensors[key].float())
        u, s, vh = torch.linalg.svd(delta, full_matrices=False)
        root = s[:rank].sqrt()
        # Stored so that (alpha / rank) * B A is the truncated delta, with alpha = rank (scale 1).
        out[stem + ".lora_b"] = (u[:, :rank] * root).to(tensors[key].dtype)
        out[key] = (root[:, None] * vh[:rank]).to(tensors[key].dtype)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("command", choices=("soup", "extract"))
    parser.add_argument("out")
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--prefix", default="final.")
    parser.add_argument("--trained-on", default="")
    parser.add_argument("--rank", type=int, default=0, help="cut every delta to this rank (SVD)")
    args = parser.parse_args()
    if args.command == "soup":
        tensors, meta = soup(args.inputs)
    else:
        tensors, meta = read(args.inputs[0])
        tensors = {k.removeprefix(args.prefix): v for k, v in tensors.items() if k.startswith(args.prefix)}
    if args.rank:
        tensors = truncated(tensors, meta, args.rank)
        meta = dict(meta, rank=str(args.rank), alpha=str(float(args.rank)))
    if args.trained_on:
        meta["trained_on"] = json.dumps(args.trained_on)
    save_file({k: v.contiguous() for k, v in tensors.items()}, args.out, metadata=meta)
    print(f"wrote {args.out}: {len(tensors)} tensors, rank {meta['rank']}")


if __name__ == "__main__":
    main()
