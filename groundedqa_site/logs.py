"""Structured logs: with LOG_FORMAT=json every process writes one JSON object per line.

Each line carries, where they apply, the ids a log search needs: the question,
document and corpus, the job's stage, and the Celery task. They come from a
context bound for the duration of a task (``bind_task`` from the Celery
signals in groundedqa_site/celery.py, so no task or service has to pass them
along) or from a log call's own ``extra={"question_id": ...}``, which wins.
A context variable, not a thread-local, so a thread that starts a job (the
lease heartbeat) does not inherit or clobber another job's ids.
"""

from __future__ import annotations

import contextvars
import inspect
import json
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from types import MappingProxyType

CONTEXT_FIELDS = ("question_id", "document_id", "corpus_id", "evaluation_run_id", "stage", "task", "task_id")

# What a task does, in the words of the job rows' stages (Question.stage, Document.status).
TASK_STAGES = {
    "retrieve_question": "retrieval",
    "generate_answer": "generation",
    "embed_document": "embedding",
}

# Never mutated in place: bind() sets a new mapping, so the shared empty default is safe.
_EMPTY: Mapping[str, object] = MappingProxyType({})
_context: contextvars.ContextVar[Mapping[str, object]] = contextvars.ContextVar(
    "groundedqa_log_context", default=_EMPTY
)


def bind(**fields: object) -> None:
    """Add ``fields`` (those not None) to every later log line of this context."""
    _context.set({**_context.get(), **{k: v for k, v in fields.items() if v is not None}})


def clear() -> None:
    """Forget the bound fields (a task ended; the worker process goes on to the next)."""
    _context.set(_EMPTY)


def task_fields(task, args: tuple, kwargs: dict) -> dict[str, object]:
    """The ids a Celery task's message carries, by parameter name, with its stage."""
    short = task.name.rsplit(".", 1)[-1]
    fields: dict[str, object] = {"task": short, "stage": TASK_STAGES.get(short, short)}
    try:
        bound = inspect.signature(task.run).bind_partial(*args, **kwargs).arguments
    except TypeError:  # a message that does not fit the signature fails in the task itself
        bound = kwargs
    for name in CONTEXT_FIELDS:
        if name.endswith("_id") and name != "task_id" and bound.get(name) is not None:
            fields[name] = bound[name]
    return fields


class ContextFilter(logging.Filter):
    """Copies the bound context onto each record (an ``extra`` of the call itself is kept)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in _context.get().items():
            if not hasattr(record, name):
                setattr(record, name, value)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, the context ids, and any traceback."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in CONTEXT_FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                line[name] = value
        http = getattr(record, "http", None)  # a request, from gunicorn (gunicorn_logs.py)
        if http is not None:
            line["http"] = http
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


def logging_config(*, log_format: str, level: str | None) -> dict:
    """The LOGGING dict for Django (and for Celery workers, which keep it: see celery.py)."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": ContextFilter}},
        "formatters": {
            "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
            "json": {"()": JsonFormatter},
        },
        "handlers": {
            "console": {"class": "logging.StreamHandler", "formatter": log_format, "filters": ["context"]}
        },
        "root": {"handlers": ["console"], "level": level or "WARNING"},
        "loggers": {
            name: {"level": level or "INFO"}
            for name in ("groundedqa", "groundedqa_site", "documents", "qa", "review", "celery.app.trace")
        },
    }
