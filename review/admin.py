"""Read-mostly admin for reviews, gold cases and evaluation runs.

Decisions and revisions are history: the admin shows them but does not edit
them (changes go through the services, which keep the history and versions).
"""

from __future__ import annotations

from django.contrib import admin

from review.models import Benchmark, EvaluationRun, GoldCase, GoldCaseRevision, Review


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Review)
class ReviewAdmin(ReadOnlyAdmin):
    list_display = ["answer", "version", "action", "reason", "reviewer", "created_at"]
    list_filter = ["action", "reason"]
    search_fields = ["comment", "text", "reviewer__username"]


class GoldCaseRevisionInline(admin.TabularInline):
    model = GoldCaseRevision
    extra = 0
    can_delete = False
    readonly_fields = ["revision", "benchmark_version", "note", "changed_by", "created_at", "snapshot"]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(GoldCase)
class GoldCaseAdmin(ReadOnlyAdmin):
    list_display = ["case_id", "benchmark", "split", "answerable", "provenance", "revision", "updated_at"]
    list_filter = ["benchmark", "split", "provenance", "answerable"]
    search_fields = ["case_id", "question"]
    inlines = [GoldCaseRevisionInline]


@admin.register(Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ["name", "corpus", "version", "source_format", "updated_at"]
    readonly_fields = ["version", "source_format", "source_path", "created_by"]


@admin.register(EvaluationRun)
class EvaluationRunAdmin(ReadOnlyAdmin):
    list_display = [
        "pk",
        "benchmark",
        "benchmark_version",
        "preset",
        "split",
        "status",
        "progress_done",
        "progress_total",
        "created_at",
    ]
    list_filter = ["status", "preset", "benchmark"]
