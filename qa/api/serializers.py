from __future__ import annotations

from rest_framework import serializers
from rest_framework.reverse import reverse

from qa import presets
from qa.models import Answer, AnswerSentence, Citation, Question
from qa.selectors import ORIGINS


class AskSerializer(serializers.Serializer):
    corpus = serializers.CharField(help_text="Corpus id or name.")
    question = serializers.CharField(max_length=2000)
    preset = serializers.ChoiceField(
        choices=presets.PRESET_NAMES, default=presets.default_preset, help_text="Default: QA_DEFAULT_PRESET."
    )
    conversation = serializers.IntegerField(
        required=False, help_text="Continue this conversation (follow-up)."
    )


class HistoryQuery(serializers.Serializer):
    q = serializers.CharField(required=False, default="", allow_blank=True, help_text="Search text.")
    origin = serializers.ChoiceField(
        choices=ORIGINS,
        default="asked",
        help_text="asked: your own questions (default); evaluation: your evaluation runs'; all.",
    )


class CitationSerializer(serializers.ModelSerializer):
    document = serializers.CharField(source="document_external_id")
    sentence = serializers.CharField(source="label")

    class Meta:
        model = Citation
        fields = [
            "document",
            "document_title",
            "document_pk",
            "sentence",
            "sentence_ordinal",
            "text",
            "start",
            "end",
        ]


class AnswerSentenceSerializer(serializers.ModelSerializer):
    citations = CitationSerializer(many=True)

    class Meta:
        model = AnswerSentence
        fields = ["ordinal", "text", "support", "citations"]


class AnswerSerializer(serializers.ModelSerializer):
    sentences = AnswerSentenceSerializer(many=True)

    class Meta:
        model = Answer
        fields = [
            "id",
            "text",
            "refused",
            "disagreement",
            "verified",
            "confidence",
            "note",
            "retrieved_documents",
            "sentences",
        ]


class QuestionSerializer(serializers.ModelSerializer):
    corpus = serializers.CharField(source="corpus.name")
    answer = serializers.SerializerMethodField()
    status_url = serializers.SerializerMethodField()

    class Meta:
        model = Question
        fields = [
            "id",
            "corpus",
            "conversation",
            "text",
            "standalone_text",
            "preset",
            "is_evaluation",
            "status",
            "stage",
            "attempts",
            "error",
            "answer",
            "config",
            "trace",
            "created_at",
            "started_at",
            "finished_at",
            "status_url",
        ]

    def get_answer(self, question: Question) -> dict | None:
        answer = getattr(question, "answer", None) if question.status == Question.Status.DONE else None
        return AnswerSerializer(answer).data if answer else None

    def get_status_url(self, question: Question) -> str:
        return reverse("api-question-detail", args=[question.pk], request=self.context.get("request"))
