"""REST endpoints for corpora and documents: parse input, call a service or selector, shape output."""

from __future__ import annotations

from django.db.models import Count
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from documents import permissions, selectors, services
from documents.api.serializers import CorpusSerializer, DocumentSerializer, UploadSerializer
from groundedqa_site.api import status_for


def require_staff(user) -> None:
    if not permissions.can_manage_corpora(user):
        raise PermissionDenied("Only staff may change corpora.")


class CorpusListCreate(generics.ListCreateAPIView):
    serializer_class = CorpusSerializer

    def get_queryset(self):
        return selectors.corpora_with_counts(self.request.user)

    def perform_create(self, serializer):
        require_staff(self.request.user)
        team = serializer.validated_data["team"]
        if not permissions.is_member(self.request.user, team):
            # As for a team that does not exist: other teams' names are not disclosed.
            raise NotFound(f"No team named {team.name!r}.")
        serializer.instance = services.corpus_create(
            name=serializer.validated_data["name"],
            team=team,
            description=serializer.validated_data.get("description", ""),
            actor=self.request.user,
        )


class CorpusDetail(generics.RetrieveDestroyAPIView):
    serializer_class = CorpusSerializer

    def get_queryset(self):
        return selectors.corpora_with_counts(self.request.user)

    def perform_destroy(self, instance):
        require_staff(self.request.user)
        services.corpus_delete(corpus=instance, actor=self.request.user)


class CorpusDocuments(APIView):
    """List a corpus's documents, or upload files into it (staff)."""

    parser_classes = [MultiPartParser]  # files need multipart; a urlencoded form cannot carry them

    @extend_schema(responses=DocumentSerializer(many=True))
    def get(self, request, pk):
        corpus = selectors.corpus_get_for_user(request.user, pk=pk)
        documents = selectors.documents_for_user(request.user).filter(corpus=corpus)
        return Response(DocumentSerializer(documents, many=True, context={"request": request}).data)

    @extend_schema(request=UploadSerializer, responses={202: DocumentSerializer(many=True)})
    def post(self, request, pk):
        corpus = selectors.corpus_get_for_user(request.user, pk=pk)
        require_staff(request.user)
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
        require_staff(self.request.user)
        services.document_delete(document=instance, actor=self.request.user)
