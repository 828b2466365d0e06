"""Forms of the review and annotation pages: decisions on an answer, gold cases, annotation tasks.

They parse and validate input; review.services does the writing. The analyst's forms (asking,
history, corpora, evaluation, presets) are in ui.forms.
"""

from __future__ import annotations

from django import forms

from documents.selectors import corpora_for_user
from qa.services import MAX_QUESTION_CHARS
from review.models import GoldCase, Review
from review.selectors import QUEUE_STATUSES
from review.selectors.annotate_page import RUBRIC_SCORES, AnnotateState, with_opened
from ui.forms import ORIGIN_CHOICES, UIForm, preset_choices_for

QUEUE_STATUS_LABELS = {
    "unreviewed": "Not reviewed yet",
    "flagged": "Flagged",
    "accepted": "Accepted",
    "corrected": "Corrected",
    "reviewed": "Any decision",
}


class ReviewQueueFilterForm(UIForm):
    status = forms.ChoiceField(required=False, label="Show")
    corpus = forms.ModelChoiceField(queryset=None, required=False, empty_label="All corpora")
    preset = forms.ChoiceField(required=False)
    order = forms.ChoiceField(
        required=False,
        label="Order",
        choices=[("", "Oldest first"), ("confidence", "Least confident first")],
    )
    origin = forms.ChoiceField(choices=ORIGIN_CHOICES, required=False, label="Questions")
    mine = forms.BooleanField(required=False, label="Only the answers handed to me")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["status"].choices = [("", "Everything")] + [
            (s, QUEUE_STATUS_LABELS.get(s, s)) for s in QUEUE_STATUSES
        ]
        self.fields["corpus"].queryset = corpora_for_user(user)
        self.fields["preset"].choices = [("", "Any preset")] + preset_choices_for(user)


class DecisionForm(UIForm):
    """Fields every decision carries: the version the reviewer saw, and a comment."""

    base_version = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    comment = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


class AcceptForm(DecisionForm):
    id_prefix = "accept_"


class FlagForm(DecisionForm):
    id_prefix = "flag_"
    reason = forms.ChoiceField(error_messages={"required": "Choose why you flag it."})

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reason"].choices = [("", "Choose a reason…")] + list(Review.Reason.choices)


def sentence_reference(document_external_id: str, label: str) -> str:
    """How a person sees and types one sentence everywhere: "harbor-authority-report:3", its
    document's id and its number in that document (the label the viewer shows beside it)."""
    return f"{document_external_id}:{label}"


def parse_sentence_references(raw: str) -> list[int | tuple[str, str]]:
    """'report:3, report:4' -> [("report", "3"), ("report", "4")]. A bare number (or "#107") is a
    sentence's database id, as stored corrections and scripts may still give it. Separated by
    commas when there is one (a document id may hold spaces), else by spaces; anything else is a
    ValidationError."""
    tokens = raw.split(",") if "," in raw else raw.split()
    references: list[int | tuple[str, str]] = []
    for token in (t.strip() for t in tokens):
        if not token:
            continue
        bare = token.lstrip("#")
        document, _, label = token.rpartition(":")
        if bare.isdigit() and int(bare) >= 1:
            references.append(int(bare))
        elif document.strip() and label.strip():
            references.append((document.strip(), label.strip()))
        else:
            raise forms.ValidationError(
                f"“{token}” is not a sentence: write document:number as the viewer shows it (report:3)."
            )
    return references


class CorrectionForm(DecisionForm):
    """A corrected answer: parallel lists ``sentence_text`` and ``sentence_cites`` (sentence
    references, ``parse_sentence_references``). ``resolve`` turns (document, label) pairs into
    sentence ids of the answer's corpus, leaving out the ones it does not know."""

    id_prefix = "correct_"
    reason = forms.ChoiceField(required=False, label="Reason (optional)")
    refused = forms.BooleanField(
        required=False, label="The corrected answer is a refusal (the corpus cannot answer)"
    )

    def __init__(self, *args, resolve=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.resolve = resolve or (lambda pairs: {})
        self.fields["reason"].choices = [("", "No reason given")] + list(Review.Reason.choices)
        self.rows: list[dict] = []
        if self.is_bound:
            texts = self.data.getlist("sentence_text")
            cites = self.data.getlist("sentence_cites")
            cites += [""] * (len(texts) - len(cites))
            self.rows = [{"text": t, "cites": c} for t, c in zip(texts, cites, strict=False)]

    def clean(self):
        cleaned = super().clean()
        sentences = []
        for number, row in enumerate(self.rows, 1):
            text = row["text"].strip()
            try:
                ids = self._sentence_ids(parse_sentence_references(row["cites"]))
            except forms.ValidationError as exc:
                row["error"] = exc.messages[0]
                self.add_error(None, f"Sentence {number}: {exc.messages[0]}")
                continue
            if not text and not ids:
                continue  # an emptied row is a deleted sentence
            if not text:
                row["error"] = "This sentence has citations but no text."
                self.add_error(None, f"Sentence {number} has citations but no text.")
                continue
            sentences.append((text, tuple(ids)))
        if not sentences and not cleaned.get("refused"):
            self.add_error(
                None, "The corrected answer has no sentences. Write at least one, or mark it a refusal."
            )
        cleaned["sentences"] = sentences
        return cleaned

    def _sentence_ids(self, references: list[int | tuple[str, str]]) -> list[int]:
        pairs = [r for r in references if isinstance(r, tuple)]
        found = self.resolve(pairs) if pairs else {}
        unknown = [f"{document}:{label}" for document, label in pairs if (document, label) not in found]
        if unknown:
            raise forms.ValidationError(f"“{unknown[0]}” names no sentence of this corpus.")
        return [r if isinstance(r, int) else found[r] for r in references]


class GoldCaseTargetForm(UIForm):
    """Where a new gold case goes: an existing benchmark or a new one by name, and a split."""

    benchmark = forms.ChoiceField(required=False, label="Benchmark")
    new_benchmark = forms.CharField(required=False, max_length=200, label="…or a new one named")
    split = forms.ChoiceField(initial="dev")

    def __init__(self, *args, benchmarks, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["benchmark"].choices = [("", "Choose…")] + [(b.name, b.name) for b in benchmarks]
        self.fields["split"].choices = GoldCase.Split.choices

    def clean(self):
        cleaned = super().clean()
        existing, new = cleaned.get("benchmark"), (cleaned.get("new_benchmark") or "").strip()
        if bool(existing) == bool(new):
            self.add_error("benchmark", "Choose a benchmark or name a new one (not both).")
        cleaned["new_benchmark"] = new
        return cleaned


class GoldFromAnswerForm(GoldCaseTargetForm):
    id_prefix = "gold_"


# --- annotation -----------------------------------------------------------------------


class AnnotateForm(GoldCaseTargetForm):
    question = forms.CharField(
        max_length=MAX_QUESTION_CHARS,
        widget=forms.Textarea(attrs={"rows": 2}),
        error_messages={"required": "Write the question."},
    )
    evidence = forms.TypedMultipleChoiceField(
        coerce=int, required=False, widget=forms.CheckboxSelectMultiple, label="Evidence sentences"
    )
    reference_answer = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    unanswerable = forms.BooleanField(required=False, label="Unanswerable from this document")

    def __init__(self, *args, sentences, benchmarks, **kwargs):
        super().__init__(*args, benchmarks=benchmarks, **kwargs)
        self.fields["evidence"].choices = [(s.pk, s.label) for s in sentences]

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("unanswerable"):
            if not cleaned.get("evidence"):
                self.add_error(
                    "evidence", "Select the sentences that answer the question, or mark it unanswerable."
                )
            if not (cleaned.get("reference_answer") or "").strip():
                self.add_error(
                    "reference_answer", "Write the reference answer, or mark the question unanswerable."
                )
        return cleaned


# --- evaluation -----------------------------------------------------------------------

# --- annotation tasks -----------------------------------------------------------------


class TaskCreateForm(UIForm):
    """A new annotation task over one of the benchmarks the user may create tasks on."""

    benchmark = forms.ModelChoiceField(queryset=None, empty_label=None)
    name = forms.CharField(max_length=200)
    guidelines = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    overlap = forms.IntegerField(min_value=1, max_value=20, initial=2, help_text="Annotators per question.")
    annotators = forms.CharField(help_text="Usernames of team members, separated by spaces or commas.")
    case_ids = forms.CharField(required=False, help_text="Only these case ids (default: every case).")
    prefill = forms.BooleanField(
        required=False,
        label="Pre-fill with GroundedQA's answer",
        help_text="Each question starts from the answer the case was made from, or else the latest "
        "evaluation run's: its label, cited sentences and text, marked as GroundedQA's suggestion.",
    )

    def __init__(self, *args, benchmarks, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["benchmark"].queryset = benchmarks


class AskedTaskForm(UIForm):
    """A new annotation task whose items are the questions analysts asked on a corpus."""

    id_prefix = "asked_"
    corpus = forms.ModelChoiceField(queryset=None, empty_label=None)
    questions = forms.ChoiceField(
        label="Questions",
        choices=[
            ("reviewed", "Reviewed (any decision)"),
            ("flagged", "Flagged"),
            ("unreviewed", "Not reviewed yet"),
            ("all", "All asked"),
        ],
        initial="reviewed",
    )
    benchmark = forms.CharField(
        max_length=200,
        label="Into benchmark",
        help_text="The questions join this benchmark as gold cases (a new one if no benchmark has the "
        "name); agreed and adjudicated answers are written into them.",
    )
    name = forms.CharField(max_length=200)
    overlap = forms.IntegerField(min_value=1, max_value=20, initial=2, help_text="Annotators per question.")
    annotators = forms.CharField(help_text="Usernames of team members, separated by spaces or commas.")
    limit = forms.IntegerField(
        min_value=1, max_value=500, required=False, label="At most", help_text="Questions (default: 500)."
    )
    guidelines = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    prefill = forms.BooleanField(
        required=False,
        label="Pre-fill with the answer GroundedQA gave",
        help_text="Each question starts from the answer the analyst got, marked as GroundedQA's suggestion.",
    )

    def __init__(self, *args, corpora, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["corpus"].queryset = corpora


class ReviewSplitForm(UIForm):
    """Hand a corpus's unreviewed answers to some of its team's annotators, least confident first."""

    id_prefix = "split_"
    corpus = forms.ModelChoiceField(queryset=None, empty_label=None)
    reviewers = forms.CharField(
        label="Reviewers", help_text="Usernames of team members (annotator or above), by spaces or commas."
    )
    limit = forms.IntegerField(
        min_value=1, max_value=10000, required=False, label="At most", help_text="Answers (default: all)."
    )

    def __init__(self, *args, corpora, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["corpus"].queryset = corpora


def _pks(values) -> tuple[int, ...]:
    return tuple(dict.fromkeys(int(v) for v in values if str(v).isdigit()))


def annotate_state_from_post(post, *, prefill: bool) -> tuple[str, AnnotateState]:
    """The annotate page's action (save, skip, open, search) and the choices its form carries."""
    # A search result's "Open" button carries the document instead of an action.
    action = post.get("action") or ("open" if post.get("open_result") else "save")
    state = AnnotateState(
        answerability=post.get("answerability", ""),
        evidence=_pks(post.getlist("evidence")),
        opened=_pks(post.getlist("opened")),
        reference_answer=post.get("reference_answer", ""),
        question_type=post.get("question_type", ""),
        skip_reason=post.get("skip_reason", ""),
        query=post.get("query", "").strip()[:300],
        prefilled=prefill and post.get("prefilled") == "1",
        rubric_description=post.get("rubric_description", "")[:2000],
        rubric_scale={score: post.get(f"rubric_{score}", "")[:1000] for score in RUBRIC_SCORES},
    )
    opening = post.get("open_result", "") or (post.get("open_document", "") if action == "open" else "")
    return action, with_opened(state, opening)
