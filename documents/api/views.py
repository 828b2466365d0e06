"""REST endpoints for corpora and documents: parse input, call a service or selector, shape output."""

from __future__ import annotations

from django.db.models import Count
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import NotFound
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from documents import permissions, reembedding, selectors, services
from documents.api.serializers import (
    CorpusEmbeddingSerializer,
    CorpusSerializer,
    DocumentSerializer,
    EmbeddingJobSerializer,
    ReembedSerializer,
    UploadSerializer,
)
from groundedqa_site.api import status_for
from groundedqa_site.schema import ErrorSerializer


def require_corpus_admin(user, corpus) -> None:
    permissions.require_role(user, corpus.team, "change corpora")


class CorpusListCreate(generics.ListCreateAPIView):
    serializer_class = CorpusSerializer

    def get_queryset(self):
        return selectors.corpora_with_counts(self.request.user)

    def perform_create(self, serializer):
        team = serializer.validated_data["team"]
        if not permissions.is_member(self.request.user, team):
            # As for a team that does not exist: other teams' names are not disclosed.
            raise NotFound(f"No team named {team.name!r}.")
        permissions.require_role(self.request.user, team, "change corpora")
        serializer.instance = reembedding.corpus_create_with_model(
            name=serializer.validated_data["name"],
            team=team,
            description=serializer.validated_data.get("description", ""),
            model=serializer.validated_data.get("embedding_model", ""),
            actor=self.request.user,
        )


class CorpusDetail(generics.RetrieveDestroyAPIView):
    serializer_class = CorpusSerializer

    def get_queryset(self):
        return selectors.corpora_with_counts(self.request.user)

    def perform_destroy(self, instance):
        require_corpus_admin(self.request.user, instance)
        services.corpus_delete(corpus=instance, actor=self.request.user)


class CorpusEmbedding(APIView):
    """The corpus's embedding model and its re-embeddings; POST re-embeds it with another (team admin)."""

    @extend_schema(responses=CorpusEmbeddingSerializer)
    def get(self, request, pk):
        corpus = selectors.corpus_get_for_user(request.user, pk=pk)
        return Response(_embedding(corpus))

    @extend_schema(
        request=ReembedSerializer,
        responses={
            202: EmbeddingJobSerializer,
            400: OpenApiResponse(ErrorSerializer, "No model named, or one that cannot be loaded here."),
            409: OpenApiResponse(ErrorSerializer, "Re-embedding already, or the corpus uses that model."),
        },
        description="Queue a job that embeds every document of the corpus with `model` and then "
        "switches the corpus to it in one step; questions meanwhile use the current model. Follow it "
        "with GET on this URL (`jobs[0].progress`).",
    )
    def post(self, request, pk):
        corpus = selectors.corpus_get_for_user(request.user, pk=pk)
        require_corpus_admin(request.user, corpus)
        body = ReembedSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        job = reembedding.reembedding_start(
            corpus=corpus, model=body.validated_data["model"], requested_by=request.user
        )
        return Response(EmbeddingJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


def _embedding(corpus) -> dict:
    model, dimension = reembedding.corpus_model(corpus)
    jobs = selectors.corpus_embedding_jobs(corpus)
    return CorpusEmbeddingSerializer(
        {"model": model, "dimension": dimension, "version": corpus.version, "jobs": jobs}
    ).data


class CorpusDocuments(APIView):
    """List a corpus's documents, or upload files into it (team admin)."""

    parser_classes = [MultiPartParser]  # files need multipart; a urlencoded form cannot carry them

    @extend_schema(responses=DocumentSerializer(many=True))
    def get(self, request, pk):
        corpus = selectors.corpus_get_for_user(request.user, pk=pk)
        documents = selectors.documents_for_user(request.user).filter(corpus=corpus)
        return Response(DocumentSerializer(documents, many=True, context={"request": request}).data)

    @extend_schema(request=UploadSerializer, responses={202: DocumentSerializer(many=True)})
    def post(self, request, pk):
        corpus = selectors.corpus_get_for_user(request.user, pk=pk)
        require_corpus_admin(request.user, corpus)
        upload = UploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        files = upload.validated_data["files"]
        external_id = upload.validated_data.get("external_id")
        if external_id and len(files) > 1:
            return Response({"detail": "external_id can only be given with a single file."}, status=400)

        outcome = services.documents_upload(
            corpus=corpus, files=files, uploaded_by=request.user, external_id=external_id
        )
        accepted = [
            {**DocumentSerializer(s.document, context={"request": request}).data, "changed": s.changed}
            for s in outcome.submitted
        ]
        errors = [
            {"file": r.filename, "detail": str(r.error), "status": status_for(r.error)}
            for r in outcome.refused
        ]
        if not accepted:
            first = errors[0]
            return Response({"detail": first["detail"], "errors": errors}, status=first["status"])
        return Response({"documents": accepted, "errors": errors}, status=status.HTTP_202_ACCEPTED)


class DocumentDetail(generics.RetrieveDestroyAPIView):
    serializer_class = DocumentSerializer

    def get_queryset(self):
        return selectors.documents_for_user(self.request.user).annotate(sentence_count=Count("sentences"))

    def perform_destroy(self, instance):
        require_corpus_admin(self.request.user, instance.corpus)
        services.document_delete(document=instance, actor=self.request.user)
