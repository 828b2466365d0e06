"""Tiny randomly initialised models saved like hub models (no download): an NLI classifier and an
extractive QA reader, each a 2-layer BERT with the bundled all-MiniLM-L6-v2 tokenizer."""

from __future__ import annotations

from pathlib import Path

from qa.pipeline.search.embedding import bundled_minilm_path


def _config(**overrides):
    from transformers import AutoTokenizer, BertConfig

    tokenizer = AutoTokenizer.from_pretrained(bundled_minilm_path())
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        initializer_range=0.5,  # large weights, so outputs differ clearly between inputs
        **overrides,
    )
    return config, tokenizer


def save_tiny_nli(
    directory: Path, *, labels: tuple[str, ...] = ("contradiction", "entailment", "neutral")
) -> str:
    """An NLI classifier with ``labels`` in the order cross-encoder/nli-deberta-v3-small uses."""
    import torch
    from transformers import BertForSequenceClassification

    torch.manual_seed(0)
    config, tokenizer = _config(
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )
    BertForSequenceClassification(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def save_tiny_span_reader(directory: Path) -> str:
    import torch
    from transformers import BertForQuestionAnswering

    torch.manual_seed(0)
    config, tokenizer = _config()
    BertForQuestionAnswering(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)
