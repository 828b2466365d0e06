import logging
import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "groundedqa_site.settings")

app = Celery("groundedqa")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The reaper lives with the site, not in an app.
app.autodiscover_tasks(["groundedqa_site"])


@signals.worker_init.connect
def start_embedded_database(**kwargs):
    """A worker is an entry point: it starts the embedded server (importing this app must not)."""
    from groundedqa_site.embedded_db import start_configured_server

    start_configured_server()


@signals.task_prerun.connect
@signals.task_postrun.connect
def drop_broken_or_old_connections(**_):
    """What Django does around each request, around each task: close the connection if it broke
    (a restarted database) or is older than CONN_MAX_AGE; otherwise the task reuses it (settings,
    CELERY_DB_REUSE_MAX). The first query after this checks the connection (CONN_HEALTH_CHECKS)."""
    from django.db import close_old_connections

    close_old_connections()


@signals.task_prerun.connect
def bind_task_to_logs(task_id=None, task=None, args=(), kwargs=None, **_):
    """Every log line of a task names its task id, stage and the ids its message carries."""
    from groundedqa_site import logs

    logs.clear()
    logs.bind(task_id=task_id, **logs.task_fields(task, tuple(args or ()), dict(kwargs or {})))
    logging.getLogger("groundedqa.tasks").info("task started")


@signals.task_postrun.connect
def unbind_task_from_logs(state=None, **_):
    from groundedqa_site import logs

    logging.getLogger("groundedqa.tasks").info("task ended: %s", state or "unknown")
    logs.clear()


@signals.worker_init.connect
def remember_consumed_queues(sender=None, **kwargs):
    """Before the pool forks: which queues this worker serves, so a task can tell whether the stage
    after it may run in the same process (groundedqa_site.jobs.runs_here)."""
    from groundedqa_site import jobs

    jobs.serve_queues(consumed_queues(sender))


@signals.worker_ready.connect
def start_lease_reclaimer(sender=None, **kwargs):
    """The worker reclaims expired leases of its queues on a timer of its own, so jobs of a dead
    worker come back even when beat or the maintenance worker is dead too
    (groundedqa_site/recovery.py).

    In the worker's main process, once it is ready, not in its pool processes: with a timer in
    each pool process, `make run`'s QA worker stopped taking messages after two of its pool
    processes were killed seconds apart (bench launcher_kills seed 0: 3 runs of 3 stopped; 1 run
    without any worker timer and 2 with it here answered all; the stop was later traced to a pool
    process killed holding billiard's job lock, which pool_watchdog.py handles, and the timer stayed
    here). The thread opens a database
    connection per pass and closes it, so a pool process forked meanwhile inherits none it could
    use (psycopg closes only its own process's)."""
    from groundedqa_site import jobs, pool_watchdog, recovery

    if pool_watchdog.runs_blocking_pool(sender):
        pool_watchdog.watch()  # its pool can get stuck on a dead process's lock (pool_watchdog.py)
    node = getattr(sender, "hostname", "") or ""
    recovery.start_worker_reclaimer(queues=jobs.serving_queues(), node=str(node))


# Queues whose tasks encode text: a worker consuming any of them loads the encoder up front.
ENCODING_QUEUES = {"requeued", "retrieval", "generation", "citation", "verification", "evaluation"} | {
    "ingestion",
    "ingestion-bulk",
}


# Queues of bulk work (imports of many documents) that may wait for interactive work.
BULK_QUEUES = {"ingestion-bulk"}


def consumed_queues(worker) -> set[str]:
    """The queues a starting worker consumes (``-Q``); empty when unknown."""
    return set(worker.app.amqp.queues.consume_from or {}) if worker is not None else set()


@signals.worker_init.connect
def lower_bulk_worker_priority(sender=None, **kwargs):
    """A worker consuming only bulk queues runs at a lower CPU priority (BULK_WORKER_NICE).

    Set in the main process before the pool forks, so every pool process, and
    one started to replace a dead one, inherits it. Uploads and questions run
    in other workers at normal priority and take the cores first; the import
    still gets whatever they leave, so it keeps making progress. A worker that
    also consumes an interactive queue is left alone: lowering it would slow
    that queue's work too.
    """
    from django.conf import settings

    consumed = consumed_queues(sender)
    if settings.BULK_WORKER_NICE and consumed and consumed <= BULK_QUEUES:
        niceness = os.nice(settings.BULK_WORKER_NICE)
        logging.getLogger("groundedqa.tasks").info("bulk worker: CPU priority lowered to nice %s", niceness)


@signals.worker_init.connect
def preload_models(sender=None, **kwargs):
    """Load the encoder in the worker's main process, before the pool forks.

    Pool processes are forked from it, so each starts with the model in memory
    (shared copy-on-write); a process that replaces one killed mid-task takes
    the re-queued job at once. Loading only builds the model: no inference
    runs here, so no thread pool exists yet to be broken by the fork. The
    maintenance worker, which consumes none of these queues, stays light.
    """
    from django.conf import settings

    consumed = consumed_queues(sender)
    if not settings.WORKER_PRELOAD_MODELS or not consumed & ENCODING_QUEUES:
        return
    from documents.embedding import get_embedder

    get_embedder()


@signals.worker_init.connect
def load_named_models(sender=None, **kwargs):
    """Load the models a user named (QA_NLI_MODEL, QA_SPAN_READER_MODEL) before the pool forks, so
    every pool process shares them; a name that cannot load stops the worker with the setting
    named, where a logged warning would let every question fail later. SystemExit, because
    Celery logs and swallows a receiver's ordinary exceptions. A worker known to serve none of
    the answering queues (the maintenance worker) stays light."""
    from qa.clients import ConfigurationError, named_models

    consumed = consumed_queues(sender)
    if consumed and not consumed & ENCODING_QUEUES:
        return
    try:
        named_models()
    except ConfigurationError as exc:
        logging.getLogger("groundedqa.tasks").critical("worker not started: %s", exc)
        raise SystemExit(f"worker not started: {exc}") from exc


# Queues whose tasks run the answering pipeline: their workers ask the warm-up question at start.
ANSWERING_QUEUES = {"requeued", "retrieval", "generation", "citation", "verification", "evaluation"}


def _warms_up(queues: set[str]) -> bool:
    from django.conf import settings

    return settings.WORKER_WARM_UP and bool(queues & ANSWERING_QUEUES)


@signals.worker_process_init.connect
def own_progress_bar_lock(**kwargs):
    """Right after the fork, before any task: a pool process killed while showing a progress bar
    must not leave its siblings waiting on the lock it held (groundedqa_site/fork_safety.py)."""
    from groundedqa_site import fork_safety

    fork_safety.own_progress_bar_lock()


@signals.worker_process_init.connect
def warm_up_pool_process(**kwargs):
    """Each pool process asks the warm-up question (qa/warmup.py) once forked, so the first question
    it takes is as fast as the later ones; the parent's preload shared the encoder, but the other
    models load, and torch's first inference runs, only in the process that uses them, and never
    before the fork (a torch thread pool does not survive it). On a thread: a pool process has
    4 s (worker_proc_alive_timeout) to report in, and the warm-up takes longer."""
    from groundedqa_site import jobs

    if _warms_up(jobs.serving_queues()):
        from qa.warmup import warm_up_in_background

        warm_up_in_background(role="worker")


@signals.worker_ready.connect
def warm_up_solo_worker(sender=None, **kwargs):
    """A worker with no pool processes (``--pool=solo``, ``threads``) answers in its main process."""
    # The sender is the worker's consumer; its pool is the running pool instance.
    pool = type(getattr(sender, "pool", None)).__module__
    if pool.endswith("prefork") or not _warms_up(consumed_queues(sender)):
        return
    from qa.warmup import warm_up_in_background

    warm_up_in_background(role="worker")
