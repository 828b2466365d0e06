"""Serializer fields shared by the apps' APIs."""

from __future__ import annotations

from rest_framework import serializers


class TextField(serializers.CharField):
    """A CharField that takes only a JSON string.

    DRF's CharField turns 12345 or true into "12345" / "True", so a client's mistake (a number
    where the question goes) was answered as if it were a question. The schema already says
    "string"; this makes the server hold to it.
    """

    default_error_messages = {"not_a_string": "Must be a string, not {kind}."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("not_a_string", kind=_json_kind(data))
        return super().to_internal_value(data)


def _json_kind(value) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
