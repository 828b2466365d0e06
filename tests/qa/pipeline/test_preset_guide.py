"""The preset guide the menus show: every preset in one group, and "no LLM" only where it is true."""

from __future__ import annotations

import pytest

from qa.pipeline.config import preset_guide
from qa.pipeline.config.presets import PRESET_NAMES, PRESETS


def _uses_an_llm(name: str) -> bool:
    config = PRESETS[name]
    answer = config.answer
    return (
        config.retrieval is None
        or config.reranker == "llm-pairwise"
        or answer.generator == "llm"
        or answer.citation_strategy == "llm"
        or answer.verifier == "llm"
        or (config.trust is not None and config.trust.llm_judge)
    )


def test_every_built_in_preset_is_described_in_exactly_one_group():
    listed = [s.name for group in preset_guide.PRESET_GROUPS for s in group.presets]
    assert sorted(listed) == sorted(PRESET_NAMES)
    assert len(listed) == len(set(listed))
    assert all(s.use and s.cost for group in preset_guide.PRESET_GROUPS for s in group.presets)


def test_the_recommended_group_comes_first_and_starts_with_default():
    first = preset_guide.PRESET_GROUPS[0]
    assert first.title.startswith("Recommended")
    assert first.presets[0].name == "default"


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_a_preset_says_it_needs_an_llm_exactly_when_its_configuration_calls_one(name):
    summary = preset_guide.SUMMARIES[name]
    assert summary.needs_llm == _uses_an_llm(name)
    assert ("needs an LLM" in summary.cost) == summary.needs_llm
    assert preset_guide.option_label(name).startswith(f"{name} · ")


def test_a_preset_missing_from_the_guide_still_reaches_the_menu(monkeypatch):
    monkeypatch.setattr(
        preset_guide, "SUMMARIES", {k: v for k, v in preset_guide.SUMMARIES.items() if k != "bm25"}
    )
    groups = preset_guide.groups()
    assert groups[-1].title == "Other"
    assert [s.name for s in groups[-1].presets] == ["bm25"]
