from __future__ import annotations

from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.reverse import reverse

from documents.models import Corpus, Document, Team


class TeamNameField(serializers.SlugRelatedField):
    """A team by name; a name that matches no team is a 404, like any other missing object."""

    def to_internal_value(self, data):
        if isinstance(data, str) and not self.get_queryset().filter(name=data).exists():
            raise NotFound(f"No team named {data!r}.")
        return super().to_internal_value(data)


class CorpusSerializer(serializers.ModelSerializer):
    team = TeamNameField(slug_field="name", queryset=Team.objects.all())
    # Counted only where the corpus was listed; a corpus just created has no counts yet.
    document_count = serializers.IntegerField(read_only=True, default=None, allow_null=True)
    ready_count = serializers.IntegerField(read_only=True, default=None, allow_null=True)

    class Meta:
        model = Corpus
        fields = ["id", "name", "description", "team", "created_at", "document_count", "ready_count"]
        read_only_fields = ["id", "created_at"]


class DocumentSerializer(serializers.ModelSerializer):
    corpus = serializers.CharField(source="corpus.name", read_only=True)
    status_url = serializers.SerializerMethodField()
    sentence_count = serializers.IntegerField(read_only=True, default=None)

    class Meta:
        model = Document
        fields = [
            "id",
            "corpus",
            "external_id",
            "title",
            "source",
            "url",
            "published",
            "filename",
            "status",
            "progress",
            "error",
            "content_hash",
            "sentence_count",
            "status_url",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    def get_status_url(self, document: Document) -> str:
        return reverse("api-document-detail", args=[document.pk], request=self.context.get("request"))


class UploadSerializer(serializers.Serializer):
    files = serializers.ListField(
        child=serializers.FileField(allow_empty_file=True), allow_empty=False, min_length=1
    )
    external_id = serializers.CharField(required=False, help_text="Only with a single file.")
