"""The exact answer inside each answer sentence, by an extractive reader a user names
(QA_SPAN_READER_MODEL): a transformers model, or ``shipped`` for the project's own span reader,
which only points (its spans are guesses: ``qa.pipeline.reading.reader.SpanReader``).

Any transformers question-answering model with a no-answer option (SQuAD 2.0 style,
e.g. ``deepset/roberta-base-squad2``) loads by hub name or folder in
``TransformersSpanReader``. ``SpanReadingVerifier`` runs it over the answer's
sentences after verification, so each verdict in the run's trace carries the span
(``verification.AnswerSpan``) that answers the question, or none where the reader
prefers no answer. The span informs; it decides nothing.

Nothing loads at import time; the factory (``qa.pipeline.flow.factory``) wraps the
verifier when ``ModelClients.span_reader`` is given.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from qa.pipeline.checks.verification import AnswerSpan, VerificationResult, Verifier
from qa.pipeline.core.protocols import SpanReader
from qa.pipeline.drafting.generation import DraftSentence
from qa.pipeline.reading.answer_spans import encode_contexts
from qa.pipeline.search.embedding import ModelNotAvailable

if TYPE_CHECKING:
    from qa.pipeline.flow.run import PipelineRun

SPAN_READER_SETTING = "QA_SPAN_READER_MODEL"
# The name that setting gives the project's own span reader (qa.pipeline.reading.reader.SpanReader,
# its file in the repository): it points at the likeliest words and its spans are shown as guesses.
OUR_SPAN_READER = "shipped"


def best_span(
    start_logits: Sequence[float],
    end_logits: Sequence[float],
    in_context: Sequence[bool],
    *,
    max_tokens: int = 30,
) -> tuple[int, int, float] | None:
    """The (first token, last token, score) maximising start+end logit among context tokens, with
    the score taken over the no-answer logit (the first token's, as SQuAD 2.0 readers are
    trained); None when no answer scores higher than every span."""
    null = float(start_logits[0]) + float(end_logits[0])
    positions = [i for i, inside in enumerate(in_context) if inside]
    best: tuple[int, int, float] | None = None
    for a, first in enumerate(positions):
        for last in positions[a:]:
            if last - first + 1 > max_tokens:
                break
            score = float(start_logits[first]) + float(end_logits[last])
            if best is None or score > best[2]:
                best = (first, last, score)
    if best is None or best[2] <= null:
        return None
    return best[0], best[1], best[2] - null


class TransformersSpanReader:
    """An extractive QA model (``AutoModelForQuestionAnswering``), by hub name or folder.

    Needs a fast tokenizer (character offsets). A model that cannot be loaded
    raises ``ModelNotAvailable`` naming ``setting``.
    """

    def __init__(
        self,
        name: str,
        *,
        setting: str = SPAN_READER_SETTING,
        max_length: int = 384,
        max_answer_tokens: int = 30,
    ) -> None:
        try:
            import torch
            from transformers import AutoModelForQuestionAnswering, AutoTokenizer

            self.tokenizer = AutoTokenizer.from_pretrained(name)
            if not self.tokenizer.is_fast:
                raise ValueError("its tokenizer has no fast version, so spans cannot be mapped to characters")
            self.model = AutoModelForQuestionAnswering.from_pretrained(name).eval()
        except Exception as exc:  # noqa: BLE001 - any loader failure means "not available"
            raise ModelNotAvailable(setting, name, exc) from exc
        self.torch = torch
        self.name = name
        self.guesses = False  # a SQuAD 2.0 reader judges: no span where it prefers no answer
        self.max_length, self.max_answer_tokens = max_length, max_answer_tokens
        self._lock = threading.Lock()

    def best_spans(self, question: str, contexts: Sequence[str]) -> list[tuple[int, int, float] | None]:
        if not contexts:
            return []
        encoded = encode_contexts(self.tokenizer, question, contexts, max_length=self.max_length)
        with self._lock, self.torch.inference_mode():
            output = self.model(**encoded.inputs)
        found: list[tuple[int, int, float] | None] = []
        for row, in_context in enumerate(encoded.in_context):
            span = best_span(
                output.start_logits[row].tolist(),
                output.end_logits[row].tolist(),
                in_context,
                max_tokens=self.max_answer_tokens,
            )
            if span is None:
                found.append(None)
                continue
            first, last, score = span
            found.append((*encoded.characters(row, first, last), round(score, 4)))
        return found


class SpanReadingVerifier:
    """``inner``'s verdicts, each with the reader's span inside its answer sentence."""

    def __init__(self, inner: Verifier, reader: SpanReader) -> None:
        self.inner, self.reader = inner, reader

    def verify(self, question: str, sentences: Sequence[DraftSentence]) -> VerificationResult:
        result = self.inner.verify(question, sentences)
        texts = [s.text for s in sentences]
        spans = self.reader.best_spans(question, texts) if texts else []
        verdicts = list(result.verdicts)
        for i, (text, found) in enumerate(zip(texts, spans, strict=True)):
            if found is not None and found[0] < found[1]:
                start, end, score = found
                span = AnswerSpan(start, end, text[start:end], score, guess=self.reader.guesses)
                verdicts[i] = replace(verdicts[i], span=span)
        return replace(result, verdicts=tuple(verdicts))


def spans_by_sentence(run: PipelineRun) -> dict[str, AnswerSpan]:
    """The reader's span of each answer sentence of the run, by the sentence's text (the stored
    answer sentences are its attempts' sentences, word for word; a later attempt's span wins); empty
    for runs without spans."""
    spans: dict[str, AnswerSpan] = {}
    for attempt in run.answering.attempts if run.answering is not None else ():
        verdicts = attempt.verification.verdicts if attempt.verification else ()
        for sentence, verdict in zip(
            attempt.sentences or attempt.generation.sentences, verdicts, strict=False
        ):
            if verdict.span is not None:
                spans[sentence.text] = verdict.span
    return spans
