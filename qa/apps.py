from django.apps import AppConfig
from django.core import checks


class QaConfig(AppConfig):
    name = "qa"
    verbose_name = "Questions and answers"

    def ready(self):
        checks.register(check_default_preset)


def check_default_preset(app_configs=None, **kwargs):
    """An unknown QA_DEFAULT_PRESET stops runserver/migrate instead of failing the first question."""
    from django.core.exceptions import ImproperlyConfigured

    from qa.presets import default_preset

    try:
        default_preset()
    except ImproperlyConfigured as exc:
        return [checks.Error(str(exc), id="qa.E001")]
    return []
