"""Reading the question and the passages.

What a question asks for (``questions``), named entities and parts of speech (``entities``), the
times and sources a question names and the analyst's date and source scope (``dates``), and the
passage reader (``reader``, its weights in ``models/``) and what every extractive reader shares
(``answer_spans``). Which retrieved documents are about what the question names (``subjects``).

May import: qa.pipeline.search, qa.pipeline.core (and the standard library and installed
packages; never Django, Celery or app code). Must not import: qa.pipeline.flow,
qa.pipeline.config, qa.pipeline.dialogue, qa.pipeline.checks, qa.pipeline.drafting. lint-imports
checks it (pyproject.toml, the qa.pipeline sub-packages contract).
"""
