from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from documents.api.fields import TextField
from documents.errors import DomainError
from qa import presets
from qa.models import Answer, AnswerSentence, Citation, Question, TeamPreset
from qa.pipeline.checks.reply import (
    OUTCOMES,
    SENTENCE_LABELS,
    SENTENCE_RELATIONS,
    sentence_label,
    sentence_relation,
)
from qa.pipeline.config.parameters import PARAMETERS, Parameter
from qa.pipeline.reading.dates import MAX_SOURCES
from qa.selectors import ORIGINS, AnswerPresentation, answer_presentation


def _parameter_field(parameter: Parameter) -> serializers.Field:
    common = {"required": False, "help_text": parameter.help}
    if parameter.kind is str:
        return serializers.ChoiceField(choices=parameter.choices, **common)
    if parameter.kind is tuple:
        child = serializers.ChoiceField(choices=parameter.choices)
        return serializers.ListField(child=child, min_length=2, max_length=2, **common)
    if parameter.kind is list:
        return serializers.ListField(child=serializers.ChoiceField(choices=parameter.choices), **common)
    field = serializers.IntegerField if parameter.kind is int else serializers.FloatField
    return field(min_value=parameter.minimum, max_value=parameter.maximum, **common)


class _ParametersBase(serializers.Serializer):
    refuses_unknown_fields = True  # groundedqa_site.schema: additionalProperties false

    def to_internal_value(self, data):
        # Unknown names are refused, not ignored: a misspelt "topk" must not silently do nothing.
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: [f"Unknown parameter; use one of {', '.join(self.fields)}."] for name in unknown}
                )
        return super().to_internal_value(data)


# Built from the pipeline's own list, so a retriever added there is offered here.
PresetParameters = type(
    "PresetParameters",
    (_ParametersBase,),
    {
        "__doc__": "Preset parameters (qa.pipeline.config.parameters); each one left out keeps the preset's "
        "value.",
        **{parameter.name: _parameter_field(parameter) for parameter in PARAMETERS},
    },
)


class AskSerializer(serializers.Serializer):
    corpus = serializers.CharField(help_text="Corpus id or name.")
    question = TextField(max_length=2000)
    preset = serializers.CharField(
        max_length=50,
        default=presets.default_preset,
        help_text="A built-in preset (GET /api/presets/) or a preset of the corpus's team "
        "(GET /api/team-presets/). Default: QA_DEFAULT_PRESET.",
    )
    parameters = PresetParameters(
        required=False,
        help_text='Change the preset for this question only, e.g. {"retriever": "bm25", "top_k": 3}. '
        "Values that contradict each other (alpha without min-max hybrid retrieval, say) get a 400 "
        "saying why.",
    )
    conversation = serializers.IntegerField(
        required=False, help_text="Continue this conversation (follow-up)."
    )
    published_from = serializers.DateField(
        required=False,
        allow_null=True,
        help_text="Search only documents published on or after this date (YYYY-MM-DD); undated "
        "documents are left out when either date is set.",
    )
    published_to = serializers.DateField(
        required=False,
        allow_null=True,
        help_text="Search only documents published on or before this date (YYYY-MM-DD).",
    )
    sources = serializers.ListField(
        child=serializers.CharField(max_length=200),
        required=False,
        max_length=MAX_SOURCES,
        help_text="Search only documents of these sources (a document's `source`, e.g. a news "
        "outlet or collection); a source the corpus does not have is a 400 listing the ones it has.",
    )

    def validate(self, data):
        low, high = data.get("published_from"), data.get("published_to")
        if low and high and low > high:
            raise serializers.ValidationError(
                {"published_to": [f"The date range is empty: {low.isoformat()} is after {high.isoformat()}."]}
            )
        return data


class HistoryQuery(serializers.Serializer):
    q = serializers.CharField(required=False, default="", allow_blank=True, help_text="Search text.")
    origin = serializers.ChoiceField(
        choices=ORIGINS,
        default="asked",
        help_text="asked: your own questions (default); evaluation: your evaluation runs'; all.",
    )


# The longest a status request may wait for its question to end (each waiting request holds one of
# the web server's threads).
MAX_WAIT_SECONDS = 30


class QuestionWaitQuery(serializers.Serializer):
    wait = serializers.IntegerField(
        min_value=0,
        max_value=MAX_WAIT_SECONDS,
        default=0,
        help_text="Seconds to wait for a queued or running question to end before answering "
        "(0: answer at once). The reply comes as soon as the answer is stored, so a client "
        "need not poll.",
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
            "document_published",
            "sentence",
            "sentence_ordinal",
            "text",
            "start",
            "end",
        ]


def presentation(answer) -> AnswerPresentation:
    """The answer's presentation, worked out once per answer however many fields read it."""
    cached = getattr(answer, "_presentation", None)
    if cached is None:
        cached = answer._presentation = answer_presentation(answer)
    return cached


class AnswerSpanSerializer(serializers.Serializer):
    start = serializers.IntegerField(help_text="First character of the span in the sentence's text.")
    end = serializers.IntegerField(help_text="One past its last character.")
    text = serializers.CharField(help_text="The span's words, as in the sentence.")
    score = serializers.FloatField(
        help_text="Start+end logit over the no-answer logit (> 0: the reader prefers the span to no answer)."
    )
    guess = serializers.BooleanField(
        help_text="True when the reader only points at the likeliest words and does not judge whether "
        "the sentence holds an answer (the project's own span reader: right on about 6 of 10 answers "
        "when measured, docs/readers.md); `score` may then be negative. False for a transformers "
        "reader (SQuAD 2.0 style), whose spans score above 0."
    )


class AnswerSentenceSerializer(serializers.ModelSerializer):
    citations = CitationSerializer(many=True)
    label = serializers.SerializerMethodField(
        allow_null=True,
        help_text="The badge a reader sees: quote (the sentence is quoted verbatim from its source, so "
        "`support` is true by construction and says nothing about whether it answers the question), "
        "or, for generated text, supported, partial or unsupported as verification found, or "
        "contradicted when its figures, comparison direction or negation differ from its citation's "
        "(`mismatch` says how); null when the answer's `outcome` is not answer or partial (no badge: it "
        "is not shown as an answer).",
    )
    relation = serializers.SerializerMethodField(
        allow_null=True,
        help_text="How the sentence bears on the question: answers (it answers it), background (related, "
        "but not the answer) or off_question. Read from the sentence's relevance to the question "
        "(docs/reply.md says how its thresholds were chosen); null when the answer's `outcome` is not "
        "answer or partial, for the pipeline's own uncited sentences, and for answers stored before it.",
    )
    mismatch = serializers.CharField(
        read_only=True,
        help_text='What the sentence says that its citation does not, in plain words ("the claim says '
        "'ten times', the source says 'three times'\"); empty when nothing differs.",
    )

    span = serializers.SerializerMethodField(
        allow_null=True,
        help_text="The exact answer inside this sentence, as an extractive reader found it: `start` and "
        "`end` are character offsets into `text` (`text[start:end] == span.text`), `score` the span's "
        "start+end logit over the reader's no-answer logit (positive: the reader prefers this span to "
        "no answer), `guess` whether the span is only the reader's pointer. The reader is the one "
        "QA_SPAN_READER_MODEL names (`shipped`: the project's own span reader, which guesses; "
        "docs/readers.md); null for every sentence while that setting is unset. "
        "Null where the reader found no answer in the sentence, when the answer's `outcome` is not "
        "answer or partial, and for answers stored before spans existed. It informs and decides nothing.",
    )

    class Meta:
        model = AnswerSentence
        fields = ["ordinal", "text", "support", "label", "relation", "mismatch", "span", "citations"]

    @extend_schema_field(serializers.ChoiceField(choices=list(SENTENCE_LABELS), allow_null=True))
    def get_label(self, sentence: AnswerSentence) -> str | None:
        shown = presentation(sentence.answer)
        return sentence_label(
            sentence.support,
            generator=shown.generator,
            cited=bool(sentence.citations.all()),
            outcome=shown.reply.outcome,
            contradicted=sentence.contradicted,
        )

    @extend_schema_field(AnswerSpanSerializer(allow_null=True))
    def get_span(self, sentence: AnswerSentence) -> dict | None:
        shown = presentation(sentence.answer)
        span = shown.spans.get(sentence.text)
        if span is None or shown.reply.outcome not in ("answer", "partial"):
            return None
        if sentence.text[span.start : span.end] != span.text:
            return None
        return {
            "start": span.start,
            "end": span.end,
            "text": span.text,
            "score": span.score,
            "guess": span.guess,
        }

    @extend_schema_field(serializers.ChoiceField(choices=list(SENTENCE_RELATIONS), allow_null=True))
    def get_relation(self, sentence: AnswerSentence) -> str | None:
        return sentence_relation(sentence.relation, outcome=presentation(sentence.answer).reply.outcome)


class AnswerSerializer(serializers.ModelSerializer):
    sentences = AnswerSentenceSerializer(many=True)
    outcome = serializers.SerializerMethodField(
        help_text="What to show, decided in one place (qa.pipeline.checks.reply) from the answer and the "
        "preset's "
        'thresholds: answer; low_confidence (show it marked "may not answer your question", no '
        "supported badges: its calibrated confidence is below the preset's answer_confidence); partial "
        "(`missing` names what the sources lack); ask_back (the text is a clarifying question); refused "
        "(no answer: the pipeline refused, or the confidence is below withhold_confidence). Branch on "
        "this rather than on `refused` or `confidence`."
    )
    outcome_reason = serializers.SerializerMethodField(help_text="Why, in plain words, for the reader.")

    class Meta:
        model = Answer
        fields = [
            "id",
            "text",
            "refused",
            "disagreement",
            "verified",
            "confidence",
            "kind",
            "missing",
            "note",
            "retrieved_documents",
            "outcome",
            "outcome_reason",
            "sentences",
        ]

    @extend_schema_field(serializers.ChoiceField(choices=OUTCOMES))
    def get_outcome(self, answer: Answer) -> str:
        return presentation(answer).reply.outcome

    def get_outcome_reason(self, answer: Answer) -> str:
        return presentation(answer).reply.reason


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
            "published_from",
            "published_to",
            "sources",
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

    @extend_schema_field(AnswerSerializer(allow_null=True))
    def get_answer(self, question: Question) -> dict | None:
        answer = getattr(question, "answer", None) if question.status == Question.Status.DONE else None
        return AnswerSerializer(answer).data if answer else None

    def get_status_url(self, question: Question) -> str:
        return reverse("api-question-detail", args=[question.pk], request=self.context.get("request"))


class TeamPresetInput(serializers.Serializer):
    team = serializers.CharField(help_text="Team id or name (one of yours).")
    name = serializers.CharField(
        max_length=50, help_text="Letters, digits, '.', '_' or '-'; not a built-in preset's name."
    )
    description = serializers.CharField(required=False, allow_blank=True, default="")
    base = serializers.ChoiceField(
        choices=presets.PRESET_NAMES,
        default=presets.default_preset,
        help_text="The built-in preset it starts from.",
    )
    parameters = PresetParameters(required=False, default=dict)


class TeamPresetSerializer(serializers.ModelSerializer):
    team = serializers.CharField(source="team.name")
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)
    config = serializers.SerializerMethodField(
        help_text="The full configuration a question under it runs with."
    )

    class Meta:
        model = TeamPreset
        fields = [
            "id",
            "team",
            "name",
            "description",
            "base",
            "parameters",
            "config",
            "created_by",
            "created_at",
        ]

    def get_config(self, preset: TeamPreset) -> dict | None:
        try:
            return presets.saved_config(preset).to_dict()
        except DomainError:
            return None  # its base preset was removed since; resolving it says so on use
