"""OpenAPI schema: every operation documents the errors any API request can meet.

Authentication (401), permission (403) and throttling (429) errors can answer any
endpoint, so they are added to each operation here rather than repeated in every
view's ``extend_schema``. Their body is the same JSON every API error has.
"""

from __future__ import annotations

from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong, in words a person can act on.")


COMMON_ERRORS = {
    "401": "Not signed in: send `Authorization: Token ...` or a session cookie.",
    "403": "Signed in, but not allowed to do this (another team's data, or staff only).",
    "429": "Too many requests: wait the number of seconds in the Retry-After header.",
}


class GroundedQASchema(AutoSchema):
    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        for code, description in COMMON_ERRORS.items():
            if code not in responses:
                response = self._get_response_for_code(ErrorSerializer, code, direction=direction)
                response["description"] = description
                responses[code] = response
        return responses
