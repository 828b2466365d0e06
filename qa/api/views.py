"""REST endpoints for asking questions and reading answers."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from documents import permissions
from documents.selectors import corpus_get_for_user, team_get_for_user
from groundedqa_site.schema import VALIDATION_ERROR
from qa import presets, scopes, selectors, services
from qa.api.serializers import (
    AskSerializer,
    HistoryQuery,
    QuestionSerializer,
    QuestionWaitQuery,
    TeamPresetInput,
    TeamPresetSerializer,
)
from qa.models import Conversation
from qa.pipeline.reading.dates import MAX_SOURCES


class QuestionListCreate(generics.ListAPIView):
    """The user's questions, newest first, in pages (``?page=N``; ``?q=`` searches the text;
    ``?origin=evaluation`` or ``all`` shows evaluation runs' questions, left out by default)."""

    serializer_class = QuestionSerializer

    @extend_schema(parameters=[HistoryQuery])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        query = HistoryQuery(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        return selectors.with_answer(
            selectors.question_history(
                self.request.user, search=query.validated_data["q"], origin=query.validated_data["origin"]
            )
        )

    @extend_schema(
        request=AskSerializer,
        responses={
            202: QuestionSerializer,
            400: OpenApiResponse(
                response=VALIDATION_ERROR,
                description="The request is invalid; the body says why: an empty question, an unknown "
                "preset or parameter, an empty date range (published_from after published_to), more "
                f"than {MAX_SOURCES} sources, or a source the corpus has no documents from.",
            ),
        },
    )
    def post(self, request):
        ask = AskSerializer(data=request.data)
        ask.is_valid(raise_exception=True)
        data = ask.validated_data
        corpus_ref = data["corpus"]
        if corpus_ref.isdigit():
            corpus = corpus_get_for_user(request.user, pk=int(corpus_ref))
        else:
            corpus = corpus_get_for_user(request.user, name=corpus_ref)
        conversation = None
        if "conversation" in data:
            conversation = Conversation.objects.filter(pk=data["conversation"], user=request.user).first()
            if conversation is None:
                raise Http404("No such conversation.")
        scope = scopes.scope_for(
            corpus=corpus,
            published_from=data.get("published_from"),
            published_to=data.get("published_to"),
            sources=data.get("sources", ()),
        )
        question = services.question_ask(
            user=request.user,
            corpus=corpus,
            text=data["question"],
            preset=data["preset"],
            conversation=conversation,
            parameters=data.get("parameters"),
            scope=scope,
        )
        body = QuestionSerializer(question, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["status_url"]})


class QuestionDetail(generics.RetrieveAPIView):
    """One of your questions: its status, and its answer and trace once done. With ``?wait=N`` a
    question still queued or running is answered when it ends (or after N seconds, as it is then)."""

    serializer_class = QuestionSerializer

    @extend_schema(parameters=[QuestionWaitQuery])
    def get(self, request, *args, **kwargs):
        query = QuestionWaitQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        if query.validated_data["wait"]:
            selectors.question_wait_finished(self.get_object(), seconds=query.validated_data["wait"])
        return super().get(request, *args, **kwargs)

    def get_object(self):
        return selectors.question_get_for_user(self.request.user, self.kwargs["pk"])


class PresetList(APIView):
    @extend_schema(
        responses={200: OpenApiResponse(description="Every preset's full configuration, by name.")}
    )
    def get(self, request):
        return Response([presets.get_preset(name).to_dict() for name in presets.PRESET_NAMES])


class TeamPresetListCreate(generics.ListAPIView):
    """The presets your teams saved (GET), or save one for a team you administer (POST -> 201).

    A team preset is a built-in preset (``base``) plus ``parameters``; ask with
    it by name (``preset`` of POST /api/questions/, on a corpus of that team)
    and evaluate it with ``manage.py evaluate --preset NAME``.
    """

    serializer_class = TeamPresetSerializer

    def get_queryset(self):
        return selectors.team_presets_for_user(self.request.user)

    @extend_schema(request=TeamPresetInput, responses={201: TeamPresetSerializer})
    def post(self, request):
        body = TeamPresetInput(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        team = team_get_for_user(request.user, data["team"])
        permissions.require_role(request.user, team, "manage presets")
        preset = services.team_preset_create(
            user=request.user,
            team=team,
            name=data["name"],
            description=data["description"],
            base=data["base"],
            parameters=data["parameters"],
        )
        return Response(TeamPresetSerializer(preset).data, status=status.HTTP_201_CREATED)


class TeamPresetDetail(generics.RetrieveDestroyAPIView):
    """One of your teams' presets; DELETE removes it (questions and runs that used it keep their
    configuration). The team's admins may delete it."""

    serializer_class = TeamPresetSerializer

    def get_object(self):
        return selectors.team_preset_get_for_user(self.request.user, self.kwargs["pk"])

    def perform_destroy(self, instance):
        permissions.require_role(self.request.user, instance.team, "manage presets")
        services.team_preset_delete(user=self.request.user, preset=instance)
