"""Configuration as data.

The presets (``presets``), the parameters an analyst may set on top of one (``parameters``),
what each preset is for and costs (``preset_guide``) and the answering stage's settings
(``answering_config``). A preset holds each stage's own config value, so config sits above the
stages and below flow.

May import: qa.pipeline.dialogue, qa.pipeline.checks, qa.pipeline.drafting, qa.pipeline.reading,
qa.pipeline.search, qa.pipeline.core (and the standard library and installed packages; never
Django, Celery or app code). Must not import: qa.pipeline.flow. lint-imports checks it
(pyproject.toml, the qa.pipeline sub-packages contract).
"""
