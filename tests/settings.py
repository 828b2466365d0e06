"""The test suite's settings: the site's own, in development mode unless the run says otherwise.

DEBUG is read when the settings are imported, which pytest-django does before any conftest
runs, so it is set here. Development mode keeps static files read from the source folders
(no collectstatic before a test run); pytest-django still switches DEBUG off while each test
runs, so the tests see the production error pages and JSON errors. Subprocesses the tests
start (Celery workers, manage.py, gunicorn) inherit the variable.
"""

import os

os.environ.setdefault("DEBUG", "1")

from groundedqa_site.settings import *  # noqa: E402, F403
