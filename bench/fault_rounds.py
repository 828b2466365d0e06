"""One fault round: questions asked while the killer works, watched, and counted.

``fault_round`` is what ``python -m bench faults`` runs per broker and what the
``faults`` tests run short; ``RoundResult`` is what it counts.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from bench.cluster import Cluster
from bench.fault_killer import Kill, Killer


@dataclass
class RoundResult:
    broker: str
    questions: int
    done: int = 0
    failed: int = 0
    lost: int = 0
    duplicated_answers: int = 0
    failures: list[str] = field(default_factory=list)
    kills: list[Kill] = field(default_factory=list)
    wall_seconds: float = 0.0
    longest_gap_between_answers: float = 0.0
    worker_restarts: int = 0
    # The machine's 1-minute load average, sampled every 5 s while the round ran (this
    # bench's own workers included): the other engineers' load moves the timings.
    load_samples: list[float] = field(default_factory=list)
    # From a whole worker's kill until it said "ready." again (model loaded, consuming).
    restart_seconds: list[float] = field(default_factory=list)
    # The longest time in which no QA worker process started or ended a task (their logs):
    # whether the survivors kept consuming while a worker was dead or restarting.
    longest_pause_between_tasks: float = 0.0
    # Processes SIGKILLed once the first question was asked and left down for the round (the
    # maintenance worker, beat): recovery then rests on the workers' own reclaim timers.
    down: list[str] = field(default_factory=list)

    @property
    def recovery_seconds(self) -> list[float]:
        return [k.recovered_after for k in self.kills if k.recovered_after is not None]

    @property
    def requeue_seconds(self) -> list[float]:
        return [k.requeued_after for k in self.kills if k.requeued_after is not None]

    @property
    def waited_after_requeue(self) -> list[float]:
        """Per kill, from back in the queue to picked up: the wait for a free worker process."""
        return [
            k.recovered_after - k.requeued_after
            for k in self.kills
            if k.recovered_after is not None and k.requeued_after is not None
        ]

    @property
    def unrecovered_kills(self) -> list[Kill]:
        return [k for k in self.kills if k.recovered_after is None]

    def as_dict(self) -> dict:
        data = asdict(self)
        data["recovery_seconds"] = self.recovery_seconds
        data["requeue_seconds"] = self.requeue_seconds
        data["waited_after_requeue_seconds"] = self.waited_after_requeue
        data["load"] = _load_summary(self.load_samples)
        return data


def _load_summary(samples: list[float]) -> dict:
    if not samples:
        return {}
    return {"min": min(samples), "mean": round(sum(samples) / len(samples), 2), "max": max(samples)}


TASK_LINE = re.compile(
    rb"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}): INFO/ForkPoolWorker-\d+\] task (?:started|ended)"
)


def longest_pause_between_tasks(logs: list[Path]) -> float:
    """The longest time in which no process of these workers started or ended a task."""
    stamps = sorted(
        datetime.strptime(match.group(1).decode(), "%Y-%m-%d %H:%M:%S,%f")
        for log in logs
        if log.exists()
        for line in log.read_bytes().splitlines()
        if (match := TASK_LINE.match(line))
    )
    return max(((b - a).total_seconds() for a, b in zip(stamps, stamps[1:], strict=False)), default=0.0)


def watch(
    question_ids: Callable[[], list[int]],
    kills: Callable[[], list[Kill]],
    *,
    timeout: float,
    asking_done: threading.Event,
    load_samples: list[float] | None = None,
) -> dict[int, float]:
    """Sample the questions every 0.2 s until all are asked and ended, or ``timeout``; mark kills recovered.

    It runs while the questions are still being asked: sampling only after the
    last was asked stamped every kill made meanwhile as recovered at that moment
    (with 100 questions, one a second, kills 0-97 s in read as 100-0 s).

    A kill is recovered when its question was picked up again: another worker
    holds it, it moved past the killed stage, or it is done. Returns each
    question's completion time (monotonic).
    """
    from django.db import connection

    from qa.models import Question

    finished: dict[int, float] = {}
    deadline = time.monotonic() + timeout
    next_load = 0.0
    try:
        while time.monotonic() < deadline:
            now = time.monotonic()
            if load_samples is not None and now >= next_load:
                load_samples.append(round(os.getloadavg()[0], 2))
                next_load = now + 5
            done_asking = asking_done.is_set()
            ids = question_ids()
            rows = {
                pk: (status, stage, owner)
                for pk, status, stage, owner in Question.objects.filter(pk__in=ids).values_list(
                    "pk", "status", "stage", "lease_owner"
                )
            }
            for pk, (status, _, _) in rows.items():
                if status in (Question.Status.DONE, Question.Status.FAILED) and pk not in finished:
                    finished[pk] = now
            for kill in kills():
                if kill.recovered_after is not None or kill.question not in rows:
                    continue
                status, stage, owner = rows[kill.question]
                # Queued for or running a later stage ("" is retrieval re-queued).
                moved_on = stage not in ("", kill.stage)
                taken = status == Question.Status.DONE or moved_on or (owner and owner != kill.owner)
                if kill.requeued_after is None and (
                    taken or (status == Question.Status.QUEUED and not owner)
                ):
                    kill.requeued_after = now - kill.at
                if taken:
                    kill.recovered_after = now - kill.at
            if done_asking and len(finished) == len(ids):
                return finished
            time.sleep(0.2)
        return finished
    finally:
        connection.close()


def fault_round(
    *,
    broker: str,
    ask: Callable[[], int],
    questions: int,
    cluster: Cluster,
    kill_interval: tuple[float, float],
    max_kills: int,
    whole_worker_every: int = 0,
    ask_interval: float = 0.2,
    timeout: float = 300,
    seed: int = 0,
    down: tuple[str, ...] = (),
    until_killed: int = 0,
) -> RoundResult:
    """Ask ``questions`` questions (one every ``ask_interval`` s) while the killer works; then count.

    ``down``: cluster processes (``maintenance``, ``beat``) SIGKILLed right after the first
    question is asked and not started again during the round.
    ``until_killed``: on a quiet machine the questions can all end before the killer catches one
    running, so up to this many more are asked, three at a time, until the killer has killed once,
    and the killer takes any running stage meanwhile."""
    from qa.models import Answer, Question

    ids: list[int] = []
    killer = Killer(
        lambda: list(ids),
        interval=kill_interval,
        max_kills=max_kills,
        cluster=cluster,
        whole_worker_every=whole_worker_every,
        seed=seed,
    )
    started = time.monotonic()
    asking_done = threading.Event()
    finished: dict[int, float] = {}
    load_samples: list[float] = []

    def monitor() -> None:
        finished.update(
            watch(
                lambda: list(ids),
                lambda: killer.kills,
                timeout=timeout,
                asking_done=asking_done,
                load_samples=load_samples,
            )
        )

    watcher = threading.Thread(target=monitor, daemon=True)
    killer.start()
    watcher.start()
    try:
        for n in range(questions):
            ids.append(ask())
            if n == 0:
                for name in down:
                    cluster.kill_worker(name)
            time.sleep(ask_interval)
        if until_killed and not killer.kills:
            killer.any_stage.set()
        for n in range(until_killed):
            if killer.kills:
                break
            ids.append(ask())
            if n % 3 != 2:
                continue  # three at a time: the later ones wait in the queue while the first runs
            time.sleep(max(ask_interval, kill_interval[1]))
    finally:
        asking_done.set()
    watcher.join()
    killer.halt.set()
    killer.join(timeout=30)
    # A whole-worker restart still under way finishes before the caller stops the cluster.
    for thread in killer.restarting:
        thread.join(timeout=180)
    result = RoundResult(
        broker=broker, questions=len(ids), kills=killer.kills, load_samples=load_samples, down=list(down)
    )
    result.wall_seconds = time.monotonic() - started
    rows = list(Question.objects.filter(pk__in=ids).values_list("pk", "status", "error"))
    result.done = sum(1 for _, status, _ in rows if status == Question.Status.DONE)
    result.failed = sum(1 for _, status, _ in rows if status == Question.Status.FAILED)
    result.failures = [
        f"question {pk}: {error}" for pk, status, error in rows if status == Question.Status.FAILED
    ]
    result.lost = len(ids) - result.done - result.failed
    result.duplicated_answers = Answer.objects.filter(question_id__in=ids).count() - result.done
    times = sorted(finished.values())
    result.longest_gap_between_answers = max(
        (b - a for a, b in zip([started, *times], times, strict=False)), default=0.0
    )
    result.worker_restarts = cluster.restarts
    result.restart_seconds = killer.restart_seconds
    result.longest_pause_between_tasks = longest_pause_between_tasks(
        [cluster.log(name) for name in cluster.specs]
    )
    return result
