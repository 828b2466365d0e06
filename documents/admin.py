"""Django admin for corpora: upload many files at once, watch status and progress."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path, reverse
from django.utils.html import format_html

from documents import services
from documents.models import Corpus, Document, Membership, Team


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    widget = MultipleFileInput

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(item, initial) for item in data]
        return [single(data, initial)]


class UploadForm(forms.Form):
    files = MultipleFileField(help_text="Select one or more files (.txt .md .html .pdf .docx .json .jsonl).")


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name"]
    inlines = [MembershipInline]


@admin.register(Corpus)
class CorpusAdmin(admin.ModelAdmin):
    list_display = ["name", "team", "document_total", "upload_link"]
    search_fields = ["name"]

    @admin.display(description="documents")
    def document_total(self, corpus):
        return corpus.documents.count()

    @admin.display(description="")
    def upload_link(self, corpus):
        return format_html(
            '<a href="{}">Upload files</a>', reverse("admin:documents_corpus_upload", args=[corpus.pk])
        )

    def get_urls(self):
        extra = [
            path(
                "<int:pk>/upload/",
                self.admin_site.admin_view(self.upload_view),
                name="documents_corpus_upload",
            )
        ]
        return extra + super().get_urls()

    def upload_view(self, request, pk):
        corpus = get_object_or_404(Corpus, pk=pk)
        if not self.has_change_permission(request, corpus):
            messages.error(request, "You may not upload to this corpus.")
            return redirect("admin:documents_corpus_changelist")
        form = UploadForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            outcome = services.documents_upload(
                corpus=corpus, files=form.cleaned_data["files"], uploaded_by=request.user
            )
            for refused in outcome.refused:
                messages.error(request, str(refused.error))
            messages.success(request, f"{outcome.changed} document(s) queued for embedding.")
            changelist = reverse("admin:documents_document_changelist")
            return redirect(f"{changelist}?corpus__id__exact={corpus.pk}")
        context = {**self.admin_site.each_context(request), "form": form, "corpus": corpus, "title": "Upload"}
        return render(request, "admin/documents/upload.html", context)


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["external_id", "title", "corpus", "status", "progress_bar", "error", "updated_at"]
    list_filter = ["corpus", "status", "source"]
    search_fields = ["external_id", "title"]
    readonly_fields = [f.name for f in Document._meta.fields if f.name not in ("embedding",)]
    exclude = ["embedding", "pending_text", "pending_sentences"]

    @admin.display(description="progress")
    def progress_bar(self, document):
        return format_html(
            '<progress max="100" value="{}" aria-label="{}% embedded"></progress> {}%',
            document.progress,
            document.progress,
            document.progress,
        )

    def has_add_permission(self, request):
        return False  # documents arrive by upload only

    # Through the service, so the corpus version moves and running questions notice.
    def delete_model(self, request, obj):
        services.document_delete(document=obj, actor=request.user)

    def delete_queryset(self, request, queryset):
        for document in queryset:
            services.document_delete(document=document, actor=request.user)
