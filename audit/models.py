"""Who did what: one append-only row per accountable action (uploads, deletions, reviews, team presets).

Rows outlive what they describe (a deleted document, a deleted user): the target's and
the actor's names are copied in, and the foreign keys are nulled rather than cascading.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class AuditEvent(models.Model):
    class Action(models.TextChoices):
        CORPUS_CREATE = "corpus.create", "created a corpus"
        CORPUS_DELETE = "corpus.delete", "deleted a corpus"
        DOCUMENT_UPLOAD = "document.upload", "uploaded a document"
        DOCUMENT_DELETE = "document.delete", "deleted a document"
        ANSWER_ACCEPT = "answer.accept", "accepted an answer"
        ANSWER_FLAG = "answer.flag", "flagged an answer"
        ANSWER_CORRECT = "answer.correct", "corrected an answer"
        PRESET_CREATE = "preset.create", "saved a team preset"
        PRESET_DELETE = "preset.delete", "deleted a team preset"
        MEMBER_ROLE = "member.role", "set a team member's role"
        MEMBER_REMOVE = "member.remove", "removed a team member"

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_name = models.CharField(max_length=150, blank=True)  # "" for the system (imports, jobs)
    action = models.CharField(max_length=40, choices=Action.choices, db_index=True)
    # Team whose staff may read the event; null for events outside any team.
    team_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    target_type = models.CharField(max_length=40)
    target_id = models.BigIntegerField(null=True, blank=True)
    target_label = models.CharField(max_length=500)
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        who = self.actor_name or "system"
        return f"{self.created_at:%Y-%m-%d %H:%M} {who} {self.get_action_display()} {self.target_label}"
