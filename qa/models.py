"""Questions (persisted jobs), their answers, and the citations that back each answer sentence.

Citations copy the cited sentence's document id, label, text and offsets:
re-ingesting a document replaces its Sentence rows, and an answer an analyst
already passed on must stay traceable to the exact text it cited.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from documents.models import Corpus, Sentence, Team
from groundedqa_site.jobs import LeasedJob
from qa.pipeline.checks.answerability import ANSWER_KINDS


class Conversation(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations")
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="conversations")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"conversation {self.pk}"


class Question(LeasedJob):
    """One asked question and the job that answers it (``attempts`` counts claims of the current stage)."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="questions")
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="questions")
    conversation = models.ForeignKey(
        Conversation, null=True, blank=True, on_delete=models.SET_NULL, related_name="questions"
    )
    text = models.TextField()
    # The standalone question retrieval used (follow-ups are rewritten with the conversation).
    standalone_text = models.TextField(blank=True)
    preset = models.CharField(max_length=50)
    config = models.JSONField(default=dict)  # the full preset configuration the run used
    # The analyst's filter (qa.pipeline.reading.dates.DocumentScope): only documents published in this range
    # (either end open) and of these sources are searched; none set searches the whole corpus.
    published_from = models.DateField(null=True, blank=True)
    published_to = models.DateField(null=True, blank=True)
    sources = models.JSONField(default=list, blank=True)
    # Asked by an evaluation run, not by the analyst: such questions stay out of
    # the review queue and the histories unless a filter asks for them.
    is_evaluation = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    stage = models.CharField(max_length=32, blank=True)  # the stage running now, for progress
    error = models.TextField(blank=True)
    # The corpus version retrieval read; later stages read the same one (qa/adapters.py).
    corpus_version = models.BigIntegerField(null=True, blank=True)
    # The pipeline run (qa.pipeline.flow.run.PipelineRun.to_json(), versioned): what each stage
    # produced. The retrieval stage hands its ranking to generation here; the trace page
    # and evaluation read it. Rows from before the typed run hold format version 1.
    trace = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "-created_at"]), models.Index(fields=["status"])]

    def __str__(self) -> str:
        return self.text[:80]


class Answer(models.Model):
    question = models.OneToOneField(Question, on_delete=models.CASCADE, related_name="answer")
    text = models.TextField()
    refused = models.BooleanField(default=False)
    disagreement = models.BooleanField(default=False)
    verified = models.BooleanField(default=False)
    note = models.TextField(blank=True)
    retrieved_documents = models.JSONField(default=list)  # external ids, best first
    # Calibrated probability that the answer (or the refusal) is right; null for presets
    # without the confidence model and for answers stored before it existed.
    confidence = models.FloatField(null=True, blank=True)
    # qa.pipeline.checks.answerability's answer kinds: an answer, a partial answer (``missing`` names what
    # the sources do not cover), a clarifying question (underspecified) or a refusal (unanswerable).
    # Answers stored before kinds existed read "answerable" or, when refused, "unanswerable".
    kind = models.CharField(max_length=16, choices=[(k, k) for k in ANSWER_KINDS], default="answerable")
    missing = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.text[:80]


class AnswerSentence(models.Model):
    class Support(models.TextChoices):
        SUPPORTED = "supported"
        PARTIAL = "partial"
        UNSUPPORTED = "unsupported"

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="sentences")
    ordinal = models.PositiveIntegerField()
    text = models.TextField()
    support = models.CharField(max_length=16, choices=Support.choices, default=Support.UNSUPPORTED)
    # qa.pipeline.checks.mismatch: what the sentence says that its citation does not, in plain words ("" when
    # nothing differs); ``contradicted`` when the citation says otherwise. Blank for answers stored
    # before the check existed.
    mismatch = models.TextField(blank=True, default="")
    contradicted = models.BooleanField(default=False)
    # qa.pipeline.checks.relation: answers / background / off_question; "" when never judged.
    relation = models.CharField(max_length=16, blank=True, default="")

    class Meta:
        ordering = ["ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "ordinal"], name="answer_sentence_unique_ordinal")
        ]

    def __str__(self) -> str:
        return self.text[:80]


class Citation(models.Model):
    answer_sentence = models.ForeignKey(AnswerSentence, on_delete=models.CASCADE, related_name="citations")
    ordinal = models.PositiveIntegerField()
    sentence = models.ForeignKey(Sentence, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    document_external_id = models.CharField(max_length=500)
    document_title = models.CharField(max_length=500)
    document_pk = models.BigIntegerField(null=True)
    document_published = models.DateField(null=True, blank=True)  # as the document said when answered
    label = models.CharField(max_length=32)
    sentence_ordinal = models.PositiveIntegerField()
    text = models.TextField()
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()

    class Meta:
        ordering = ["ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["answer_sentence", "ordinal"], name="citation_unique_ordinal")
        ]

    def __str__(self) -> str:
        return f"{self.document_external_id} {self.label}"


class TeamPreset(models.Model):
    """A configuration a team saved under a name: a built-in preset (``base``) plus parameters.

    The parameters (``qa.pipeline.config.parameters``) are resolved against the base
    whenever the preset is used, and every question stores the configuration
    it ran with. Presets are created and deleted, never edited, so a name
    means one configuration for as long as it exists.
    """

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="presets")
    name = models.CharField(max_length=50)
    description = models.TextField(blank=True)
    base = models.CharField(max_length=50)
    parameters = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["team__name", "name"]
        constraints = [models.UniqueConstraint(fields=["team", "name"], name="team_preset_unique_name")]

    def __str__(self) -> str:
        return f"{self.team.name}: {self.name}"


class Decomposition(models.Model):
    """A question split into parts (the agentic preset), and the fan-in count of finished parts.

    Each part is a Question of its own (``SubQuestion.question``) that runs every stage as its own
    jobs, leases and reaper included. With no Celery result backend there are no chords: the last
    part to finish moves ``done`` to ``total`` with one atomic UPDATE and queues the combination.
    """

    question = models.OneToOneField(Question, on_delete=models.CASCADE, related_name="decomposition")
    plan = models.JSONField()  # qa.pipeline.dialogue.decompose.Plan as codec data
    total = models.PositiveSmallIntegerField()
    done = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.question_id}: {self.done}/{self.total} parts"


class SubQuestion(models.Model):
    """One part of a decomposed question: its own Question row, and whether fan-in counted it.

    ``counted`` flips once, in the transaction that adds one to ``Decomposition.done``, so a
    redelivered or repeated settle never counts a part twice.
    """

    decomposition = models.ForeignKey(Decomposition, on_delete=models.CASCADE, related_name="parts")
    ordinal = models.PositiveSmallIntegerField()
    question = models.OneToOneField(Question, on_delete=models.CASCADE, related_name="part_of")
    counted = models.BooleanField(default=False)

    class Meta:
        ordering = ["ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["decomposition", "ordinal"], name="subquestion_unique_ordinal")
        ]

    def __str__(self) -> str:
        return f"part {self.ordinal} of {self.decomposition_id}"
