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
