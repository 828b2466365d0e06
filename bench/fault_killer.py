"""The fault rounds' killer: SIGKILLs the worker process that holds a running question's lease.

Used by ``bench.fault_rounds.fault_round`` (``python -m bench faults``) and the
``faults`` tests; the processes it kills are started by ``bench.cluster``.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.cluster import Cluster, lease_owner_pid


@dataclass
class Kill:
    at: float
    pid: int
    question: int
    stage: str
    owner: str
    whole_worker: str = ""
    requeued_after: float | None = None  # back in the queue (or already taken again)
    recovered_after: float | None = None  # picked up again by a worker, or done


class Killer(threading.Thread):
    """SIGKILLs the process holding a random running question's lease, every ``interval`` seconds."""

    def __init__(
        self,
        question_ids: Callable[[], list[int]],
        *,
        interval: tuple[float, float],
        max_kills: int,
        cluster: Cluster | None = None,
        whole_worker_every: int = 0,
        seed: int = 0,
    ):
        super().__init__(daemon=True)
        self.question_ids, self.interval, self.max_kills = question_ids, interval, max_kills
        self.cluster, self.whole_worker_every = cluster, whole_worker_every
        self.random = random.Random(seed)
        self.kills: list[Kill] = []
        self.halt = threading.Event()
        # Citation and verification take milliseconds on the default preset: a kill lands in
        # them only when the killer's poll catches one, so tries cycle through the stages.
        self.stages = ["retrieval", "generation", "citation", "verification"]
        self.tries = 0
        # Set when the round has asked its questions and still waits for a first kill: any
        # running stage will do then (a fast machine runs citation and verification between polls).
        self.any_stage = threading.Event()
        self.restarting: list[threading.Thread] = []
        self.restart_seconds: list[float] = []
        # Questions a whole-worker kill took down beside the one it was aimed at: a re-queued
        # stage runs first, so it was often running again when the next kill came, and three
        # deaths in a row end it failed by design (JOB_MAX_ATTEMPTS; 1 of 100 on Redis).
        self.collateral: set[int] = set()

    def run(self) -> None:
        from django.db import connection

        try:
            while not self.halt.is_set() and len(self.kills) < self.max_kills:
                if self.halt.wait(self.random.uniform(*self.interval)):
                    return
                self._kill_one()
        finally:
            connection.close()

    def _kill_one(self) -> None:
        from qa.models import Question

        stage = self.stages[self.tries % len(self.stages)]
        self.tries += 1
        deadline = time.monotonic() + (10 if stage in ("retrieval", "generation") else 3)
        while not self.halt.is_set() and time.monotonic() < deadline:
            stages = self.stages if self.any_stage.is_set() else [stage]
            # One kill per question: a stage killed JOB_MAX_ATTEMPTS times ends failed by design
            # (a job that keeps killing its worker), and a re-queued stage runs next, so a killer
            # free to choose again kept hitting the same few questions (2 of 100 failed that way).
            running = list(
                Question.objects.filter(
                    pk__in=self.question_ids(), status=Question.Status.RUNNING, stage__in=stages
                )
                .exclude(lease_owner="")
                .exclude(pk__in=[k.question for k in self.kills] + sorted(self.collateral))
                .values_list("pk", "lease_owner", "stage")
            )
            if running:
                break
            time.sleep(0.02)
        else:
            return
        pk, owner, stage = self.random.choice(running)
        if stage in ("retrieval", "generation") and not self.any_stage.is_set():
            # Somewhere inside the stage; when still waiting for a first kill, at once (a stage of a
            # fast machine is over before the longest of these waits).
            time.sleep(self.random.uniform(0, 0.3))
        if not Question.objects.filter(pk=pk, lease_owner=owner).exists():
            return
        pid = lease_owner_pid(owner)
        if pid is None:
            return
        whole = ""
        if (
            self.cluster is not None
            and self.whole_worker_every
            and (len(self.kills) + 1) % self.whole_worker_every == 0
        ):
            whole = self._worker_of(pid)
            siblings = self._questions_on(whole, besides=pk) if whole else set()
            if siblings & (self.collateral | {k.question for k in self.kills}):
                whole = ""  # each question hit at most once: this worker holds one hit before
            else:
                self.collateral |= siblings
        if whole:
            self.cluster.kill_worker(whole)
        else:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                return
        self.kills.append(Kill(time.monotonic(), pid, pk, stage, owner, whole_worker=whole))
        if whole:
            thread = threading.Thread(target=self._restart_later, args=(whole,), daemon=True)
            self.restarting.append(thread)
            thread.start()

    def _worker_of(self, child_pid: int) -> str:
        try:
            parent = int(Path(f"/proc/{child_pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return ""
        for name, process in self.cluster.processes.items():
            if process.pid == parent and name in self.cluster.specs:
                return name
        return ""

    def _questions_on(self, worker: str, *, besides: int) -> set[int]:
        """The other questions whose running stage a process of ``worker`` holds."""
        from qa.models import Question

        running = Question.objects.filter(status=Question.Status.RUNNING).exclude(pk=besides)
        return {
            pk
            for pk, owner in running.exclude(lease_owner="").values_list("pk", "lease_owner")
            if (pid := lease_owner_pid(owner)) is not None and self._worker_of(pid) == worker
        }

    def _restart_later(self, name: str) -> None:
        killed = time.monotonic()
        time.sleep(2)
        self.cluster.restart(name)
        self.restart_seconds.append(time.monotonic() - killed)
