"""Fault injection: questions answered while Celery worker processes are SIGKILLed at random points.

``python -m bench faults [--questions N] [--brokers filesystem,redis]``

Real parts only: `celery worker` processes (prefork, as ``make run`` starts
them) and `celery beat` (the reaper) on the real broker (the file-system
broker in a private folder, or a `redis-server` started on a spare port) and
the benchmark's own PostgreSQL. Questions go in through ``qa.services.
question_ask``, as the API sends them. A killer thread picks a question whose
stage is running (and that no kill has hit before, the other questions a
whole-worker kill took down included), waits a random fraction
of a second (a random point of the stage) and SIGKILLs the worker process that
holds its lease (the owner token names host and pid); now and then it kills a
whole worker (main process and children) and starts it again. A monitor thread
samples the questions every 0.2 s from the first question on.

Measured per round: questions lost (not done at the end), duplicated answers,
and for every kill the time until the question was picked up again. The
processes themselves are started by ``bench.cluster``; tests/qa/test_faults.py
runs short rounds.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from bench.cluster import (
    REPO,
    Cluster,
    RedisServer,
    WorkerSpec,
    cluster_environment,
    lease_owner_pid,
    use_broker,
)

# --- one round -----------------------------------------------------------------


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
            # One kill per question: a stage killed JOB_MAX_ATTEMPTS times ends failed by design
            # (a job that keeps killing its worker), and a re-queued stage runs next, so a killer
            # free to choose again kept hitting the same few questions (2 of 100 failed that way).
            running = list(
                Question.objects.filter(
                    pk__in=self.question_ids(), status=Question.Status.RUNNING, stage=stage
                )
                .exclude(lease_owner="")
                .exclude(pk__in=[k.question for k in self.kills] + sorted(self.collateral))
                .values_list("pk", "lease_owner")
            )
            if running:
                break
            time.sleep(0.02)
        else:
            return
        pk, owner = self.random.choice(running)
        if stage in ("retrieval", "generation"):
            time.sleep(self.random.uniform(0, 0.3))  # somewhere inside the stage
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
    running, so up to this many more are asked, one at a time, until the killer has killed once."""
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
        for _ in range(until_killed):
            if killer.kills:
                break
            ids.append(ask())
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


DEMO_QUESTIONS = [
    "What is the capital of Westmere?",
    "How many containers did the Port of Westmere handle in 2024?",
    "How many residents were evacuated after the floods?",
    "When did Westmere gain independence?",
    "How many staff did the port authority employ?",
]


def _bench_corpus():
    """The three demo documents in a corpus of the benchmark database, embedded in this process once."""
    from django.contrib.auth import get_user_model

    from documents import services
    from documents.embedding import get_embedder
    from documents.models import Corpus, Document, Team

    team, _ = Team.objects.get_or_create(name="bench-faults")
    corpus = Corpus.objects.filter(name="bench-faults").first() or services.corpus_create(
        name="bench-faults", team=team
    )
    for path in sorted((REPO / "documents" / "demo_corpus").glob("*.txt")):
        for parsed in services.parse_upload(filename=path.name, data=path.read_bytes()):
            submitted = services.document_stage(
                corpus=corpus, parsed=parsed, filename=path.name, enqueue=False
            )
            if submitted.changed:
                document = Document.objects.get(pk=submitted.document.pk)
                services.document_embed(
                    document_id=document.pk, expected_hash=document.pending_hash, embedder=get_embedder()
                )
    user, _ = get_user_model().objects.get_or_create(username="bench-faults")
    # A member as members were before roles (documents migration team_membership_roles).
    team.members.add(user, through_defaults={"role": "reviewer"})
    return corpus, user


def _round(args, broker: str, corpus, user, workdir: Path) -> RoundResult:
    from django.conf import settings
    from django.db import connection

    from groundedqa_site.broker import folder_options
    from qa import services

    asked = []

    def ask() -> int:
        text = DEMO_QUESTIONS[len(asked) % len(DEMO_QUESTIONS)]
        asked.append(text)
        return services.question_ask(user=user, corpus=corpus, text=text, preset="default").pk

    lease, heartbeat, reaper = (
        settings.JOB_LEASE_SECONDS,
        settings.JOB_HEARTBEAT_SECONDS,
        settings.JOB_REAPER_INTERVAL_SECONDS,
    )
    workers = [
        WorkerSpec("qa1", "requeued,retrieval,generation,citation,verification,default", 2),
        WorkerSpec("qa2", "requeued,retrieval,generation,citation,verification,default", 2),
    ]
    questions = args.questions or (20 if args.quick else 100)
    options = dict(
        broker=broker,
        ask=ask,
        questions=questions,
        kill_interval=(2.0, 5.0),
        max_kills=max(questions // 5, 2),
        whole_worker_every=5,
        ask_interval=1.0,
        timeout=1800,  # from the first question on, asking included
        down=tuple(name for name in (args.down or "").split(",") if name),
    )
    database = connection.settings_dict["NAME"]
    if broker == "filesystem":
        folder = workdir / "broker"
        env = cluster_environment(
            database=database,
            broker_url="filesystem://",
            broker_dir=folder,
            lease=lease,
            heartbeat=heartbeat,
            reaper=reaper,
        )
        with use_broker("filesystem://", folder_options(folder), "groundedqa_site.broker:Transport"):
            with Cluster(workdir, env, workers) as cluster:
                return fault_round(cluster=cluster, **options)
    with RedisServer() as redis, use_broker(redis.url):
        env = cluster_environment(
            database=database,
            broker_url=redis.url,
            broker_dir=None,
            lease=lease,
            heartbeat=heartbeat,
            reaper=reaper,
        )
        with Cluster(workdir, env, workers) as cluster:
            return fault_round(cluster=cluster, **options)


def run(args) -> None:
    from bench.common import BENCH_VAR_DIR, log, print_table, setup_django, write_result

    setup_django()
    from django.conf import settings

    if args.ingestion:
        from bench import fault_ingestion

        fault_ingestion.run(args)
        return
    if args.services:
        from bench import fault_services

        fault_services.run(args)
        return
    corpus, user = _bench_corpus()
    brokers = [b for b in (args.brokers or "filesystem,redis").split(",") if b]
    results = []
    for broker in brokers:
        if broker == "redis" and shutil.which("redis-server") is None:
            log("redis-server is not installed; the Redis round is skipped")
            continue
        BENCH_VAR_DIR.mkdir(parents=True, exist_ok=True)
        workdir = Path(tempfile.mkdtemp(prefix=f"faults-{broker}-", dir=BENCH_VAR_DIR))
        log(f"{broker}: workers, beat and logs in {workdir}")
        results.append(_round(args, broker, corpus, user, workdir))
    rows = []
    for r in results:
        recovery, requeue = sorted(r.recovery_seconds), sorted(r.requeue_seconds)
        load = _load_summary(r.load_samples)
        rows.append(
            [
                r.broker + (f" ({' and '.join(r.down)} killed)" if r.down else ""),
                r.questions,
                r.done,
                r.failed,
                r.lost,
                r.duplicated_answers,
                len(r.kills),
                sum(1 for k in r.kills if k.whole_worker),
                f"{max(requeue):.1f}" if requeue else "-",
                f"{recovery[len(recovery) // 2]:.1f}" if recovery else "-",
                f"{max(recovery):.1f}" if recovery else "-",
                f"{max(r.waited_after_requeue):.1f}" if r.waited_after_requeue else "-",
                sum(1 for seconds in recovery if seconds <= 30),
                len(r.unrecovered_kills),
                f"{r.longest_gap_between_answers:.1f}",
                f"{r.longest_pause_between_tasks:.1f}",
                f"{max(r.restart_seconds):.0f}" if r.restart_seconds else "-",
                f"{r.wall_seconds:.0f}",
                f"{load['min']:.0f}-{load['max']:.0f}" if load else "-",
            ]
        )
    print_table(
        f"Questions with worker processes SIGKILLed at random points of their stages "
        f"(lease {settings.JOB_LEASE_SECONDS} s, heartbeat {settings.JOB_HEARTBEAT_SECONDS} s, "
        f"reaper every {settings.JOB_REAPER_INTERVAL_SECONDS} s)",
        [
            "broker",
            "asked",
            "done",
            "failed",
            "lost",
            "dup. answers",
            "kills",
            "whole workers",
            "requeued max s",
            "picked up p50 s",
            "picked up max s",
            "waited after requeue max s",
            "within 30 s",
            "never picked up",
            "longest gap s",
            "longest pause in tasks s",
            "worker restart max s",
            "wall s",
            "load",
        ],
        rows,
    )
    down = "".join(f"-{name}" for name in (args.down or "").split(",") if name)
    write_result(
        f"faults-down{down}" if down else "faults",
        {
            "lease_seconds": settings.JOB_LEASE_SECONDS,
            "heartbeat_seconds": settings.JOB_HEARTBEAT_SECONDS,
            "reaper_interval_seconds": settings.JOB_REAPER_INTERVAL_SECONDS,
            "worker_reclaim_seconds": settings.JOB_WORKER_RECLAIM_SECONDS,
            "rounds": [r.as_dict() for r in results],
        },
        quick=args.quick,
    )
