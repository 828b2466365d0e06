"""Trust: the checks around an answer and what the reader is shown.

Whether the evidence can answer (``answerability``, with its fitted models
``answerability_model.json``), whether each answer sentence says what it cites
(``verification``, ``mismatch``, ``claims``, ``nli``, ``spans``), how it bears on the question
(``relation``, ``relevance``), the answer check and calibrated confidence (``confidence``), the
checks before and after generation (``trust``) and what the reader is shown (``reply``).

May import: qa.pipeline.drafting, qa.pipeline.reading, qa.pipeline.search, qa.pipeline.core (and
the standard library and installed packages; never Django, Celery or app code). Must not import:
qa.pipeline.flow, qa.pipeline.config, qa.pipeline.dialogue. lint-imports checks it
(pyproject.toml, the qa.pipeline sub-packages contract).
"""
