"""Evaluation metrics as pure functions: given predictions and gold, return numbers.

No Django here (the package must import without it); the Django side gathers
inputs into :class:`GoldCase` and :class:`Prediction` values and stores the
:class:`EvaluationResult`. Modules:

- ``types``: the values, and the evidence key scheme ``"<doc_id>#<label>"``.
- ``metrics``: per-case metric functions.
- ``evaluate``: aggregation over cases, and which cases enter which average.
- ``reference``: analyst-bench questions, gold sentences, the report's outputs
  and its published table.
- ``report``: the fixed-width comparison with the report's table.
"""

from review.evaluation.evaluate import AGGREGATE_KEYS, evaluate, score_case
from review.evaluation.types import (
    EvaluationResult,
    GoldCase,
    Prediction,
    evidence_key,
    split_evidence_key,
)

__all__ = [
    "AGGREGATE_KEYS",
    "EvaluationResult",
    "GoldCase",
    "Prediction",
    "evaluate",
    "evidence_key",
    "score_case",
    "split_evidence_key",
]
