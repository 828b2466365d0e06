"""Shapes of the annotation API: tasks, queues, annotations, agreement and adjudication."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from review.models import Adjudication, Annotation, AnnotationTask, Assignment


class AskedTaskInput(serializers.Serializer):
    corpus = serializers.CharField(help_text="Corpus id or name (of your team).")
    questions = serializers.ChoiceField(
        choices=["reviewed", "flagged", "unreviewed", "all"],
        default="reviewed",
        help_text="Which questions analysts asked on the corpus, by their answer's latest review decision.",
    )
    benchmark = serializers.CharField(
        max_length=200,
        help_text="The benchmark the questions join as gold cases (made if no benchmark has this name); "
        "what the annotators agree on or a reviewer adjudicates is written into them.",
    )
    name = serializers.CharField(max_length=200)
    guidelines = serializers.CharField(required=False, allow_blank=True, default="")
    overlap = serializers.IntegerField(min_value=1, max_value=20, default=2)
    annotators = serializers.ListField(
        child=serializers.CharField(max_length=150), min_length=1, max_length=200
    )
    prefill = serializers.BooleanField(default=False, help_text="Start each item from the answer given.")
    limit = serializers.IntegerField(
        min_value=1, max_value=500, required=False, default=None, help_text="At most this many questions."
    )


class AnnotationTaskInput(serializers.Serializer):
    benchmark = serializers.CharField(help_text="Benchmark name or id (on a corpus of your team).")
    name = serializers.CharField(max_length=200)
    guidelines = serializers.CharField(required=False, allow_blank=True, default="")
    overlap = serializers.IntegerField(
        min_value=1, max_value=20, default=2, help_text="How many different annotators answer each question."
    )
    annotators = serializers.ListField(
        child=serializers.CharField(max_length=150),
        min_length=1,
        max_length=200,
        help_text="Usernames of the team's members (annotator role or above) who may annotate.",
    )
    case_ids = serializers.ListField(
        child=serializers.CharField(max_length=100),
        required=False,
        default=list,
        max_length=10000,
        help_text="Only these cases of the benchmark (default: all of them).",
    )
    prefill = serializers.BooleanField(
        default=False,
        help_text="Pre-fill each item with GroundedQA's answer (the answer the case was made from, else the "
        "latest evaluation run's), marked as its suggestion.",
    )


class AnnotationTaskSerializer(serializers.ModelSerializer):
    benchmark = serializers.CharField(source="benchmark.name")
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)
    annotators = serializers.SlugRelatedField(slug_field="username", many=True, read_only=True)
    assignment_count = serializers.IntegerField(read_only=True, default=None, allow_null=True)
    done_count = serializers.IntegerField(read_only=True, default=None, allow_null=True)
    skipped_count = serializers.IntegerField(read_only=True, default=None, allow_null=True)
    timed_items = serializers.IntegerField(
        source="timed_count",
        read_only=True,
        default=None,
        allow_null=True,
        help_text="Done items whose annotator opened them on the annotate page, so their time is known.",
    )
    median_seconds_per_item = serializers.FloatField(
        source="median_seconds",
        read_only=True,
        default=None,
        allow_null=True,
        help_text="Median seconds from opening an item's page to first submitting it, over the timed "
        "items; null when none is timed.",
    )

    class Meta:
        model = AnnotationTask
        fields = [
            "id",
            "name",
            "benchmark",
            "guidelines",
            "overlap",
            "prefill",
            "annotators",
            "assignment_count",
            "done_count",
            "skipped_count",
            "timed_items",
            "median_seconds_per_item",
            "created_by",
            "created_at",
        ]
        read_only_fields = fields


class AnnotationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Annotation
        fields = [
            "answerability",
            "evidence",
            "evidence_texts",
            "opened_documents",
            "reference_answer",
            "question_type",
            "prefilled",
            "suggestion",
            "rubric",
            "updated_at",
        ]
        read_only_fields = fields


class AssignmentSerializer(serializers.ModelSerializer):
    task = serializers.IntegerField(source="task_id")
    case = serializers.IntegerField(source="gold_case_id")
    case_id = serializers.CharField(source="gold_case.case_id")
    split = serializers.CharField(source="gold_case.split")
    question = serializers.CharField(source="gold_case.question")
    annotation = serializers.SerializerMethodField()
    seconds_spent = serializers.SerializerMethodField(
        help_text="Seconds from first opening the item's page to first submitting it; null if either "
        "is not recorded."
    )

    class Meta:
        model = Assignment
        fields = [
            "id",
            "task",
            "case",
            "case_id",
            "split",
            "question",
            "status",
            "skip_reason",
            "opened_at",
            "submitted_at",
            "seconds_spent",
            "annotation",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_seconds_spent(self, assignment):
        if assignment.opened_at is None or assignment.submitted_at is None:
            return None
        return (assignment.submitted_at - assignment.opened_at).total_seconds()

    @extend_schema_field(AnnotationSerializer(allow_null=True))
    def get_annotation(self, assignment):
        # The queue selector joined it (select_related): no query per row.
        annotation = getattr(assignment, "annotation", None) if assignment.status == "done" else None
        return AnnotationSerializer(annotation).data if annotation is not None else None


class QueueProgressSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    skipped = serializers.IntegerField()
    pending = serializers.IntegerField()


class QueueSerializer(serializers.Serializer):
    task = AnnotationTaskSerializer()
    progress = QueueProgressSerializer()
    assignments = AssignmentSerializer(many=True)


class AnnotationInput(serializers.Serializer):
    answerability = serializers.ChoiceField(choices=Annotation.Answerability.choices)
    evidence_sentence_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**62), default=list, max_length=1000
    )
    reference_answer = serializers.CharField(allow_blank=True, default="", max_length=20000)
    opened_document_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**62),
        default=list,
        max_length=1000,
        help_text="Documents you opened while annotating: with the cited ones, the candidate set of "
        "evidence agreement.",
    )
    question_type = serializers.CharField(allow_blank=True, default="", max_length=50)
    rubric = serializers.JSONField(
        required=False,
        allow_null=True,
        default=None,
        help_text="What an answer scoring 1-5 looks like, as a gold case's rubric: "
        '{"description": ..., "scale": {"1": ..., "5": ...}}.',
    )
    prefilled = serializers.BooleanField(
        default=False,
        help_text="You started from GroundedQA's suggestion (tasks with prefill only); it is stored with "
        "your answer so agreement with it is reported apart.",
    )


class SkipInput(serializers.Serializer):
    reason = serializers.CharField(max_length=2000, help_text="Why you skip this question.")


class AdjudicationInput(serializers.Serializer):
    answerability = serializers.ChoiceField(choices=Annotation.Answerability.choices)
    evidence_sentence_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**62), default=list, max_length=1000
    )
    reference_answer = serializers.CharField(allow_blank=True, default="", max_length=20000)


class PairAgreementSerializer(serializers.Serializer):
    annotator_a = serializers.CharField()
    annotator_b = serializers.CharField()
    items = serializers.IntegerField()
    answerability_kappa = serializers.FloatField(allow_null=True)
    evidence_kappa = serializers.FloatField(allow_null=True)
    evidence_units = serializers.IntegerField()
    evidence_f1 = serializers.FloatField(allow_null=True)


class ItemAgreementSerializer(serializers.Serializer):
    case = serializers.IntegerField()
    case_id = serializers.CharField()
    annotators = serializers.ListField(child=serializers.CharField())
    labels = serializers.ListField(child=serializers.CharField())
    labels_agree = serializers.BooleanField()
    evidence_f1 = serializers.FloatField(allow_null=True)
    evidence_f1_min = serializers.FloatField(allow_null=True)
    evidence_alpha = serializers.FloatField(allow_null=True)
    candidates = serializers.IntegerField()
    disagreement = serializers.BooleanField()
    adjudicated = serializers.BooleanField()


class SuggestionAgreementSerializer(serializers.Serializer):
    annotations = serializers.IntegerField(help_text="Annotations that started from GroundedQA's answer.")
    labels_kept = serializers.FloatField(allow_null=True, help_text="The share that kept its label.")
    evidence_f1 = serializers.FloatField(
        allow_null=True, help_text="Mean F1 of the annotator's evidence with GroundedQA's cited sentences."
    )
    unchanged = serializers.IntegerField(help_text="Kept both the label and exactly the cited sentences.")


class AgreementSerializer(serializers.Serializer):
    task = serializers.IntegerField()
    candidate_set = serializers.CharField(help_text="The sentences evidence agreement counts, per question.")
    f1_threshold = serializers.FloatField(
        help_text="A question goes to adjudication when its labels differ or a pair's evidence F1 is "
        "below this."
    )
    annotators = serializers.ListField(child=serializers.CharField())
    items = serializers.IntegerField()
    answerability_alpha = serializers.FloatField(allow_null=True)
    evidence_alpha = serializers.FloatField(allow_null=True)
    evidence_units = serializers.IntegerField()
    evidence_f1 = serializers.FloatField(allow_null=True)
    answerability_kappa_mean = serializers.FloatField(allow_null=True)
    evidence_kappa_mean = serializers.FloatField(allow_null=True)
    pairs = PairAgreementSerializer(many=True)
    per_item = ItemAgreementSerializer(many=True)
    with_suggestion = SuggestionAgreementSerializer(
        help_text="Pre-filled annotations against GroundedQA's suggestion, apart from the figures above."
    )


class SideBySideSerializer(serializers.Serializer):
    annotator = serializers.CharField()
    answerability = serializers.CharField()
    evidence = serializers.ListField(child=serializers.CharField())
    evidence_texts = serializers.DictField(child=serializers.CharField())
    reference_answer = serializers.CharField(allow_blank=True)


class AdjudicationSerializer(serializers.ModelSerializer):
    adjudicator = serializers.CharField(source="adjudicator.username")
    case = serializers.IntegerField(source="gold_case_id")

    class Meta:
        model = Adjudication
        fields = [
            "id",
            "case",
            "adjudicator",
            "answerability",
            "evidence",
            "reference_answer",
            "annotators",
            "agreement",
            "gold_revision",
            "created_at",
        ]
        read_only_fields = fields


class AdjudicationItemSerializer(serializers.Serializer):
    agreement = ItemAgreementSerializer()
    question = serializers.CharField()
    annotations = SideBySideSerializer(many=True)
    adjudication = AdjudicationSerializer(allow_null=True)


class AgreedToGoldSerializer(serializers.Serializer):
    written = serializers.IntegerField(help_text="Gold cases changed (0 when run again with nothing new).")


class ReviewSplitInput(serializers.Serializer):
    corpus = serializers.CharField(help_text="Corpus id or name (one of your team's).")
    reviewers = serializers.ListField(
        child=serializers.CharField(max_length=150),
        min_length=1,
        max_length=200,
        help_text="Usernames of the team's members (annotator role or above).",
    )
    limit = serializers.IntegerField(
        min_value=1, required=False, allow_null=True, default=None, help_text="At most this many answers."
    )


class ReviewProgressSerializer(serializers.Serializer):
    reviewer = serializers.CharField()
    assigned = serializers.IntegerField()
    reviewed = serializers.IntegerField()
    waiting = serializers.IntegerField()


class ReviewSplitSerializer(serializers.Serializer):
    assigned = serializers.IntegerField(help_text="Answers handed out now (0 when none was left).")
    progress = ReviewProgressSerializer(many=True)
