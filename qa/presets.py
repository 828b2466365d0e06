"""The presets, as the Django side sees them (the definitions are pure: qa.pipeline.presets)."""

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from qa.pipeline.presets import FLOW_PRESETS, PRESET_NAMES, PRESETS, PipelineConfig, get_preset


def config_from_dict(data: dict) -> PipelineConfig:
    return PipelineConfig.from_dict(data)


def default_preset() -> str:
    """The preset used when the asker names none (QA_DEFAULT_PRESET): browser, API, `ask`, evaluation."""
    name = settings.QA_DEFAULT_PRESET
    if name not in PRESET_NAMES:
        raise ImproperlyConfigured(f"QA_DEFAULT_PRESET={name!r} is not one of {', '.join(PRESET_NAMES)}.")
    return name


__all__ = [
    "FLOW_PRESETS",
    "PRESETS",
    "PRESET_NAMES",
    "PipelineConfig",
    "config_from_dict",
    "default_preset",
    "get_preset",
]
