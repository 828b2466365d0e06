from django.apps import AppConfig


class UiConfig(AppConfig):
    """The analyst's browser UI: server-rendered pages over the documents, qa and review apps."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "ui"
    verbose_name = "Analyst UI"
