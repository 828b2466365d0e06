"""Writes of the qa app: keyword-only functions, one transaction each, validation first.

- ``asking``: validate a question and store it as a job, queued (``question_ask``)
  or answered in this process (``answer_now``, ``answer_now_with_run``).
- ``stage_jobs``: the pipeline's stages as jobs, the one runner's stored executor
  (``StoredStages``): each stage claims the question under a lease, hands its run on
  to the next stage, and the last stores the answer; ``questions_reap`` re-queues
  stages whose worker died.
- ``decomposition``: a question split into parts (the agentic preset), each part a
  question of its own; ``question_run_here`` runs any stored question in this process.
- ``team_presets``: a team's saved configurations.

The pipeline itself (qa.pipeline) knows nothing of Django; these modules feed
it the corpus through qa.adapters and store what it returns.
"""

from qa.services.asking import MAX_QUESTION_CHARS, answer_now, answer_now_with_run, question_ask
from qa.services.stage_jobs import (
    question_answer_stages,
    question_retrieve,
    question_stage,
    question_stages_run,
    questions_reap,
)
from qa.services.team_presets import team_preset_create, team_preset_delete

__all__ = [
    "MAX_QUESTION_CHARS",
    "answer_now",
    "answer_now_with_run",
    "question_answer_stages",
    "question_ask",
    "question_retrieve",
    "question_stage",
    "question_stages_run",
    "questions_reap",
    "team_preset_create",
    "team_preset_delete",
]
