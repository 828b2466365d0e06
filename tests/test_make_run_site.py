"""The site as `make run` serves it, reached over HTTP as a colleague's browser or script would.

gunicorn runs with the launcher's own command and environment: DEBUG unset (off), the secret
key made under the var folder, static files collected and served by WhiteNoise, plain HTTP.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys

import httpx
import pytest

from groundedqa_site import launcher
from tests.conftest import REPO, wait_for

# Generated requests per operation over HTTP (the in-process run sends 25).
LIVE_EXAMPLES = 10


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _accepts(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def make_run_environment(var_dir, database_name: str, broker_dir) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE")}
    env.update(
        DJANGO_SETTINGS_MODULE="groundedqa_site.settings",
        GROUNDEDQA_VAR_DIR=str(var_dir),
        GROUNDEDQA_DATABASE_NAME=database_name,
        CELERY_BROKER_URL="filesystem://",
        CELERY_BROKER_DIR=str(broker_dir),
        **{name: "0" for name in launcher.HTTPS_ONLY_SETTINGS},
        # The contract test sends a few hundred requests a minute; a 429 would hide what it checks.
        API_THROTTLE_USER="100000/minute",
    )
    return env


@pytest.fixture(scope="module")
def make_run_site(django_db_setup, broker_dir, tmp_path_factory):
    """The web server `make run` starts, on a free port, reading the test database."""
    from django.db import connection

    var_dir = tmp_path_factory.mktemp("make-run-var")
    env = make_run_environment(var_dir, connection.settings_dict["NAME"], broker_dir)
    collected = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert collected.returncode == 0, collected.stderr
    port = _free_port()
    command = launcher.web_server_command(sys.executable)
    command[command.index("--bind") + 1] = f"127.0.0.1:{port}"
    log = var_dir / "web.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: _accepts(port) or server.poll() is not None, timeout=120, message="gunicorn")
        assert server.poll() is None, log.read_text()
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_missing_page_is_the_friendly_404_with_no_debug_listing(make_run_site):
    response = httpx.get(f"{make_run_site}/no-such-page/")
    assert response.status_code == 404
    assert "Page not found" in response.text
    assert "URLconf" not in response.text and "DEBUG = True" not in response.text


@pytest.mark.parametrize("path", ["/api/corpora/null,null/", "/api/questions/abc/", "/api/answers/16/x/"])
def test_every_api_error_is_json(make_run_site, path):
    response = httpx.get(f"{make_run_site}{path}")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"detail": f"No such resource: {path}"}


def test_an_api_request_without_credentials_is_json_401(make_run_site):
    response = httpx.get(f"{make_run_site}/api/corpora/")
    assert response.status_code == 401
    assert response.json() == {"detail": "Authentication credentials were not provided."}


def test_the_sign_in_page_is_served_over_plain_http_with_hashed_cacheable_static_files(make_run_site):
    page = httpx.get(f"{make_run_site}/login/")
    assert page.status_code == 200  # no redirect to https: make run has no TLS in front
    stylesheet = re.search(r'href="(/static/ui/app\.[0-9a-f]{12}\.css)"', page.text)
    assert stylesheet, "the page links the collected, content-hashed stylesheet"
    css = httpx.get(f"{make_run_site}{stylesheet.group(1)}")
    assert css.status_code == 200 and "max-age=315360000" in css.headers["cache-control"]


@pytest.mark.worker
def test_the_readmes_api_steps_ask_and_wait_for_a_cited_answer(
    make_run_site, celery_worker_process, transactional_db, embedder, broker_dir, tmp_path
):
    """scripts/first_hour.sh is the README's "Ask through the API" section: a token from the
    command the README names, then list, ask, wait and read the answer with curl."""
    if not shutil.which("curl"):
        pytest.skip("curl is not installed; the README's API steps use it")
    from django.contrib.auth import get_user_model
    from django.db import connection

    from tests.factories import CorpusFactory, TeamFactory
    from tests.ui.conftest import DEMO_CORPUS, ingest_in_process

    team = TeamFactory(name="Analysts")
    analyst = get_user_model().objects.create_user("maria", password="correct horse battery")
    team.members.add(analyst)
    corpus = CorpusFactory(team=team, name="demo")
    ingest_in_process(corpus, embedder, sorted(DEMO_CORPUS.glob("*.txt")))

    env = make_run_environment(tmp_path / "var", connection.settings_dict["NAME"], broker_dir)
    made = subprocess.run(
        [sys.executable, "manage.py", "drf_create_token", "maria"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip().splitlines()[-1].split(" ")[2]

    run = subprocess.run(
        ["sh", "scripts/first_hour.sh", "demo", "How many containers did the port handle in 2024?"],
        cwd=REPO,
        env={"PATH": os.environ["PATH"], "GROUNDEDQA_URL": make_run_site, "GROUNDEDQA_TOKEN": token},
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"  {corpus.pk}  demo  (3 of 3 documents ready)" in run.stdout
    assert "Answer (answerable): The Port of Westmere handled 4.2 million containers in 2024" in run.stdout
    assert "  [harbor-authority-report, " in run.stdout


def test_every_api_operation_keeps_its_contract_over_http(make_run_site, transactional_db):
    """The suite's contract test, sent over HTTP to the server a client reaches, where the
    in-process run could not see gunicorn, the URL resolver's 404s or the error handlers."""
    import schemathesis
    from drf_spectacular.generators import SchemaGenerator
    from rest_framework.authtoken.models import Token

    from tests.factories import CorpusFactory, TeamFactory, UserFactory
    from tests.test_api_contract import _exercise

    staff = UserFactory(is_staff=True)
    team = TeamFactory()
    team.members.add(staff)
    CorpusFactory(team=team)
    token = Token.objects.create(user=staff).key
    schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10
    failures = [
        failure
        for operation in operations
        if (
            failure := _exercise(
                operation, {"Authorization": f"Token {token}"}, base_url=make_run_site, examples=LIVE_EXAMPLES
            )
        )
    ]
    summary = f"{len(failures)} of {len(operations)} operations broke the contract over HTTP"
    assert not failures, summary + ":\n\n" + "\n\n".join(failures)
