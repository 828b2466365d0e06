from __future__ import annotations

from rest_framework import serializers
from rest_framework.reverse import reverse

from documents.models import Corpus, Document, Team


class CorpusSerializer(serializers.ModelSerializer):
    team = serializers.SlugRelatedField(slug_field="name", queryset=Team.objects.all())
    document_count = serializers.IntegerField(read_only=True, default=None)
    ready_count = serializers.IntegerField(read_only=True, default=None)

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
    files = serializers.ListField(child=serializers.FileField(allow_empty_file=True), allow_empty=False)
    external_id = serializers.CharField(required=False, help_text="Only with a single file.")
