"""Claim support by an NLI / grounding model a user names (QA_NLI_MODEL).

No registry ships NLI weights (../shared/ENVIRONMENT.md), so this is for users with
a network or a model folder: any transformers sequence classifier that reads a
(premise, hypothesis) pair, such as the sentence-transformers NLI cross-encoders
(``cross-encoder/nli-deberta-v3-small``: contradiction / entailment / neutral) or a
one-logit grounding model. ``TransformersEntailmentModel`` loads one by hub name or
folder; ``NLIVerifier`` labels each answer sentence by the probability that its
cited text entails it, keeping the lexical verifier's veto on numbers.

Nothing loads at import time; the factory (``qa.pipeline.flow.factory``) puts the
verifier in place when ``ModelClients.nli`` is given.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace

from qa.pipeline.checks.verification import LexicalVerifier, Verdict, VerificationResult, Verifier
from qa.pipeline.core.protocols import EntailmentModel
from qa.pipeline.core.types import PARTIAL, SUPPORTED, UNSUPPORTED
from qa.pipeline.drafting.generation import DraftSentence
from qa.pipeline.search.embedding import ModelNotAvailable

NLI_SETTING = "QA_NLI_MODEL"
# Labels that mean "the premise supports the hypothesis", lower-cased, as model configs spell them.
ENTAILMENT_LABELS = ("entailment", "entailed", "entails", "supported", "consistent", "factual")


def entailment_index(id2label: dict[int, str], num_labels: int) -> int | None:
    """Which output is entailment: the label so named, or None for a one-logit model (a sigmoid).

    Raises ValueError when a model with several outputs names none of them so: guessing
    would silently read contradiction as support."""
    if num_labels == 1:
        return None
    for index, label in sorted(id2label.items()):
        if str(label).strip().lower() in ENTAILMENT_LABELS:
            return int(index)
    shown = ", ".join(f"{i}={label}" for i, label in sorted(id2label.items()))
    raise ValueError(f"none of its {num_labels} labels ({shown}) is entailment")


class TransformersEntailmentModel:
    """A sequence classifier over (premise, hypothesis), by hub name or folder.

    A model that cannot be loaded, or whose labels do not say which one is
    entailment, raises ``ModelNotAvailable`` naming ``setting``.
    """

    def __init__(
        self, name: str, *, setting: str = NLI_SETTING, max_length: int = 512, batch_size: int = 16
    ) -> None:
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer

            self.tokenizer = AutoTokenizer.from_pretrained(name)
            self.model = AutoModelForSequenceClassification.from_pretrained(name).eval()
            config = self.model.config
            self.index = entailment_index(dict(config.id2label or {}), int(config.num_labels))
        except Exception as exc:  # noqa: BLE001 - any loader failure means "not available"
            raise ModelNotAvailable(setting, name, exc) from exc
        self.torch = torch
        self.name = name
        self.max_length, self.batch_size = max_length, batch_size
        self._lock = threading.Lock()

    def entailment(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        torch = self.torch
        probabilities: list[float] = []
        for start in range(0, len(pairs), self.batch_size):
            batch = pairs[start : start + self.batch_size]
            encoded = self.tokenizer(
                [premise for premise, _ in batch],
                [hypothesis for _, hypothesis in batch],
                truncation="only_first",  # the claim must stay whole; a long citation may lose its tail
                max_length=self.max_length,
                padding=True,
                return_tensors="pt",
            )
            with self._lock, torch.inference_mode():
                logits = self.model(**encoded).logits.float()
            if self.index is None:
                probabilities += torch.sigmoid(logits[:, 0]).tolist()
            else:
                probabilities += torch.softmax(logits, dim=-1)[:, self.index].tolist()
        return [float(p) for p in probabilities]


class NLIVerifier:
    """Labels each cited sentence by P(its cited text entails it) from ``model``.

    supported at ``supported`` or above, partial at ``partial`` or above,
    otherwise unsupported. The thresholds are the usual 0.5 decision point and
    half of it, not fitted on our data. The lexical verifier still runs first:
    a number missing from the cited text keeps the sentence unsupported however
    sure the model is, as a wrong figure is the worst error a grounded answer
    makes and small NLI models are known to overlook numbers.
    """

    def __init__(
        self,
        model: EntailmentModel,
        *,
        lexical: Verifier | None = None,
        supported: float = 0.5,
        partial: float = 0.25,
    ) -> None:
        self.model = model
        self.lexical = lexical or LexicalVerifier()
        self.supported, self.partial = supported, partial

    def verify(self, question: str, sentences: Sequence[DraftSentence]) -> VerificationResult:
        lexical = self.lexical.verify(question, sentences)
        asked = [i for i, s in enumerate(sentences) if s.citations]
        if not asked:
            return lexical
        pairs = [(self._premise(sentences[i]), sentences[i].text) for i in asked]
        verdicts = list(lexical.verdicts)
        for i, probability in zip(asked, self.model.entailment(pairs), strict=True):
            verdicts[i] = self._verdict(lexical.verdicts[i], round(float(probability), 4))
        return replace(lexical, verdicts=tuple(verdicts))

    @staticmethod
    def _premise(sentence: DraftSentence) -> str:
        titles = " ".join(dict.fromkeys(c.document_title for c in sentence.citations if c.document_title))
        cited = " ".join(c.text for c in sentence.citations)
        return f"{titles}. {cited}" if titles else cited

    def _verdict(self, lexical: Verdict, probability: float) -> Verdict:
        said = f"NLI model {self.model.name}: P(entailed) = {probability:.2f}"
        if lexical.label == UNSUPPORTED and lexical.reason.startswith("numbers not in the cited text"):
            return replace(lexical, reason=f"{lexical.reason} ({said})", entailment=probability)
        if probability >= self.supported:
            label = SUPPORTED
        elif probability >= self.partial:
            label = PARTIAL
        else:
            label = UNSUPPORTED
        return replace(lexical, label=label, reason=said, entailment=probability)
