"""Drafting an answer.

The prompts (``prompts``), the draft and the extractive generator (``generation``), the LLM
generator (``llm_generation``), reading an LLM's cited reply (``generation_output``) and attaching
source sentences to answer sentences (``citations``).

May import: qa.pipeline.reading, qa.pipeline.search, qa.pipeline.core (and the standard library
and installed packages; never Django, Celery or app code). Must not import: qa.pipeline.flow,
qa.pipeline.config, qa.pipeline.dialogue, qa.pipeline.checks. lint-imports checks it
(pyproject.toml, the qa.pipeline sub-packages contract).
"""
