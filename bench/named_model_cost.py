"""CPU cost of the public models docs/readers.md suggests for each named-model slot, measured offline.

    nice -n 10 .venv/bin/python -m bench.named_model_cost [--threads 2] [--seconds 6]

No registry ships these weights (../shared/ENVIRONMENT.md) and nothing downloads
here, so each model is built from its published architecture (the config.json
sizes below) with random weights: the arithmetic, and so the time, is the same as
the trained model's. Times are forward passes only, on fixed-length token inputs
(the pair lengths each slot sees), batch 16 for rerankers and NLI models (what
the code uses) and the answer's sentences at once for readers. Writes
bench/results/named_model_cost.json. A substitute for timing the real files:
say so wherever the figures are shown.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

# What the DeBERTa-v3 NLI cross-encoders' config.json files share; each adds its own sizes.
_DEBERTA_V3 = dict(
    vocab_size=128100,
    relative_attention=True,
    position_buckets=256,
    max_relative_positions=-1,
    pos_att_type=["p2c", "c2p"],
    norm_rel_ebd="layer_norm",
    share_att_key=True,
    position_biased_input=False,
    num_labels=3,
)
# name -> (slot, transformers config class, config kwargs, head)
ARCHITECTURES = {
    "cross-encoder/ms-marco-MiniLM-L-6-v2": (
        "QA_RERANKER_MODEL",
        "BertConfig",
        dict(
            vocab_size=30522,
            hidden_size=384,
            num_hidden_layers=6,
            num_attention_heads=12,
            intermediate_size=1536,
            num_labels=1,
        ),
        "sequence",
    ),
    "cross-encoder/ms-marco-MiniLM-L-12-v2": (
        "QA_RERANKER_MODEL",
        "BertConfig",
        dict(
            vocab_size=30522,
            hidden_size=384,
            num_hidden_layers=12,
            num_attention_heads=12,
            intermediate_size=1536,
            num_labels=1,
        ),
        "sequence",
    ),
    "cross-encoder/nli-deberta-v3-xsmall": (
        "QA_NLI_MODEL",
        "DebertaV2Config",
        dict(
            _DEBERTA_V3, hidden_size=384, num_hidden_layers=12, num_attention_heads=6, intermediate_size=1536
        ),
        "sequence",
    ),
    "cross-encoder/nli-deberta-v3-small": (
        "QA_NLI_MODEL",
        "DebertaV2Config",
        dict(
            _DEBERTA_V3, hidden_size=768, num_hidden_layers=6, num_attention_heads=12, intermediate_size=3072
        ),
        "sequence",
    ),
    "deepset/minilm-uncased-squad2": (
        "QA_SPAN_READER_MODEL",
        "BertConfig",
        dict(
            vocab_size=30522,
            hidden_size=384,
            num_hidden_layers=12,
            num_attention_heads=12,
            intermediate_size=1536,
        ),
        "qa",
    ),
    "deepset/roberta-base-squad2": (
        "QA_SPAN_READER_MODEL",
        "RobertaConfig",
        dict(
            vocab_size=50265,
            hidden_size=768,
            num_hidden_layers=12,
            num_attention_heads=12,
            intermediate_size=3072,
            max_position_embeddings=514,
            type_vocab_size=1,
        ),
        "qa",
    ),
}
# Token lengths of what each slot reads: a reranker a (question, passage) pair of a ~150-word
# passage; an NLI model a (cited sentences, answer sentence) pair; a reader a (question, one
# answer sentence) pair.
WORKLOADS = {"QA_RERANKER_MODEL": (16, 256), "QA_NLI_MODEL": (16, 96), "QA_SPAN_READER_MODEL": (4, 64)}


def build(config_class: str, kwargs: dict, head: str):
    import transformers

    config = getattr(transformers, config_class)(**kwargs)
    if head == "qa":
        return transformers.AutoModelForQuestionAnswering.from_config(config).eval()
    return transformers.AutoModelForSequenceClassification.from_config(config).eval()


def pairs_per_second(model, batch: int, length: int, seconds: float) -> tuple[float, float]:
    import torch

    ids = torch.randint(1000, 20000, (batch, length))
    inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    with torch.inference_mode():
        model(**inputs)  # warm-up
        calls, clock = 0, time.perf_counter()
        while time.perf_counter() - clock < seconds or calls < 2:
            model(**inputs)
            calls += 1
        elapsed = time.perf_counter() - clock
    return batch * calls / elapsed, elapsed / calls


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--only", default="", help="comma-separated model names")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    rows = []
    for name, (slot, config_class, kwargs, head) in ARCHITECTURES.items():
        if args.only and name not in args.only.split(","):
            continue
        torch.manual_seed(0)
        model = build(config_class, kwargs, head)
        parameters = sum(p.numel() for p in model.parameters())
        batch, length = WORKLOADS[slot]
        load = os.getloadavg()[0]
        rate, per_call = pairs_per_second(model, batch, length, args.seconds)
        row = {
            "model": name,
            "slot": slot,
            "parameters_m": round(parameters / 1e6, 1),
            "tokens_per_pair": length,
            "batch": batch,
            "pairs_per_s": round(rate, 1),
            "seconds_per_batch": round(per_call, 3),
            "load_average": round(load, 2),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
        del model
    result = {
        "threads": args.threads,
        "substitute": "random weights of the published architectures",
        "rows": rows,
    }
    out = Path(__file__).with_name("results") / "named_model_cost.json"
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
