"""gunicorn's own lines (start-up, workers, each request) as JSON objects when LOG_FORMAT=json.

gunicorn logs through handlers of its own, set up in its master process before
Django is loaded, so ``settings.LOGGING`` never reaches them; this logger class
(``--logger-class``) gives them the same formatter. LOG_FORMAT is read from
the environment here because the master has no Django settings; the settings
module refuses a value other than plain or json when a worker starts.
"""

from __future__ import annotations

import os

from gunicorn import glogging

from groundedqa_site.logs import JsonFormatter


def _json() -> bool:
    return os.environ.get("LOG_FORMAT", "plain") == "json"


class Logger(glogging.Logger):
    def setup(self, cfg) -> None:
        super().setup(cfg)
        if _json():
            for log in (self.error_log, self.access_log):
                for handler in log.handlers:
                    handler.setFormatter(JsonFormatter())

    def access(self, resp, req, environ, request_time) -> None:
        if not _json():
            return super().access(resp, req, environ, request_time)
        if not self.access_log_enabled:
            return None
        atoms = self.atoms(resp, req, environ, request_time)
        request = {
            "method": atoms["m"],
            "path": atoms["U"],
            "query": atoms["q"],
            "status": int(atoms["s"]) if str(atoms["s"]).isdigit() else atoms["s"],
            "bytes": atoms["B"],
            "duration_ms": round(request_time.total_seconds() * 1000, 1),
            "remote": atoms["h"],
        }
        self.access_log.info("%s %s %s", atoms["m"], atoms["U"], atoms["s"], extra={"http": request})
        return None
