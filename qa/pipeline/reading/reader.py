"""The passage reader: does this passage state the answer to this question?

all-MiniLM-L6-v2 (the installed bi-encoder) read as a cross-encoder over
"question [SEP] title. passage" (384 word pieces at most): low-rank deltas on its
attention and feed-forward weights, its layer norms and a head over [CLS] were
trained on a GPU by bench/train_reader.py (SQuAD 2.0 dev half and CLAPNQ-dev; the
README and the file's ``trained_on`` metadata say what the shipped file saw) and
ship in ``models/reader.safetensors`` (~2 MB). At load time the deltas are merged
into the installed weights, so reading costs one MiniLM pass per passage on CPU.

``read`` gives the probability that a passage states the answer: an input of the
answerability model (``reader_answerable``), not calibrated on its own. The
file also holds a per-token evidence head trained beside it; it chose evidence
sentences worse than the question-sentence cosine on CLAPNQ, so nothing reads it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path

from qa.pipeline.reading.answer_spans import encode_contexts
from qa.pipeline.search.embedding import ModelNotAvailable, bundled_minilm_path

READER_WEIGHTS = Path(__file__).with_name("models") / "reader.safetensors"
# The settings a site names another file or thread count by (groundedqa_site/settings.py reads
# them; the factory passes the values in): named in the errors, so the user knows what to change.
READER_SETTING = "QA_READER_WEIGHTS"
THREADS_SETTING = "QA_READER_THREADS"
# One thread: a question's read is one small MiniLM pass, and where the cores are shared (the QA
# worker's pool processes, ingestion, other sites' work) two torch threads wait on each other at
# every layer: 0.6-1.0 s wall against ~130 ms on one thread at load ~6 (bench/reader_threads.py).
DEFAULT_THREADS = 1


def reader_text(title: str, sentences: Sequence[str]) -> str:
    """The passage as bench/train_reader.py showed it to the reader in training."""
    return (title + ". " if title else "") + "".join(sentence + " " for sentence in sentences)


class PassageReader:
    """Loads the base MiniLM and the trained deltas once; ``read`` scores (question, passage) pairs."""

    def __init__(
        self,
        weights: Path | str | None = None,
        *,
        base: str | None = None,
        prefix: str = "",
        max_len: int = 384,
        threads: int = DEFAULT_THREADS,
    ) -> None:
        """``prefix``: read the tensors named ``prefix + name`` (a file holding several models, such as
        bench/train_reader.py's per-fold models); the shipped file has none. ``threads``: torch threads
        a read uses (QA_READER_THREADS on a site; 0: leave torch's setting alone)."""
        path = Path(weights) if weights else READER_WEIGHTS
        if not path.is_file():
            raise ModelNotAvailable(READER_SETTING, str(path), "no such file (the reader's .safetensors)")
        try:
            import torch
            from safetensors import safe_open
            from transformers import AutoTokenizer, BertModel
            from transformers.utils import logging as hf_logging

            base_path = base or bundled_minilm_path()
            with safe_open(str(path), framework="pt") as handle:
                meta = handle.metadata() or {}
                deltas = {
                    key.removeprefix(prefix): handle.get_tensor(key).float()
                    for key in handle.keys()
                    if key.startswith(prefix)
                }
            self.tokenizer = AutoTokenizer.from_pretrained(base_path)
            # The base checkpoint has no pooler and the reader needs none: no load report to print.
            verbosity = hf_logging.get_verbosity()
            hf_logging.set_verbosity_error()
            try:
                model = BertModel.from_pretrained(base_path, add_pooling_layer=False)
            finally:
                hf_logging.set_verbosity(verbosity)
        except Exception as exc:  # noqa: BLE001 - any loader failure means "not available"
            raise ModelNotAvailable(READER_SETTING, str(path), exc) from exc
        self.torch = torch
        self.model = _merged(model, deltas, float(meta.get("alpha", 32)) / float(meta.get("rank", 16)))
        self.answer_head = (deltas["answerable.weight"], deltas["answerable.bias"])
        self.max_len = int(meta.get("max_len", max_len))
        self.trained_on = json.loads(meta.get("trained_on", '""'))
        self.threads = threads
        self._lock = threading.Lock()

    def read(self, question: str, passages: Sequence[tuple[str, Sequence[str]]]) -> list[float]:
        """p(answerable) of each (title, sentences) passage for the question."""
        if not passages:
            return []
        torch = self.torch
        texts = [reader_text(title, sentences) for title, sentences in passages]
        encoded = self.tokenizer(
            [question] * len(texts),
            texts,
            truncation="only_second",
            max_length=self.max_len,
            padding=True,
            return_tensors="pt",
        )
        with self._lock, torch.inference_mode(), _torch_threads(torch, self.threads):
            states = self.model(**encoded).last_hidden_state
            logits = (states[:, 0] @ self.answer_head[0].T + self.answer_head[1]).squeeze(-1)
        return [float(p) for p in torch.sigmoid(logits).tolist()]


@contextmanager
def _torch_threads(torch, threads: int):
    """Run the block on ``threads`` intra-op threads (0: as set), then restore the process's setting.

    torch's thread count is per process: an encoder call on another Python thread during a read
    runs with the reader's count. That costs it speed, never correctness, and the QA worker's pool
    processes answer one question at a time."""
    before = torch.get_num_threads()
    if threads <= 0 or threads == before:
        yield
        return
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _merged(model, deltas: dict, scale: float):
    """The base model with W += scale * B A on every adapted linear and the trained layer norms."""
    import torch

    state = model.state_dict()
    with torch.no_grad():
        for key, value in deltas.items():
            if not key.startswith("bert."):
                continue
            name = key.removeprefix("bert.")
            if name.endswith(".lora_a"):
                stem = name.removesuffix(".lora_a")
                update = deltas[f"bert.{stem}.lora_b"] @ value
                state[f"{stem}.weight"] += scale * update
            elif not name.endswith(".lora_b"):
                state[name.replace(".base.", ".")].copy_(value)
    model.load_state_dict(state)
    return model.eval()


class DeferredPassageReader:
    """A ``PassageReader`` loaded on its first read, then kept by this object (not by the process):
    building the models costs nothing until a question is judged, and a site whose answerability
    model does not read passages never loads it. A missing or unreadable file raises
    ``ModelNotAvailable`` naming QA_READER_WEIGHTS at that first read."""

    def __init__(self, weights: Path | str | None = None, *, threads: int = DEFAULT_THREADS) -> None:
        self.weights = Path(weights) if weights else READER_WEIGHTS
        self.threads = threads
        self._reader: PassageReader | None = None
        self._lock = threading.Lock()

    def loaded(self) -> PassageReader:
        with self._lock:
            if self._reader is None:
                self._reader = PassageReader(self.weights, threads=self.threads)
            return self._reader

    def read(self, question: str, passages: Sequence[tuple[str, Sequence[str]]]) -> list[float]:
        return self.loaded().read(question, passages)


SPAN_WEIGHTS = Path(__file__).with_name("models") / "span_reader.safetensors"


class SpanReader:
    """The extractive reader of our own: the passage reader with a start/end head over its tokens and
    a no-answer option at [CLS] (SQuAD 2.0 style), trained by bench/train_span_reader.py.

    Its file (``models/span_reader.safetensors``, 235 kB) holds low-rank deltas on the passage
    reader's top layers and the head; they were trained on top of the shipped passage reader, so
    that reader (``reader_weights``, the shipped file by default, not QA_READER_WEIGHTS) is merged
    first, then the span deltas. The passage reader's own answerable head is not read here: its
    probabilities are unchanged. ``best_spans`` follows the ``protocols.SpanReader`` contract, so
    it fills the slot a user-named model would: QA_SPAN_READER_MODEL=shipped names it (off by
    default: its marks are right on about 6 of 10 answers, docs/readers.md). ``setting`` is what a
    load error names.

    ``guesses`` (the default): it points, it does not judge. Its no-answer option says "no answer"
    to most answerable questions (docs/readers.md), so every context gets its likeliest span, the
    score over the fitted threshold kept (negative where the reader would have said no answer), and
    the answer card shows the mark as the reader's guess. With ``guesses=False`` only spans over the
    threshold are returned, as a SQuAD 2.0 reader's are."""

    def __init__(
        self,
        weights: Path | str | None = None,
        *,
        reader_weights: Path | str | None = None,
        base: str | None = None,
        threads: int = DEFAULT_THREADS,
        max_answer_tokens: int = 30,
        guesses: bool = True,
        setting: str = "span reader",
    ) -> None:
        path = Path(weights) if weights else SPAN_WEIGHTS
        if not path.is_file():
            raise ModelNotAvailable(setting, str(path), "no such file (the span reader's .safetensors)")
        passage = PassageReader(reader_weights, base=base, threads=threads)
        try:
            from safetensors import safe_open

            with safe_open(str(path), framework="pt") as handle:
                meta = handle.metadata() or {}
                deltas = {key: handle.get_tensor(key).float() for key in handle.keys()}
        except Exception as exc:  # noqa: BLE001 - any loader failure means "not available"
            raise ModelNotAvailable(setting, str(path), exc) from exc
        self.torch, self.tokenizer = passage.torch, passage.tokenizer
        self.model = _merged(passage.model, deltas, float(meta.get("alpha", 16)) / float(meta.get("rank", 8)))
        self.head = (deltas["span.weight"], deltas["span.bias"])
        self.max_len = int(meta.get("max_len", 384))
        self.max_answer_tokens = max_answer_tokens
        # Fitted on training questions (bench/train_span_reader.py --fit-threshold): a span must beat
        # no answer by this much, as SQuAD 2.0 readers tune their null threshold.
        self.null_threshold = float(meta.get("null_threshold", 0.0))
        self.trained_on = json.loads(meta.get("trained_on", '""'))
        self.path, self.guesses = path, guesses
        self.name = f"shipped span reader ({path.name})"
        self.threads = threads
        self._lock = threading.Lock()

    def span_scores(self, question: str, contexts: Sequence[str]) -> list[tuple[int, int, float]]:
        """Per context, the best span's character offsets and its score over the no-answer option
        (start+end logits minus [CLS]'s), before the threshold ``best_spans`` applies."""
        if not contexts:
            return []
        torch = self.torch
        encoded = encode_contexts(self.tokenizer, question, contexts, max_length=self.max_len)
        with self._lock, torch.inference_mode(), _torch_threads(torch, self.threads):
            states = self.model(**encoded.inputs).last_hidden_state
            logits = states @ self.head[0].T + self.head[1]
        start_logits, end_logits = logits[..., 0], logits[..., 1]
        n = start_logits.shape[1]
        width = torch.ones(n, n, dtype=torch.bool).triu().tril(self.max_answer_tokens - 1)
        found = []
        for row, in_context in enumerate(encoded.in_context):
            inside = torch.tensor(in_context)
            allowed = width & inside[:, None] & inside[None, :]
            pair = (start_logits[row][:, None] + end_logits[row][None, :]).masked_fill(
                ~allowed, float("-inf")
            )
            best = int(pair.argmax())
            first, last = divmod(best, n)
            margin = float(pair[first, last]) - float(start_logits[row, 0] + end_logits[row, 0])
            found.append((*encoded.characters(row, first, last), round(margin, 4)))
        return found

    def best_spans(self, question: str, contexts: Sequence[str]) -> list[tuple[int, int, float] | None]:
        """The ``protocols.SpanReader`` contract, each score over the fitted threshold: every
        context's span when the reader ``guesses``, else only those scoring above 0."""
        scored = self.span_scores(question, contexts)
        found = [(a, b, round(score - self.null_threshold, 4)) for a, b, score in scored]
        return [span if self.guesses or span[2] > 0 else None for span in found]
