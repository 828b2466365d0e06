"""The pipeline: pure Python, no Django, Celery or ORM. Its modules live in sub-packages, one per
stage or concern, listed top to bottom; a sub-package imports only those below it (lint-imports
checks it; docs/pipeline-layout.md places every module).

- ``flow``: running a question
- ``config``: configuration as data
- ``dialogue``: conversation
- ``checks``: trust: the checks around an answer and what the reader is shown
- ``drafting``: drafting an answer
- ``reading``: reading the question and the passages
- ``search``: retrieval: from a question to ranked passages
- ``core``: what every stage shares
"""
