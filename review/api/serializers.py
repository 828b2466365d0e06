"""Shapes of the review API: they validate and present, the services decide."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from qa.selectors import ORIGINS
from review.models import Benchmark, EvaluationCaseResult, EvaluationRun, GoldCase, GoldCaseRevision, Review
from review.selectors import QUEUE_STATUSES


class ReviewCitationSerializer(serializers.Serializer):
    sentence_id = serializers.IntegerField(allow_null=True)
    document_external_id = serializers.CharField()
    document_title = serializers.CharField()
    label = serializers.CharField()
    text = serializers.CharField()


class ReviewSentenceSerializer(serializers.Serializer):
    ordinal = serializers.IntegerField()
    text = serializers.CharField()
    citations = ReviewCitationSerializer(many=True)


class ReviewSerializer(serializers.ModelSerializer):
    reviewer = serializers.CharField(source="reviewer.username")
    sentences = ReviewSentenceSerializer(many=True)

    class Meta:
        model = Review
        fields = [
            "id",
            "version",
            "action",
            "reason",
            "comment",
            "text",
            "refused",
            "sentences",
            "reviewer",
            "created_at",
        ]
        read_only_fields = fields


class ContentSentenceSerializer(serializers.Serializer):
    text = serializers.CharField()
    citations = ReviewCitationSerializer(many=True)


class AnswerContentSerializer(serializers.Serializer):
    text = serializers.CharField()
    refused = serializers.BooleanField()
    correction_version = serializers.IntegerField(allow_null=True)
    sentences = ContentSentenceSerializer(many=True)


class ReviewHistorySerializer(serializers.Serializer):
    answer = serializers.IntegerField()
    version = serializers.IntegerField(help_text="Decisions so far: the base_version of the next decision.")
    current = ReviewSerializer(allow_null=True, help_text="The latest decision, or null.")
    content = AnswerContentSerializer(help_text="The answer as its latest correction left it.")
    reviews = ReviewSerializer(many=True)


class CorrectionSentenceInput(serializers.Serializer):
    text = serializers.CharField(allow_blank=False)
    citations = serializers.ListField(child=serializers.IntegerField(min_value=1), default=list)


class ReviewInput(serializers.Serializer):
    action = serializers.ChoiceField(choices=Review.Action.choices)
    base_version = serializers.IntegerField(min_value=0, help_text="The number of decisions you saw.")
    reason = serializers.ChoiceField(choices=Review.Reason.choices, required=False, allow_blank=True)
    comment = serializers.CharField(required=False, allow_blank=True, default="")
    text = serializers.CharField(required=False, allow_blank=True)
    sentences = CorrectionSentenceInput(many=True, required=False)
    refused = serializers.BooleanField(required=False, allow_null=True, default=None)


class ReviewConflictSerializer(serializers.Serializer):
    detail = serializers.CharField()
    base_version = serializers.IntegerField()
    current_version = serializers.IntegerField()
    newer = ReviewSerializer(many=True, help_text="The decisions made since base_version, oldest first.")


class QueueQuery(serializers.Serializer):
    status = serializers.ChoiceField(choices=QUEUE_STATUSES, required=False)
    corpus = serializers.CharField(required=False, help_text="Corpus id or name.")
    preset = serializers.CharField(required=False)
    reviewer = serializers.CharField(required=False, help_text="User id or username of the latest decision.")
    assigned_to = serializers.CharField(
        required=False, help_text="User id or username: only the answers the split queue handed to them."
    )
    order = serializers.ChoiceField(
        choices=["oldest", "confidence"],
        required=False,
        help_text="oldest (default) or confidence: the least confident answers first.",
    )
    origin = serializers.ChoiceField(
        choices=ORIGINS,
        default="asked",
        help_text="asked: questions people asked (default); evaluation: an evaluation run's; all.",
    )


class QueueItemSerializer(serializers.Serializer):
    answer = serializers.IntegerField(source="pk")
    question = serializers.CharField(source="question.text")
    question_id = serializers.IntegerField(source="question.pk")
    corpus = serializers.CharField(source="question.corpus.name")
    preset = serializers.CharField(source="question.preset")
    is_evaluation = serializers.BooleanField(source="question.is_evaluation")
    text = serializers.CharField()
    refused = serializers.BooleanField()
    confidence = serializers.FloatField(allow_null=True)
    created_at = serializers.DateTimeField()
    review_count = serializers.IntegerField()
    latest_action = serializers.CharField(allow_null=True)
    latest_reason = serializers.CharField(allow_null=True)
    latest_reviewer = serializers.CharField(allow_null=True)
    latest_reviewed_at = serializers.DateTimeField(allow_null=True)
    assigned_to = serializers.CharField(
        source="assigned_reviewer", allow_null=True, help_text="Whom the split queue handed it to."
    )


class GoldFromAnswerInput(serializers.Serializer):
    benchmark = serializers.CharField(help_text="Benchmark name; created on the answer's corpus if missing.")
    split = serializers.ChoiceField(choices=GoldCase.Split.choices)


class BenchmarkSerializer(serializers.ModelSerializer):
    corpus = serializers.CharField(source="corpus.name", read_only=True)
    corpus_id = serializers.IntegerField(write_only=True)
    case_count = serializers.IntegerField(read_only=True, default=None)
    split_counts = serializers.SerializerMethodField()

    class Meta:
        model = Benchmark
        fields = [
            "id",
            "name",
            "description",
            "corpus",
            "corpus_id",
            "version",
            "source_format",
            "case_count",
            "split_counts",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "version", "source_format", "created_at", "updated_at"]
        # A taken name is the service's to refuse (BenchmarkExists: 409, as the schema documents),
        # after the role check; the model field's unique validator would answer 400 before it.
        extra_kwargs = {"name": {"validators": []}}

    @extend_schema_field(serializers.DictField(child=serializers.IntegerField()))
    def get_split_counts(self, benchmark) -> dict:
        return {split: getattr(benchmark, f"{split}_count", None) for split in GoldCase.Split.values}


class EvidenceSerializer(serializers.Serializer):
    key = serializers.CharField(help_text='"<document external id>#<sentence label>"')
    text = serializers.CharField(allow_blank=True)


class GoldCaseRevisionSerializer(serializers.ModelSerializer):
    changed_by = serializers.CharField(source="changed_by.username", allow_null=True, default=None)

    class Meta:
        model = GoldCaseRevision
        fields = [
            "revision",
            "benchmark_version",
            "snapshot",
            "note",
            "source_review",
            "changed_by",
            "created_at",
        ]
        read_only_fields = fields


class GoldCaseSerializer(serializers.ModelSerializer):
    corpus = serializers.CharField(source="corpus.name")
    gold_evidence = serializers.SerializerMethodField()

    class Meta:
        model = GoldCase
        fields = [
            "id",
            "case_id",
            "split",
            "corpus",
            "question",
            "gold_documents",
            "gold_evidence",
            "reference_answer",
            "answerable",
            "rubric",
            "provenance",
            "source_answer",
            "revision",
            "metadata",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    @extend_schema_field(EvidenceSerializer(many=True))
    def get_gold_evidence(self, case) -> list[dict]:
        return [{"key": key, "text": case.evidence_texts.get(key, "")} for key in case.gold_evidence]


class GoldCaseDetailSerializer(GoldCaseSerializer):
    revisions = GoldCaseRevisionSerializer(many=True, read_only=True)

    class Meta(GoldCaseSerializer.Meta):
        fields = [*GoldCaseSerializer.Meta.fields, "revisions"]
        read_only_fields = fields


class AnnotateInput(serializers.Serializer):
    document = serializers.IntegerField(help_text="Document id (in the benchmark's corpus).")
    question = serializers.CharField()
    evidence_sentence_ids = serializers.ListField(child=serializers.IntegerField(min_value=1), default=list)
    reference_answer = serializers.CharField(allow_blank=True, default="")
    answerable = serializers.BooleanField(default=True)
    split = serializers.ChoiceField(choices=GoldCase.Split.choices)
    rubric = serializers.JSONField(required=False, allow_null=True, default=None)


class EvaluationRunInput(serializers.Serializer):
    benchmark = serializers.CharField(help_text="Benchmark name or id.")
    preset = serializers.CharField()
    split = serializers.ChoiceField(
        choices=GoldCase.Split.choices, required=False, allow_blank=True, default=""
    )
    limit = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None)


class EvaluationRunSerializer(serializers.ModelSerializer):
    benchmark = serializers.CharField(source="benchmark.name")
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)
    progress = serializers.SerializerMethodField()
    status_url = serializers.SerializerMethodField()
    cases_url = serializers.SerializerMethodField()

    class Meta:
        model = EvaluationRun
        fields = [
            "id",
            "benchmark",
            "benchmark_version",
            "preset",
            "preset_config",
            "split",
            "case_limit",
            "convention",
            "status",
            "progress",
            "metrics",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
            "status_url",
            "cases_url",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.DictField(child=serializers.IntegerField()))
    def get_progress(self, run) -> dict:
        return {"done": run.progress_done, "total": run.progress_total}

    def get_status_url(self, run) -> str:
        return reverse("api-evaluation-detail", args=[run.pk], request=self.context.get("request"))

    def get_cases_url(self, run) -> str:
        return reverse("api-evaluation-cases", args=[run.pk], request=self.context.get("request"))


class EvaluationCaseResultSerializer(serializers.ModelSerializer):
    case_id = serializers.CharField(source="gold_case.case_id")
    split = serializers.CharField(source="gold_case.split")
    question_text = serializers.CharField(source="gold_case.question")

    class Meta:
        model = EvaluationCaseResult
        fields = [
            "id",
            "gold_case",
            "case_id",
            "split",
            "question_text",
            "gold_revision",
            "question",
            "answer",
            "prediction",
            "metrics",
            "error",
        ]
        read_only_fields = fields
