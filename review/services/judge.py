"""The LLM that scores answers 1-5 against a case's rubric, when one is configured.

No LLM configured (QA_LLM_PROVIDER=none) means no judge: answer_score and
combined stay None. They are never estimated from other metrics.
"""

from __future__ import annotations

import logging

from qa import clients
from qa.pipeline.core.llm import LLMError
from qa.pipeline.core.protocols import LLM
from qa.pipeline.drafting.prompts import judge_answer

logger = logging.getLogger(__name__)


def configured_judge() -> LLM | None:
    """The site's LLM (qa.clients, built from the QA_LLM_* settings); None without a provider."""
    return clients.get_llm_or_none()


def judge_score(
    judge: LLM, *, question: str, answer: str, reference: str, rubric
) -> tuple[float | None, str]:
    """(score 1-5 or None, problem); an unreachable judge leaves the case unjudged, not zero."""
    try:
        score = judge_answer(judge, question, answer, reference, rubric)
    except LLMError as exc:
        logger.warning("judge failed: %s", exc)
        return None, f"judge failed: {exc}"
    if score is None:
        return None, "the judge's reply held no 1-5 score"
    return float(score), ""
