"""The presets, as the Django side sees them: the built-in ones (defined, pure, in qa.pipeline.config.presets)
and the presets teams saved (qa.models.TeamPreset), resolved by name for a corpus's team."""

from __future__ import annotations

from collections.abc import Mapping

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from qa.errors import InvalidParameters, UnknownPreset
from qa.pipeline.config import parameters as pipeline_parameters
from qa.pipeline.config.presets import FLOW_PRESETS, PRESET_NAMES, PRESETS, PipelineConfig, get_preset
from qa.selectors import team_preset_named


def config_from_dict(data: dict) -> PipelineConfig:
    return PipelineConfig.from_dict(data)


def default_preset() -> str:
    """The preset used when the asker names none (QA_DEFAULT_PRESET): browser, API, `ask`, evaluation."""
    name = settings.QA_DEFAULT_PRESET
    if name not in PRESET_NAMES:
        raise ImproperlyConfigured(f"QA_DEFAULT_PRESET={name!r} is not one of {', '.join(PRESET_NAMES)}.")
    return name


def with_parameters(
    config: PipelineConfig, parameters: Mapping[str, object], *, name: str | None = None, description=None
) -> PipelineConfig:
    """``config`` with the parameters set (qa.pipeline.config.parameters), or InvalidParameters saying why
    not."""
    try:
        return pipeline_parameters.apply_parameters(config, parameters, name=name, description=description)
    except pipeline_parameters.InvalidParameters as exc:
        raise InvalidParameters(str(exc)) from exc


def resolve(name: str, *, team, parameters: Mapping[str, object] | None = None) -> PipelineConfig:
    """The configuration a question under preset ``name`` runs with on a corpus of ``team``.

    A built-in preset's name wins; otherwise the team's own preset of that
    name (a preset of another team is unknown here). ``parameters`` are set
    on top of either.
    """
    if name in PRESET_NAMES:
        config = get_preset(name)
        return with_parameters(config, parameters) if parameters else config
    saved = team_preset_named(team, name) if team is not None else None
    if saved is None:
        raise UnknownPreset(
            f"Unknown preset {name!r}; choose one of {', '.join(PRESET_NAMES)}"
            + (f" or a preset of team {team.name}." if team is not None else ".")
        )
    return saved_config(saved, parameters)


def saved_config(saved, parameters: Mapping[str, object] | None = None) -> PipelineConfig:
    """A team preset's configuration (a qa.models.TeamPreset row), ``parameters`` set on top."""
    if saved.base not in PRESET_NAMES:
        raise UnknownPreset(
            f"Team preset {saved.name!r} starts from preset {saved.base!r}, which no longer exists; "
            "delete it and save it again from another preset."
        )
    return with_parameters(
        get_preset(saved.base),
        {**saved.parameters, **(parameters or {})},
        name=saved.name,
        description=saved.description or f"Team {saved.team.name}'s preset, from {saved.base}.",
    )


__all__ = [
    "FLOW_PRESETS",
    "PRESETS",
    "PRESET_NAMES",
    "PipelineConfig",
    "config_from_dict",
    "default_preset",
    "get_preset",
    "resolve",
    "saved_config",
    "with_parameters",
]
