"""Domain errors of the qa app (kinds and HTTP mapping: documents.errors, groundedqa_site.api)."""

from __future__ import annotations

from documents.errors import Conflict, Invalid, Unavailable


class QuestionInvalid(Invalid):
    """An empty or over-long question."""


class UnknownPreset(Invalid):
    """A preset name that is not one of qa.presets.PRESET_NAMES."""


class CorpusNotReady(Conflict):
    """The corpus has no ready document to answer from yet."""


class ConversationMismatch(Invalid):
    """A follow-up in a conversation of another corpus or user."""


class QueueUnavailable(Unavailable):
    """The broker refused the job; the message says what to fix."""


class InvalidParameters(Invalid):
    """A preset parameter that does not exist, is out of range, or contradicts another one."""


class TeamPresetInvalid(Invalid):
    """A team preset with a bad name or base preset."""


class TeamPresetExists(Conflict):
    """The team already has a preset of that name."""
