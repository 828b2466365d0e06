"""The presets, as the Django side sees them (the definitions are pure: qa.pipeline.presets)."""

from qa.pipeline.presets import PRESET_NAMES, PRESETS, PipelineConfig, get_preset


def config_from_dict(data: dict) -> PipelineConfig:
    return PipelineConfig.from_dict(data)


__all__ = ["PRESETS", "PRESET_NAMES", "PipelineConfig", "config_from_dict", "get_preset"]
