"""Where a user chooses a preset, the presets are grouped (recommended first) and each says what it
is for and what it costs: the ask form's menu and its "What the presets do", and the presets page."""

from __future__ import annotations

import re

import pytest

from tests.ui.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def _page(client, user, path):
    assert client.login(username=user.username, password=PASSWORD)
    response = client.get(path)
    assert response.status_code == 200
    return response.content.decode()


def _menu(page: str) -> str:
    return re.search(r'<select name="preset".*?</select>', page, re.S).group(0)


def test_the_ask_menu_groups_the_presets_and_says_what_each_needs(client, analyst, corpus):
    menu = _menu(_page(client, analyst, "/"))
    groups = re.findall(r'<optgroup label="([^"]+)">', menu)
    assert groups[0] == "Recommended · no LLM needed"
    assert "Needs an LLM key" in groups
    assert [g for g in groups if g.startswith("For experiments")] == groups[2:]
    first_option = re.search(r'<option value="([^"]+)"[^>]*>([^<]+)</option>', menu)
    assert first_option.groups() == ("default", "default · no LLM · fast")
    assert re.search(r'<option value="pairwise"[^>]*>pairwise · needs an LLM · slowest</option>', menu)
    assert re.search(r'<option value="llm-only"[^>]*>llm-only · needs an LLM</option>', menu)
    assert re.search(r'<option value="default"[^>]*selected', menu)


def test_the_ask_form_explains_each_preset_under_its_group(client, analyst, corpus):
    page = _page(client, analyst, "/")
    guide = page.split("What the presets do", 1)[1]
    assert guide.index("Recommended · no LLM needed") < guide.index("For experiments: the published report")
    assert re.search(r'<dt class="mono" data-preset="agentic">agentic <span[^>]*>no LLM · slower', guide)
    assert "Questions that ask several things at once" in guide
    assert re.search(r'data-preset="rerank">rerank <span[^>]*>needs an LLM and a cross-encoder', guide)


def test_a_team_preset_has_its_own_group_after_the_built_in_ones(client, analyst, corpus, team):
    from qa.models import TeamPreset

    TeamPreset.objects.create(team=team, name="lexical-3", base="default", parameters={"top_k": 3})
    groups = re.findall(r'<optgroup label="([^"]+)">', _menu(_page(client, analyst, "/")))
    assert groups[0].startswith("Recommended")
    assert groups[-1] == f"Team {team.name}"


def test_the_presets_page_lists_the_built_in_presets_grouped_with_their_cost(client, analyst, corpus):
    page = _page(client, analyst, "/presets/")
    section = page.split('id="builtin-presets"', 1)[1]
    titles = re.findall(r'class="preset-group-title">([^<]+)<', section)
    assert titles[0] == "Recommended · no LLM needed"
    assert len(titles) == 5
    assert re.search(
        r'data-preset="default">default <span class="badge preset-cost no-llm">no LLM · fast', section
    )
    assert re.search(
        r'data-preset="verify">verify <span class="badge preset-cost needs-llm">needs an LLM', section
    )
