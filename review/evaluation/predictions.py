"""A pipeline run's answer as the metrics' ``Prediction``: the one conversion between the two.

Evaluation in the database (``review.services.evaluation``) and the fast
in-memory loop (``bench/answer_quality.py``) both score through here, so the
two cannot drift apart.
"""

from __future__ import annotations

from qa.pipeline.core.types import SUPPORTED
from qa.pipeline.flow.run import PipelineRun
from review.evaluation.metrics import unique_in_order
from review.evaluation.types import Prediction, evidence_key


def prediction_from_run(case_id: str, run: PipelineRun) -> Prediction | None:
    """What the metrics read of a run; None when the run has no answer (it failed first)."""
    answer = run.answer
    if answer is None:
        return None
    # Keyed by (document, label), first citation first: the gold evidence is named that way.
    cited: dict[str, str] = {}
    for sentence in answer.cited_sentences:
        cited.setdefault(evidence_key(sentence.document_id, sentence.label), sentence.text)
    support = None
    if answer.verified and answer.sentences:
        support = sum(s.support == SUPPORTED for s in answer.sentences) / len(answer.sentences)
    return Prediction(
        case_id=case_id,
        answer=answer.text,
        refused=answer.refused,
        retrieved_documents=tuple(unique_in_order(answer.retrieved_documents)),
        cited_evidence=tuple(cited),
        cited_texts=tuple(cited.values()),
        support_score=support,
        confidence=answer.confidence,
        stage_latency=dict(run.timings),
        kind=answer.kind or ("unanswerable" if answer.refused else "answerable"),
    )
