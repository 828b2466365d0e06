"""REST endpoints for the intrinsics on their own, one corpus each (``/api/corpora/{id}/...``).

Every endpoint is a POST that reads and stores nothing: parse the body, call
one function of ``qa.intrinsics``, shape its typed result. One base view
holds that sequence; each endpoint names its request and response shapes.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from documents.api.fields import TextField
from documents.selectors import corpus_get_for_user
from qa import intrinsics, presets
from qa.pipeline.checks.answerability import ANSWER_KINDS
from qa.pipeline.checks.relevance import IRRELEVANT, PARTIALLY_RELEVANT, RELEVANT
from qa.pipeline.flow.intrinsics import SENTENCE_LABELS

RETRIEVING_PRESETS = tuple(name for name in presets.PRESET_NAMES if presets.get_preset(name).retrieval)

# --- requests --------------------------------------------------------------------------------


class CiteRequest(serializers.Serializer):
    text = TextField(
        max_length=intrinsics.MAX_TEXT_CHARS, help_text="A response written elsewhere (an LLM's, a person's)."
    )


class QuestionRequest(serializers.Serializer):
    question = TextField(max_length=intrinsics.MAX_QUESTION_CHARS)
    preset = serializers.CharField(
        max_length=100,
        required=False,
        help_text="Whose retrieval and reranker find the passages: a built-in preset that retrieves ("
        + ", ".join(RETRIEVING_PRESETS)
        + ") or a preset of the corpus's team (GET /api/team-presets/). Default: QA_DEFAULT_PRESET.",
    )


class AnswerRequest(QuestionRequest):
    answer = TextField(max_length=intrinsics.MAX_TEXT_CHARS, help_text="The answer to check.")


# --- responses -------------------------------------------------------------------------------


class CitedSentenceSerializer(serializers.Serializer):
    document = serializers.CharField(source="document_id", help_text="The document's external id.")
    document_title = serializers.CharField(allow_blank=True)
    sentence = serializers.CharField(source="label", help_text='The sentence\'s name in its document ("S7").')
    sentence_id = serializers.IntegerField(source="id")
    sentence_ordinal = serializers.IntegerField(source="ordinal")
    text = serializers.CharField()


class SentenceSupportSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="0-based position in the text.")
    text = serializers.CharField()
    label = serializers.ChoiceField(choices=SENTENCE_LABELS)
    risk = serializers.FloatField(
        help_text="0 = safest, 1 = most likely unsupported. A ranking heuristic (the label's third of "
        "[0, 1], then how weakly the cited text matches), not a probability."
    )
    reason = serializers.CharField()
    coverage = serializers.FloatField(
        allow_null=True, help_text="Share of its content words in the citations."
    )
    similarity = serializers.FloatField(allow_null=True, help_text="Cosine to the cited text.")
    citations = CitedSentenceSerializer(many=True)


class LabelCountsSerializer(serializers.Serializer):
    supported = serializers.IntegerField()
    partial = serializers.IntegerField()
    unsupported = serializers.IntegerField()
    no_claim = serializers.IntegerField()


class CiteResponse(serializers.Serializer):
    corpus = serializers.IntegerField()
    sentences = SentenceSupportSerializer(many=True)
    counts = LabelCountsSerializer()


class AnswerabilitySerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=ANSWER_KINDS)
    probability = serializers.FloatField(help_text="That the corpus answers the question.")
    reason = serializers.CharField()
    judge = serializers.CharField(help_text="signals (no LLM) or llm.")
    missing = serializers.ListField(child=serializers.CharField(), help_text="What is asked and not stated.")
    signals = serializers.DictField(child=serializers.FloatField(), allow_null=True)


class AnswerabilityResponse(serializers.Serializer):
    corpus = serializers.IntegerField()
    question = serializers.CharField()
    answerability = AnswerabilitySerializer()
    substitutions = serializers.ListField(child=serializers.CharField())


class PassageJudgementSerializer(serializers.Serializer):
    rank = serializers.IntegerField(help_text="1 = best.")
    key = serializers.CharField()
    document = serializers.CharField()
    title = serializers.CharField(allow_blank=True)
    label = serializers.ChoiceField(choices=(RELEVANT, PARTIALLY_RELEVANT, IRRELEVANT))
    score = serializers.FloatField()
    sentence_cosine = serializers.FloatField()
    focus_coverage = serializers.FloatField()
    text = serializers.CharField(allow_blank=True, help_text="The passage, cut to 300 characters.")


class ContextRelevanceResponse(serializers.Serializer):
    corpus = serializers.IntegerField()
    question = serializers.CharField()
    passages = PassageJudgementSerializer(many=True)
    substitutions = serializers.ListField(child=serializers.CharField())


class AnswerRelevanceSerializer(serializers.Serializer):
    score = serializers.FloatField()
    cosine = serializers.FloatField()
    focus_coverage = serializers.FloatField()
    type_stated = serializers.BooleanField()
    addresses = serializers.BooleanField()
    reason = serializers.CharField()


class AnswerCheckSerializer(serializers.Serializer):
    probability = serializers.FloatField(help_text="p(the question is answerable), given this answer.")
    threshold = serializers.FloatField()
    addresses_question = serializers.BooleanField()
    reason = serializers.CharField()
    relevance = AnswerRelevanceSerializer()


class AnswerCheckResponse(serializers.Serializer):
    corpus = serializers.IntegerField()
    question = serializers.CharField()
    answerability = AnswerabilitySerializer()
    check = AnswerCheckSerializer()
    sentences = SentenceSupportSerializer(many=True)
    counts = LabelCountsSerializer()
    substitutions = serializers.ListField(child=serializers.CharField())


# --- views -------------------------------------------------------------------------------------


class _CorpusIntrinsic(APIView):
    request_shape: type[serializers.Serializer]
    response_shape: type[serializers.Serializer]

    def post(self, request, pk):
        corpus = corpus_get_for_user(request.user, pk=pk)
        body = self.request_shape(data=request.data)
        body.is_valid(raise_exception=True)
        return Response(self.response_shape(self.answer(corpus, body.validated_data)).data)

    def answer(self, corpus, data: dict) -> dict:
        raise NotImplementedError


@extend_schema(request=CiteRequest, responses={200: CiteResponse})
class CiteText(_CorpusIntrinsic):
    """Citations for a text written elsewhere: per sentence, the corpus sentences that support it,
    a label (supported / partial / unsupported / no_claim) and a risk score."""

    request_shape, response_shape = CiteRequest, CiteResponse

    def answer(self, corpus, data):
        return intrinsics.cite_data(corpus=corpus, text=data["text"])


@extend_schema(request=QuestionRequest, responses={200: AnswerabilityResponse})
class Answerability(_CorpusIntrinsic):
    """Can the corpus answer the question? answerable / partial / underspecified / unanswerable,
    with a calibrated probability and the signals behind it."""

    request_shape, response_shape = QuestionRequest, AnswerabilityResponse

    def answer(self, corpus, data):
        return intrinsics.answerability_data(
            corpus=corpus, question=data["question"], preset=data.get("preset")
        )


@extend_schema(request=QuestionRequest, responses={200: ContextRelevanceResponse})
class ContextRelevance(_CorpusIntrinsic):
    """The passages retrieval would hand generation, each relevant / partial / irrelevant
    (irrelevant ones never reach generation)."""

    request_shape, response_shape = QuestionRequest, ContextRelevanceResponse

    def answer(self, corpus, data):
        return intrinsics.context_data(corpus=corpus, question=data["question"], preset=data.get("preset"))


@extend_schema(request=AnswerRequest, responses={200: AnswerCheckResponse})
class AnswerCheck(_CorpusIntrinsic):
    """An answer checked sentence by sentence against the corpus (hallucination detection) and as a
    whole against the question: supported sentences that do not address it are flagged."""

    request_shape, response_shape = AnswerRequest, AnswerCheckResponse

    def answer(self, corpus, data):
        return intrinsics.answer_check_data(
            corpus=corpus, question=data["question"], answer=data["answer"], preset=data.get("preset")
        )
