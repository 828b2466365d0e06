"""Reviews of answers, gold cases grouped into benchmarks, and evaluation runs.

Everything that records a human judgement is append-only: a review decision
is never edited (the latest is the current one), and a gold case keeps every
earlier state as a GoldCaseRevision. Decisions are numbered per answer and
(answer, version) is unique, so two reviewers acting on the same state cannot
both be stored as the next decision.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from documents.models import Corpus, Sentence
from groundedqa_site.jobs import LeasedJob
from qa.models import Answer, Question


class Review(models.Model):
    """One reviewer decision on an answer; ``version`` n is the answer's n-th decision."""

    class Action(models.TextChoices):
        ACCEPT = "accept"
        FLAG = "flag"
        CORRECT = "correct"

    class Reason(models.TextChoices):
        WRONG = "wrong"
        INCOMPLETE = "incomplete"
        UNSUPPORTED_CLAIM = "unsupported_claim", "unsupported claim"
        WRONG_CITATION = "wrong_citation", "wrong citation"
        SHOULD_HAVE_REFUSED = "should_have_refused", "should have refused"
        OTHER = "other"

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="reviews")
    version = models.PositiveIntegerField()
    action = models.CharField(max_length=16, choices=Action.choices)
    reason = models.CharField(max_length=32, choices=Reason.choices, blank=True)
    comment = models.TextField(blank=True)
    # The corrected answer text; empty unless action is "correct".
    text = models.TextField(blank=True)
    # Whether the corrected answer is a refusal; None unless action is "correct".
    refused = models.BooleanField(null=True, blank=True)
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="reviews")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["answer_id", "version"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "version"], name="review_unique_version"),
            models.CheckConstraint(condition=Q(version__gte=1), name="review_version_positive"),
            models.CheckConstraint(
                condition=~Q(action="flag") | ~Q(reason=""), name="review_flag_has_reason"
            ),
        ]
        indexes = [models.Index(fields=["reviewer", "-created_at"])]

    def __str__(self) -> str:
        return f"answer {self.answer_id} v{self.version}: {self.action}"


class ReviewSentence(models.Model):
    """A sentence of a corrected answer."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="sentences")
    ordinal = models.PositiveIntegerField()
    text = models.TextField()

    class Meta:
        ordering = ["ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["review", "ordinal"], name="review_sentence_unique_ordinal")
        ]

    def __str__(self) -> str:
        return self.text[:80]


class ReviewCitation(models.Model):
    """A source sentence a corrected answer sentence cites.

    Like qa.models.Citation it copies the sentence's document id, label and
    text: re-ingesting the document replaces its Sentence rows, and the
    correction must keep saying exactly what it cited.
    """

    review_sentence = models.ForeignKey(ReviewSentence, on_delete=models.CASCADE, related_name="citations")
    ordinal = models.PositiveIntegerField()
    sentence = models.ForeignKey(Sentence, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    document_external_id = models.CharField(max_length=500)
    document_title = models.CharField(max_length=500, blank=True)
    label = models.CharField(max_length=32)
    text = models.TextField()

    class Meta:
        ordering = ["ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["review_sentence", "ordinal"], name="review_citation_unique_ordinal"
            )
        ]

    def __str__(self) -> str:
        return f"{self.document_external_id}#{self.label}"


class Benchmark(models.Model):
    """A named set of gold cases over one corpus; ``version`` goes up with every change."""

    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    # Deleting a corpus deletes its questions, answers and reviews (qa cascades), and its benchmarks.
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="benchmarks")
    # "analyst-bench", "clapnq" or "jsonl" when imported; empty when built in the app.
    source_format = models.CharField(max_length=32, blank=True)
    source_path = models.CharField(max_length=1000, blank=True)
    version = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class GoldCase(models.Model):
    """A question with its gold documents, evidence and reference answer.

    ``gold_evidence`` holds evidence keys in review.evaluation's scheme
    ("<document external id>#<sentence label>") and ``evidence_texts`` the
    sentence text under each key, copied so the case survives re-ingestion.
    The row is the current state; every state, this one included, is also a
    GoldCaseRevision.
    """

    class Split(models.TextChoices):
        TRAIN = "train"
        DEV = "dev"
        TEST = "test"

    class Provenance(models.TextChoices):
        IMPORTED = "imported"
        REVIEW = "review"
        ANNOTATED = "annotated"
        # Written by a reviewer's adjudication of an annotation task (metadata["annotation"] says whose).
        ADJUDICATED = "adjudicated"
        # Written from an annotation task's annotators where they agreed (metadata["annotation"]).
        AGREED = "agreed"
        # A question an analyst asked, taken into a benchmark to be annotated (source_answer is its answer).
        ASKED = "asked"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="cases")
    case_id = models.CharField(max_length=100)
    split = models.CharField(max_length=8, choices=Split.choices)
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="gold_cases")
    question = models.TextField()
    gold_documents = models.JSONField(default=list, blank=True)
    gold_evidence = models.JSONField(default=list, blank=True)
    evidence_texts = models.JSONField(default=dict, blank=True)
    reference_answer = models.TextField(blank=True)
    answerable = models.BooleanField(default=True)
    rubric = models.JSONField(null=True, blank=True)
    provenance = models.CharField(max_length=16, choices=Provenance.choices)
    source_answer = models.ForeignKey(
        Answer, null=True, blank=True, on_delete=models.SET_NULL, related_name="gold_cases"
    )
    # Source fields with no column of their own (question_type, CLAPNQ id, file and line).
    metadata = models.JSONField(default=dict, blank=True)
    revision = models.PositiveIntegerField(default=1)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["benchmark_id", "split", "case_id"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "split", "case_id"], name="gold_case_unique_id"),
        ]

    def __str__(self) -> str:
        return f"{self.split}/{self.case_id}"


class GoldCaseRevision(models.Model):
    """One state of a gold case; revision 1 is the state it was created with."""

    gold_case = models.ForeignKey(GoldCase, on_delete=models.CASCADE, related_name="revisions")
    revision = models.PositiveIntegerField()
    benchmark_version = models.PositiveIntegerField()
    snapshot = models.JSONField()
    note = models.CharField(max_length=300, blank=True)
    source_review = models.ForeignKey(
        Review, null=True, blank=True, on_delete=models.SET_NULL, related_name="gold_revisions"
    )
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["gold_case_id", "revision"]
        constraints = [
            models.UniqueConstraint(fields=["gold_case", "revision"], name="gold_revision_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.gold_case_id} r{self.revision}"


class EvaluationRun(LeasedJob):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="runs")
    benchmark_version = models.PositiveIntegerField()
    preset = models.CharField(max_length=50)
    preset_config = models.JSONField(default=dict)
    split = models.CharField(max_length=8, blank=True)  # empty: every split
    case_limit = models.PositiveIntegerField(null=True, blank=True)
    convention = models.CharField(max_length=16, default="report")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    metrics = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The question the case in progress asked, recorded before its stages run: a run resumed after
    # its worker died mid-case adopts it instead of asking the case a second time.
    asking = models.ForeignKey(Question, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status"])]

    def __str__(self) -> str:
        return f"run {self.pk}: {self.benchmark_id} {self.preset} {self.status}"


class EvaluationCaseResult(models.Model):
    """One gold case in one run: the question it asked, what came back, and its scores."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="case_results")
    gold_case = models.ForeignKey(GoldCase, on_delete=models.CASCADE, related_name="results")
    gold_revision = models.PositiveIntegerField()
    question = models.ForeignKey(Question, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    answer = models.ForeignKey(
        Answer, null=True, blank=True, on_delete=models.SET_NULL, related_name="evaluation_results"
    )
    prediction = models.JSONField(default=dict, blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "gold_case"], name="evaluation_case_unique"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} case {self.gold_case_id}"


class AnnotationTask(models.Model):
    """Questions of a benchmark handed to several annotators, so their agreement can be measured.

    Each gold case of the benchmark (or of the cases chosen at creation) is an item; each item is
    assigned to ``overlap`` of the task's annotators, never twice to one person.
    """

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="annotation_tasks")
    name = models.CharField(max_length=200)
    guidelines = models.TextField(blank=True)
    overlap = models.PositiveSmallIntegerField(default=2)
    # Start each item from GroundedQA's answer (its label, cited sentences and text), marked as such.
    prefill = models.BooleanField(default=False)
    annotators = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="annotation_tasks")
    # The items: chosen once at creation, so assigning again later hands out the same questions.
    cases = models.ManyToManyField(GoldCase, related_name="annotation_tasks")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(overlap__gte=1), name="annotation_task_overlap_positive"),
        ]

    def __str__(self) -> str:
        return f"task {self.pk}: {self.name}"


class Assignment(models.Model):
    """One item of a task for one annotator: (task, gold case, annotator) is unique."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        SKIPPED = "skipped"

    task = models.ForeignKey(AnnotationTask, on_delete=models.CASCADE, related_name="assignments")
    gold_case = models.ForeignKey(GoldCase, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    skip_reason = models.TextField(blank=True)
    # Server-side, so the time per item cannot be faked by a client: when the annotator first opened
    # the item's page, and when they first submitted an answer to it (a later edit keeps both).
    opened_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["task_id", "gold_case_id", "annotator_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["task", "gold_case", "annotator"], name="assignment_unique_per_annotator"
            ),
            models.CheckConstraint(
                condition=~Q(status="skipped") | ~Q(skip_reason=""), name="assignment_skip_has_reason"
            ),
        ]
        indexes = [models.Index(fields=["annotator", "status"])]

    def __str__(self) -> str:
        return f"task {self.task_id} case {self.gold_case_id} -> {self.annotator_id}: {self.status}"


class Annotation(models.Model):
    """What one annotator answered for one assignment (the latest submission).

    ``evidence`` holds evidence keys as GoldCase.gold_evidence does, with their texts copied, so
    it survives re-ingestion; ``opened_documents`` are the external ids of the documents the
    annotator opened, which with the cited ones make the candidate set of evidence agreement.
    """

    class Answerability(models.TextChoices):
        ANSWERABLE = "answerable"
        PARTIAL = "partial"
        UNANSWERABLE = "unanswerable"

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="annotation")
    answerability = models.CharField(max_length=16, choices=Answerability.choices)
    evidence = models.JSONField(default=list, blank=True)
    evidence_texts = models.JSONField(default=dict, blank=True)
    opened_documents = models.JSONField(default=list, blank=True)
    reference_answer = models.TextField(blank=True)
    question_type = models.CharField(max_length=50, blank=True)
    # Whether the annotator started from GroundedQA's answer, and that answer as it was suggested
    # ({"answer": pk, "answerability", "evidence": keys}), so agreement with it is reported apart.
    prefilled = models.BooleanField(default=False)
    suggestion = models.JSONField(default=dict, blank=True)
    # What an answer to the question scoring 1-5 looks like, as GoldCase.rubric holds it; None if not given.
    rubric = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"annotation of assignment {self.assignment_id}: {self.answerability}"


class Adjudication(models.Model):
    """A reviewer's decision on an item the annotators disagreed on; it is written into the gold case.

    ``annotators`` and ``agreement`` record what the reviewer decided between: the usernames and
    the item's agreement figures at the time (review.evaluation.agreement.ItemAgreement).
    """

    task = models.ForeignKey(AnnotationTask, on_delete=models.CASCADE, related_name="adjudications")
    gold_case = models.ForeignKey(GoldCase, on_delete=models.CASCADE, related_name="adjudications")
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    answerability = models.CharField(max_length=16, choices=Annotation.Answerability.choices)
    evidence = models.JSONField(default=list, blank=True)
    reference_answer = models.TextField(blank=True)
    annotators = models.JSONField(default=list)
    agreement = models.JSONField(default=dict)
    gold_revision = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task_id", "gold_case_id", "-created_at"]

    def __str__(self) -> str:
        return f"task {self.task_id} case {self.gold_case_id} adjudicated"


class ReviewAssignment(models.Model):
    """An answer handed to one reviewer when a team splits its review queue; one reviewer per answer."""

    answer = models.OneToOneField(Answer, on_delete=models.CASCADE, related_name="review_assignment")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_assignments"
    )
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["reviewer", "created_at"])]

    def __str__(self) -> str:
        return f"answer {self.answer_id} -> {self.reviewer_id}"
