"""Claim support by the LLM judge: "Does the cited passage support this claim?" per answer sentence.

The judge (``llm_judge.SentenceJudge.support``) reads P("yes") for each cited answer sentence
against the text it cites. It takes "supported" away and never gives it: a sentence whose P(yes) is
below ``veto`` is labelled unsupported whatever the verifier under it said, and a sentence the
verifier did not find supported stays as it was (the lexical verifier's veto on a missing figure
must hold however sure a small model is). The judge computes evidence and does not decide the
reply: the support label is what the reply rules and the confidence read afterwards.

A sentence that quotes its citation word for word (what extractive answers are) is not asked.
A judgement that fails (a server without log-probabilities, a reply neither yes nor no) leaves
the verifier's verdict as it was, its reason saying that the judge failed and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from qa.pipeline.checks.llm_judge import SentenceJudge, SentenceReading
from qa.pipeline.checks.verification import Verdict, VerificationResult, Verifier
from qa.pipeline.core.types import UNSUPPORTED
from qa.pipeline.drafting.generation import DraftSentence

# P(yes) under which the judge says "not supported" (bench/llm_judge_sentences.py, docs/readers.md).
DEFAULT_VETO = 0.5


def cited_text(sentence: DraftSentence) -> tuple[str, str]:
    """(the cited sentences' text, their documents' titles) as the judge reads them."""
    titles = "; ".join(dict.fromkeys(c.document_title for c in sentence.citations if c.document_title))
    return " ".join(c.text for c in sentence.citations), titles


def judged_verdict(
    verdict: Verdict, reading: SentenceReading, model: str, *, veto: float = DEFAULT_VETO
) -> Verdict:
    """``verdict`` with the judge's P(yes) (``judge``): unsupported below ``veto``; a failed
    judgement leaves the label, saying so in the reason."""
    if reading.p_yes is None:
        return replace(verdict, reason=f"{verdict.reason} (LLM judge {model} failed: {reading.error})")
    p_yes = round(reading.p_yes, 4)
    said = f"LLM judge {model}: P(supported) = {p_yes:.2f}"
    if p_yes < veto and verdict.label != UNSUPPORTED:
        return replace(
            verdict, label=UNSUPPORTED, reason=f"{said} < {veto:.2f} ({verdict.reason})", judge=p_yes
        )
    return replace(verdict, reason=f"{verdict.reason} ({said})", judge=p_yes)


def quotes_its_citation(sentence: DraftSentence) -> bool:
    """The sentence is one of its cited sentences word for word (an extractive answer's quote): its
    support is not in question, so the judge is not asked (a small model's "no" would only be noise)."""
    said = " ".join(sentence.text.split())
    return any(" ".join(c.text.split()) == said for c in sentence.citations)


class JudgedVerifier:
    """``inner``'s verdicts, each cited sentence's also read by the LLM judge (``judged_verdict``)."""

    def __init__(self, inner: Verifier, judge: SentenceJudge, *, veto: float = DEFAULT_VETO) -> None:
        self.inner, self.judge, self.veto = inner, judge, veto

    def verify(self, question: str, sentences: Sequence[DraftSentence]) -> VerificationResult:
        result = self.inner.verify(question, sentences)
        verdicts = list(result.verdicts)
        for i, sentence in enumerate(sentences):
            if not sentence.citations or quotes_its_citation(sentence):
                continue
            cited, titles = cited_text(sentence)
            reading = self.judge.support(sentence.text, cited, titles)
            verdicts[i] = judged_verdict(verdicts[i], reading, self.judge.name, veto=self.veto)
        return replace(result, verdicts=tuple(verdicts))
