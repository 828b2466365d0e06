from django.apps import AppConfig
from django.core import checks


class QaConfig(AppConfig):
    name = "qa"
    verbose_name = "Questions and answers"

    def ready(self):
        checks.register(check_default_preset)
        checks.register(check_named_models)


def check_default_preset(app_configs=None, **kwargs):
    """An unknown QA_DEFAULT_PRESET stops runserver/migrate instead of failing the first question."""
    from django.core.exceptions import ImproperlyConfigured

    from qa.presets import default_preset

    try:
        default_preset()
    except ImproperlyConfigured as exc:
        return [checks.Error(str(exc), id="qa.E001")]
    return []


def check_named_models(app_configs=None, **kwargs):
    """A model named in QA_NLI_MODEL or QA_SPAN_READER_MODEL that cannot load stops runserver/migrate
    (loading it here costs seconds, and only when one is named)."""
    from qa.clients import ConfigurationError, named_models

    try:
        named_models()
    except ConfigurationError as exc:
        return [checks.Error(str(exc), id="qa.E002", hint="Fix or empty the setting it names.")]
    return []
