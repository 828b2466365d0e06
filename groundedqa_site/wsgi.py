import os

from django.core.wsgi import get_wsgi_application

from groundedqa_site.embedded_db import start_configured_server

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "groundedqa_site.settings")
start_configured_server()
application = get_wsgi_application()


def _warm_up_models() -> None:
    from django.conf import settings

    if settings.WEB_WARM_UP:
        from qa.warmup import warm_up_in_background

        warm_up_in_background(role="web")


_warm_up_models()
