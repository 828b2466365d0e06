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
    "403": "Signed in, but your role in the team does not allow this (viewer < annotator < reviewer < "
    "team admin), or a site operation that only staff may do.",
    "429": "Too many requests: wait the number of seconds in the Retry-After header.",
}


# DRF's validation errors name the fields: {"question": ["This field is required."]},
# or {"detail": "..."} for errors that concern the whole request.
VALIDATION_ERROR = {
    "type": "object",
    "additionalProperties": True,
    "description": 'Field name -> list of messages, or {"detail": message}.',
}


class GroundedQASchema(AutoSchema):
    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        takes_input = self.method in ("POST", "PUT", "PATCH") or bool(self.get_filter_backends())
        # A path id, a body naming a corpus or team, or a page number past the end: 404.
        names_objects = "{" in self.path or takes_input or bool(self._query_parameters())
        errors = dict(COMMON_ERRORS)
        if names_objects:
            errors["404"] = "Not found: no such object, or it belongs to a team you are not in."
        for code, description in errors.items():
            self._document(responses, code, ErrorSerializer, description)
        if takes_input or self._query_parameters():
            self._document(responses, "400", VALIDATION_ERROR, "The request is invalid; the body says why.")
        return responses

    def _map_serializer(self, serializer, direction, bypass_extensions=False):
        schema = super()._map_serializer(serializer, direction, bypass_extensions)
        # A serializer that refuses names it does not know (preset parameters, where a misspelt
        # "topk" must not silently do nothing) says so, so no client sends extras expecting them ignored.
        if getattr(serializer, "refuses_unknown_fields", False):
            schema["additionalProperties"] = False
        return schema

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        # DRF's CharField refuses NUL characters always, and without allow_blank also ""
        # (and, trimming first, "   "); say so, so a client (and schemathesis) knows. A name
        # looked up in the database (a team's) refuses NUL too: PostgreSQL cannot read one.
        if direction == "request" and isinstance(field, serializers.SlugRelatedField):
            if schema.get("type") == "string" and "pattern" not in schema:
                schema["pattern"] = r"^[^\x00]*$"
            return schema
        if direction != "request" or not isinstance(field, serializers.CharField):
            return schema
        if schema.get("type") != "string" or "enum" in schema or "pattern" in schema:
            return schema
        if field.allow_blank:
            schema["pattern"] = r"^[^\x00]*$"
        else:
            schema.setdefault("minLength", 1)
            visible = r"[^\x00\s]" if field.trim_whitespace else r"[^\x00]"
            schema["pattern"] = rf"^[^\x00]*{visible}[^\x00]*$"
        return schema

    def _document(self, responses: dict, code: str, body, description: str) -> None:
        if code not in responses:
            response = self._get_response_for_code(body, code, direction="response")
            response["description"] = description
            responses[code] = response

    def _query_parameters(self) -> list:
        return [p for p in self._get_parameters() if p.get("in") == "query"]
