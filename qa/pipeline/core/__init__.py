"""What every stage shares.

The frozen values that flow between stages (``types``), the Protocols the model clients and the
corpus satisfy (``protocols``), their JSON codec (``codec``), every English word list
(``lexicon``) and the text helpers built on it (``text``, ``segment``, ``roles``), the reading
models the pipeline is given (``model_parts``) and the LLM clients (``llm``).

May import: nothing else in qa.pipeline (and the standard library and installed packages; never
Django, Celery or app code). Must not import: qa.pipeline.flow, qa.pipeline.config,
qa.pipeline.dialogue, qa.pipeline.checks, qa.pipeline.drafting, qa.pipeline.reading,
qa.pipeline.search. lint-imports checks it (pyproject.toml, the qa.pipeline sub-packages
contract).
"""
