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
