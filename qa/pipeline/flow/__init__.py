"""Running a question.

The typed record of one run (``run``; ``run_v1`` reads traces stored in format 1), the factory
that turns a preset and the model clients into a runnable pipeline (``factory``), the runner and
the answering stages that may run in different processes (``runner``, ``answering``,
``stages``), the intrinsics the API calls on their own (``intrinsics``), and a question in parts
answered and combined (``combine``, ``agentic``).

The run record and the factory name every stage's values and parts, so they sit on top, not in
core.

May import: qa.pipeline.config, qa.pipeline.dialogue, qa.pipeline.checks, qa.pipeline.drafting,
qa.pipeline.reading, qa.pipeline.search, qa.pipeline.core (and the standard library and
installed packages; never Django, Celery or app code). lint-imports checks it (pyproject.toml,
the qa.pipeline sub-packages contract).
"""
