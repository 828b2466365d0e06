"""Issue 31's check on `make run` itself: questions answered while random Celery processes die.

``python -m bench launcher_kills [--runs N] [--questions 12]``

Each run starts the real launcher (``python -m groundedqa_site.launcher``) on a
spare port with a fresh var folder (its own embedded PostgreSQL and broker
folder, the three-document demo sample), asks ``--questions`` questions over
the REST API, and SIGKILLs three processes chosen at random among the
non-ingestion Celery processes: the QA worker's pool processes, the
maintenance worker and beat, at random moments of the first 20 s. It counts the
questions that end ``done`` within 240 s of the first one asked, the restarts
the launcher printed, and whether SIGTERM then stops the launcher cleanly.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from bench.cluster import REPO, free_port
from bench.faults import DEMO_QUESTIONS

KILLS = 3
KILL_WINDOW = 20.0
ANSWER_WITHIN = 240.0

SETUP = """
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from documents.models import Corpus
admin = get_user_model().objects.get(username="admin")
print(Token.objects.get_or_create(user=admin)[0].key, Corpus.objects.get(name="demo").pk)
"""


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def targets(launcher_pid: int) -> dict[str, int]:
    """The non-ingestion Celery processes now: "qa child <pid>", "maintenance", "beat"."""
    found: dict[str, int] = {}
    for pid in _children(launcher_pid):
        line = _cmdline(pid)
        if "-n qa@" in line:
            for child in _children(pid):
                found[f"qa pool process {child}"] = child
        elif "-n maintenance@" in line:
            found["maintenance worker"] = pid
        elif " beat " in line:
            found["beat"] = pid
    return found


def one_run(seed: int, questions: int, workdir: Path) -> dict:
    rng = random.Random(seed)
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "GROUNDEDQA_DATABASE_NAME", "CELERY_BROKER_URL", "CELERY_BROKER_DIR")
    }
    env.update(
        GROUNDEDQA_VAR_DIR=str(workdir),
        GROUNDEDQA_ADDRESS=f"127.0.0.1:{port}",
        GROUNDEDQA_SHARED_DATA=str(workdir / "no-shared-data"),  # the small demo sample
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        WEB_CONCURRENCY="1",
    )
    output = workdir / "launcher.out"
    with open(output, "wb") as out:
        launcher = subprocess.Popen(
            [sys.executable, "-m", "groundedqa_site.launcher"],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    result: dict = {"seed": seed, "questions": questions}
    try:
        deadline = time.monotonic() + 900
        while b"Ready:" not in output.read_bytes():
            if launcher.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the launcher did not get ready:\n{output.read_text()[-3000:]}")
            time.sleep(1)
        setup = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", SETUP],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        token, corpus = setup.stdout.split()[-2:]
        api = httpx.Client(
            base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Token {token}"}, timeout=60
        )
        kills: list[str] = []

        def killer() -> None:
            moments = sorted(rng.uniform(0, KILL_WINDOW) for _ in range(KILLS))
            began = time.monotonic()
            for moment in moments:
                time.sleep(max(0.0, began + moment - time.monotonic()))
                choices = targets(launcher.pid)
                if not choices:
                    continue
                name = rng.choice(sorted(choices))
                try:
                    os.kill(choices[name], signal.SIGKILL)
                    kills.append(f"{time.monotonic() - began:.1f} s: {name}")
                except ProcessLookupError:
                    pass

        started = time.monotonic()
        thread = threading.Thread(target=killer, daemon=True)
        thread.start()
        urls = []
        for n in range(questions):
            text = DEMO_QUESTIONS[n % len(DEMO_QUESTIONS)]
            asked = api.post("/api/questions/", json={"corpus": corpus, "question": text})
            asked.raise_for_status()
            urls.append(asked.json()["status_url"])
            time.sleep(0.5)
        statuses: dict[str, str] = dict.fromkeys(urls, "unknown")
        poll_errors = 0
        while time.monotonic() - started < ANSWER_WITHIN:
            for url in urls:
                try:
                    statuses[url] = api.get(url).json()["status"]
                except httpx.TransportError:
                    # gunicorn closes an idle keep-alive connection after 2 s, the poll's own
                    # period: a poll can reuse one the server is closing. The next poll asks again.
                    poll_errors += 1
            if all(s in ("done", "failed") for s in statuses.values()):
                break
            time.sleep(2)
        thread.join(timeout=KILL_WINDOW)
        result.update(
            done=sum(s == "done" for s in statuses.values()),
            failed=sum(s == "failed" for s in statuses.values()),
            unfinished=sum(s not in ("done", "failed") for s in statuses.values()),
            # Seen by a poll every 2 s; None when some were still unfinished at ANSWER_WITHIN.
            all_finished_after=(
                round(time.monotonic() - started, 1)
                if all(s in ("done", "failed") for s in statuses.values())
                else None
            ),
            kills=kills,
            poll_errors=poll_errors,
        )
    finally:
        stop_began = time.monotonic()
        launcher.send_signal(signal.SIGTERM)
        try:
            result["launcher_exit"] = launcher.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(launcher.pid, signal.SIGKILL)
            result["launcher_exit"] = "killed after 60 s"
        result["stop_seconds"] = round(time.monotonic() - stop_began, 1)
        text = output.read_text(errors="replace")
        result["restarts"] = [line for line in text.splitlines() if "started again" in line]
    return result


def run(args) -> None:
    from bench.common import BENCH_VAR_DIR, log, write_result

    runs = []
    for seed in range(args.repeat or 1):
        BENCH_VAR_DIR.mkdir(parents=True, exist_ok=True)
        workdir = Path(tempfile.mkdtemp(prefix="launcher-kills-", dir=BENCH_VAR_DIR))
        log(f"run {seed + 1}: launcher, workers and logs in {workdir}")
        result = one_run(seed, args.questions or 12, workdir)
        log(
            f"run {seed + 1}: {result['done']} of {result['questions']} done ({result['failed']} failed, "
            f"{result['unfinished']} unfinished) all finished after {result['all_finished_after']} s; "
            f"kills {result['kills']}; "
            f"{len(result['restarts'])} restart(s); launcher exit {result['launcher_exit']} "
            f"in {result['stop_seconds']} s"
        )
        runs.append(result)
    write_result("launcher_kills", {"answer_within_seconds": ANSWER_WITHIN, "runs": runs}, quick=args.quick)
