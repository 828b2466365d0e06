"""The README and docs/ hold together: the README starts with the two commands, stays short,
lists every document, and the links between them lead somewhere."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO

README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {_anchor(m) for m in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def test_the_readme_opens_with_the_two_commands_and_stays_short():
    text = README.read_text(encoding="utf-8")
    assert text.startswith("```\nmake run    # ")
    assert text.split("\n")[2].startswith("make test   # ")
    assert len(text.splitlines()) < 400


def test_the_readme_links_every_document_in_docs():
    text = README.read_text(encoding="utf-8")
    assert DOCS
    assert [doc.name for doc in DOCS if f"](docs/{doc.name})" not in text] == []


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda p: p.name)
def test_every_link_to_a_file_here_leads_to_its_file_and_heading(path):
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    # The README's Docs list also names documents written beside this one (jobs and recovery,
    # structure, readers, annotation); a link to one of those may wait for its file.
    readme = README.read_text(encoding="utf-8")
    listed = {(REPO / t).resolve() for t in LINK.findall(readme.split("\n## Docs", 1)[1])}
    broken = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        if not resolved.exists():
            if resolved not in listed:
                broken.append(target)
            continue
        if anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(target)
    assert broken == []


def test_the_docs_speak_of_the_project_not_of_work_sessions():
    mentions = [
        f"{doc.name}: {line.strip()[:80]}"
        for doc in [README, *DOCS]
        for line in doc.read_text(encoding="utf-8").splitlines()
        if re.search(r"\bsession \d", line, flags=re.I)
    ]
    assert mentions == []


def _readme_block_after(marker: str) -> str:
    text = README.read_text(encoding="utf-8")
    return text.split(marker, 1)[1].split("```\n", 1)[1].split("```", 1)[0]


def test_the_readmes_command_for_adding_a_colleague_gives_them_their_teams_corpora(transactional_db):
    import os
    import subprocess
    import sys

    from django.db import connection
    from django.test import Client

    from tests.factories import CorpusFactory, TeamFactory

    ours = CorpusFactory(team=TeamFactory(name="Analysts"), name="harbour reports")
    theirs = CorpusFactory(team=TeamFactory(name="Legal"), name="contracts")
    command = _readme_block_after("The same from the terminal").replace(".venv/bin/python", sys.executable)
    env = {**os.environ, "GROUNDEDQA_DATABASE_NAME": connection.settings_dict["NAME"]}
    ran = subprocess.run(
        ["bash", "-c", command], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr

    client = Client()
    assert client.login(username="maria", password="a long passphrase")
    page = client.get("/corpora/").content.decode()
    assert ours.name in page and theirs.name not in page
    assert client.get("/operations/").status_code == 403  # an analyst, not staff


# --- the commands the docs give -----------------------------------------------------------------

MANAGE_COMMAND = re.compile(r"manage\.py ([a-z_]+)")
BENCH_MODULE = re.compile(r"python -m (bench(?:\.[a-z_0-9]+)*|qa\.[a-z_0-9]+)(?: ([a-z_0-9]+))?")
BENCH_SCRIPT = re.compile(r"\bbench/([a-z_]+)\.py\b")


def _docs_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in [README, *DOCS])


def test_every_management_command_the_docs_name_exists():
    from django.core.management import get_commands

    named = set(MANAGE_COMMAND.findall(_docs_text()))
    assert named, "the docs name no manage.py command: the pattern is broken"
    assert sorted(named - set(get_commands())) == []


def test_every_bench_command_the_docs_give_names_a_module_or_benchmark_that_exists():
    import importlib.util

    from bench.__main__ import BENCHMARKS

    missing = []
    for module, word in BENCH_MODULE.findall(_docs_text()):
        if module == "bench" and word:
            if word not in BENCHMARKS:
                missing.append(f"python -m bench {word}")
        elif importlib.util.find_spec(module) is None:
            missing.append(f"python -m {module}")
    for script in set(BENCH_SCRIPT.findall(_docs_text())):
        if not (REPO / "bench" / f"{script}.py").exists():
            missing.append(f"bench/{script}.py")
    assert sorted(set(missing)) == []


# The commands of the docs cheap enough to run here in full (seconds, no benchmark data, no model
# download); the rest are checked above to name something that exists.
CHEAP_COMMANDS = [
    ["manage.py", "presets"],
    ["manage.py", "check"],
    ["-m", "bench.lexicon_inventory"],
    ["-m", "bench", "--help"],
]


@pytest.mark.parametrize("command", CHEAP_COMMANDS, ids=" ".join)
def test_the_cheap_commands_of_the_docs_run(command):
    import subprocess
    import sys

    named = f"manage.py {command[1]}" if command[0] == "manage.py" else f"python -m {command[1]}"
    assert named in _docs_text()
    result = subprocess.run([sys.executable, *command], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
