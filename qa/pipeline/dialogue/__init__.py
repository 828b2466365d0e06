"""Conversation.

Follow-up questions: conversation memory and rewriting (``conversation``), open references
nothing in the conversation picks out (``references``), a turn's reply kind (``turn_kind``, with
its fitted model ``turn_kind_model.json``), clarifying questions (``turns``), what the sources
lack and the partial answers and refusals that name it (``gaps``), and splitting a question into
parts (``decompose``).

May import: qa.pipeline.checks, qa.pipeline.drafting, qa.pipeline.reading, qa.pipeline.search,
qa.pipeline.core (and the standard library and installed packages; never Django, Celery or app
code). Must not import: qa.pipeline.flow, qa.pipeline.config. lint-imports checks it
(pyproject.toml, the qa.pipeline sub-packages contract).
"""
