import os

from django.core.asgi import get_asgi_application

from groundedqa_site.embedded_db import start_configured_server

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "groundedqa_site.settings")
start_configured_server()
application = get_asgi_application()
