"""Small presentation helpers for the analyst UI templates."""

from __future__ import annotations

from django import template
from django.urls import reverse

from documents import permissions

register = template.Library()


@register.filter
def can_manage_corpora(user) -> bool:
    """``{% if user|can_manage_corpora %}``: the user administers a team (documents.permissions)."""
    return permissions.can_manage_corpora(user)


@register.filter
def can_read_audit_trail(user) -> bool:
    return permissions.can_read_audit_trail(user)


@register.filter
def can_read_operations(user) -> bool:
    return permissions.can_read_operations(user)


# Which navigation section each URL name belongs to, so the header can mark
# the current page with aria-current.
SECTIONS = {
    "ask": ("ask", "question", "question-turn", "question-trace"),
    "history": ("history",),
    "review": ("review-queue", "review-answer"),
    "benchmarks": ("benchmark", "gold-case"),
    "annotate": ("annotate",),
    "tasks": ("tasks", "task", "task-annotate", "task-adjudicate", "task-agreed"),
    "evaluate": (
        "evaluate",
        "evaluation-compare",
        "evaluation-run",
        "evaluation-run-progress",
        "benchmark",
        "gold-case",
    ),
    "corpora": ("corpora", "corpus", "corpus-analysis", "document-delete", "corpus-delete"),
    "presets": ("team-presets",),
    "teams": ("teams", "team"),
    "audit": ("audit",),
    "operations": ("operations",),
}


@register.inclusion_tag("ui/_nav_link.html", takes_context=True)
def nav_link(context, url_name: str, section: str, text: str):
    match = getattr(context.get("request"), "resolver_match", None)
    current = match is not None and match.url_name in SECTIONS.get(section, ())
    return {"href": reverse(url_name), "text": text, "current": current}


@register.filter
def seconds_ms(value) -> str:
    """Seconds as a readable duration: "3 ms", "1.24 s"."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return "–"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms" if seconds >= 0.001 else f"{seconds * 1000:.2f} ms"
    return f"{seconds:.2f} s"


@register.filter
def score(value, digits: int = 3) -> str:
    """A score with a fixed number of decimals, or an en dash where there is none."""
    if value is None or value == "":
        return "–"
    try:
        return f"{float(value):.{int(digits)}f}"
    except (TypeError, ValueError):
        return str(value)


@register.filter
def percent(value, digits: int = 1) -> str:
    if value is None or value == "":
        return "–"
    try:
        return f"{float(value) * 100:.{int(digits)}f}%"
    except (TypeError, ValueError):
        return str(value)


@register.filter
def sentence_label(label) -> str:
    """ "S9" stays "S9"; a bare number (sentences numbered by position) reads "sentence 2"."""
    label = str(label)
    return f"sentence {label}" if label.isdigit() else label


@register.filter
def get_item(mapping, key):
    if not mapping:
        return None
    try:
        return mapping.get(key)
    except AttributeError:
        return None
