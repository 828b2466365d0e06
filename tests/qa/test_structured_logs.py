"""LOG_FORMAT=json: one JSON object per log line, carrying the ids of the job it belongs to."""

from __future__ import annotations

import json
import logging

import pytest

from groundedqa_site import logs
from qa.models import Question
from tests.conftest import wait_for
from tests.qa.test_api import ask, client_for


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_a_log_line_is_one_json_object_with_the_bound_ids():
    formatter, context = logs.JsonFormatter(), logs.ContextFilter()
    logs.bind(question_id=7, corpus_id=3, stage="retrieval", task_id="abc")
    try:
        record = logging.LogRecord("qa.services", logging.WARNING, __file__, 1, "slow %s", ("llm",), None)
        context.filter(record)
        override = logging.LogRecord("qa.services", logging.INFO, __file__, 2, "x", (), None)
        override.question_id = 8  # an extra= of the call itself wins over the bound context
        context.filter(override)
    finally:
        logs.clear()

    line = json.loads(formatter.format(record))
    assert line["message"] == "slow llm" and line["level"] == "WARNING" and line["logger"] == "qa.services"
    assert (line["question_id"], line["corpus_id"], line["stage"], line["task_id"]) == (
        7,
        3,
        "retrieval",
        "abc",
    )
    assert json.loads(formatter.format(override))["question_id"] == 8
    after = logging.LogRecord("qa.services", logging.INFO, __file__, 3, "later", (), None)
    context.filter(after)
    assert "question_id" not in json.loads(formatter.format(after))


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_a_questions_stage_logs_in_the_worker_carry_its_id(celery_worker_process, analyst, westmere):
    client = client_for(analyst)
    response = ask(client, westmere, "What is the capital of Westmere?")
    assert response.status_code == 202, response.content
    question = Question.objects.get(pk=response.json()["id"])
    wait_for(
        lambda: Question.objects.filter(pk=question.pk, status__in=["done", "failed"]).exists(),
        message="the worker to answer the question",
    )

    def question_lines() -> list[dict]:
        return [
            line
            for line in json_lines(celery_worker_process.log_path.read_text())
            if line.get("question_id") == question.pk
        ]

    wait_for(
        lambda: any(line["message"].startswith("task ended") for line in question_lines()),
        message="the worker's task-ended line",
    )
    lines = question_lines()
    # The stages after retrieval run on in the same task; each one's lines name it.
    stages = {line["stage"] for line in lines}
    assert {"retrieval", "generation"} <= stages
    assert all(line["task_id"] for line in lines)
    # Every line the worker logged is a JSON object (the start-up banner is not a log line).
    logged = celery_worker_process.log_path.read_text().split("ready.", 1)[1].splitlines()[1:]
    assert logged and all(line.startswith("{") for line in logged if line.strip())


def test_gunicorn_writes_each_request_as_one_json_object(monkeypatch, capsys):
    from datetime import timedelta
    from types import SimpleNamespace

    from gunicorn.config import Config

    from groundedqa_site.gunicorn_logs import Logger

    monkeypatch.setenv("LOG_FORMAT", "json")
    config = Config()
    config.set("accesslog", "-")
    logger = Logger(config)
    environ = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": "/api/questions/?page=2",
        "PATH_INFO": "/api/questions/",
        "QUERY_STRING": "page=2",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "10.0.0.7",
    }
    response = SimpleNamespace(status="404 Not Found", response_length=23, sent=23, headers=[])
    request = SimpleNamespace(headers=[], method="GET", path="/api/questions/", query="page=2")

    logger.access(response, request, environ, timedelta(milliseconds=12.5))

    [line] = json_lines(capsys.readouterr().out)
    assert line["logger"] == "gunicorn.access"
    assert line["http"]["path"] == "/api/questions/" and line["http"]["query"] == "page=2"
    http = line["http"]
    assert (http["status"], http["duration_ms"], http["remote"]) == (404, 12.5, "10.0.0.7")
