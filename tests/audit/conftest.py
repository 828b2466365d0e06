"""The UI tests' small ingested corpus and answered question serve the audit tests too."""

from tests.ui.conftest import answered, demo_documents  # noqa: F401 - fixtures
