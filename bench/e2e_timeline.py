"""Where a question's time goes, read back from its row: the stages' own work against what lies between.

Each stage records in the run's trace when it started and how long its work
took (``PipelineRun.stage_runs``); the Question row says when the answer was
stored. With the client's own clock at the POST (or the in-process call) and
at the moment it saw the answer, a question's wall time splits into:

- ``to_first_stage``: asked -> retrieval starts its work (the request, the
  commit, the message, the worker taking it, its database connection, the claim);
- ``stage_work``: the four stages' own work, as each timed it;
- ``between_stages``: one stage's work ended -> the next one's started (the
  hand-over: run stored, message sent and taken, claim, run read back, the
  pipeline built again and the ranking looked up);
- ``answer_stored``: the last stage's work ended -> answer rows committed;
- ``client_saw_done``: committed -> the client saw "done" (polling).

All on one machine's wall clock, so the parts add up to the client's seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bench.common import median

SEGMENTS = ("to_first_stage", "stage_work", "between_stages", "answer_stored", "client_saw_done")


@dataclass(frozen=True)
class Asked:
    """One question as a client saw it: its id, and when (epoch seconds) it was asked and seen done."""

    question_id: int
    asked_at: float
    seen_done_at: float

    @property
    def seconds(self) -> float:
        return self.seen_done_at - self.asked_at


def timeline(asked: Asked) -> dict[str, float]:
    """The question's seconds split into ``SEGMENTS`` (plus per-stage work), from its stored trace."""
    from qa.models import Question
    from qa.pipeline.flow.run import load_run

    question = Question.objects.get(pk=asked.question_id)
    runs = load_run(question.trace, question=question.text).stage_runs
    starts = [datetime.fromisoformat(r.started_at).timestamp() for r in runs]
    ends = [start + r.seconds for start, r in zip(starts, runs, strict=True)]
    parts = {
        "to_first_stage": starts[0] - asked.asked_at,
        "stage_work": sum(r.seconds for r in runs),
        "between_stages": sum(nxt - end for end, nxt in zip(ends, starts[1:], strict=False)),
        "answer_stored": question.finished_at.timestamp() - ends[-1],
        "client_saw_done": asked.seen_done_at - question.finished_at.timestamp(),
    }
    for r in runs:
        parts[f"work_{r.stage}"] = parts.get(f"work_{r.stage}", 0.0) + r.seconds
    parts["hand_overs"] = float(len(runs) - 1)
    return parts


def summarise_timelines(asked: list[Asked]) -> dict[str, float]:
    """Median milliseconds of each part over ``asked`` (medians: they need not add up to the p50)."""
    rows = [timeline(a) for a in asked]
    keys = dict.fromkeys(k for row in rows for k in row)
    return {
        (key if key == "hand_overs" else f"{key}_ms"): (
            median([row.get(key, 0.0) for row in rows]) * (1 if key == "hand_overs" else 1000)
        )
        for key in keys
    }
