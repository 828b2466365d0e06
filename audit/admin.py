from django.contrib import admin

from audit.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Read-only: an audit trail that can be edited proves nothing."""

    list_display = ("created_at", "actor_name", "action", "target_label", "team_id")
    list_filter = ("action",)
    search_fields = ("actor_name", "target_label")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
