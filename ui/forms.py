"""Forms of the analyst UI: they parse and validate input; services do the writing."""

from __future__ import annotations

from django import forms

from documents.selectors import corpora_for_user
from qa.intrinsics import MAX_TEXT_CHARS
from qa.pipeline.config import preset_guide
from qa.pipeline.config.parameters import BY_NAME, PARAMETERS
from qa.presets import default_preset
from qa.selectors import team_presets_for_user
from qa.services import MAX_QUESTION_CHARS
from review.models import GoldCase, Review
from review.selectors import QUEUE_STATUSES
from review.selectors.annotate_page import RUBRIC_SCORES, AnnotateState, with_opened


def preset_choices() -> list:
    """The built-in presets in the groups a user chooses from (recommended first), each option
    saying what the preset needs and how fast it is (qa.pipeline.config.preset_guide)."""
    return [
        (group.title, [(s.name, preset_guide.option_label(s.name)) for s in group.presets])
        for group in preset_guide.groups()
    ]


def preset_choices_for(user) -> list:
    """Built-in presets, then each of the user's teams' own, grouped (a team preset runs on its team's
    corpora only; the service says so when the corpus is another team's)."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for saved in team_presets_for_user(user):
        groups.setdefault(f"Team {saved.team.name}", []).append((saved.name, saved.name))
    return [*preset_choices(), *groups.items()]


class UIForm(forms.Form):
    """Labels without a trailing colon; Django ties errors and help text to inputs (aria-describedby)."""

    # Several forms share a page (the review page has four): each prefixes its ids so labels stay unique.
    id_prefix = ""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("label_suffix", "")
        kwargs.setdefault("auto_id", f"id_{self.id_prefix}%s")
        super().__init__(*args, **kwargs)


class AskForm(UIForm):
    corpus = forms.ModelChoiceField(queryset=None, empty_label=None)
    preset = forms.ChoiceField(
        help_text="Grouped by what each needs; “What the presets do” below says what each is for."
    )
    question = forms.CharField(
        max_length=MAX_QUESTION_CHARS,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "Ask about the documents of the corpus"}),
        error_messages={"required": "Write a question first."},
    )
    # A follow-up continues this conversation; views check that it is the user's own.
    conversation = forms.IntegerField(required=False, widget=forms.HiddenInput)
    # Dates and sources (qa.scopes): the service checks the sources against the chosen corpus.
    published_from = forms.DateField(
        required=False,
        label="Published from",
        widget=forms.DateInput(attrs={"type": "date"}),
        error_messages={"invalid": "Enter a date like 2022-07-21."},
    )
    published_to = forms.DateField(
        required=False,
        label="Published to",
        widget=forms.DateInput(attrs={"type": "date"}),
        error_messages={"invalid": "Enter a date like 2022-07-21."},
    )
    sources = forms.CharField(
        required=False,
        max_length=2000,
        label="Sources",
        help_text="Comma-separated, e.g. hugginglearners, abisee; blank searches every source.",
        widget=forms.TextInput(attrs={"list": "corpus-sources"}),
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["corpus"].queryset = corpora_for_user(user)
        self.fields["corpus"].error_messages["invalid_choice"] = "Choose one of your team's corpora."
        self.fields["preset"].choices = preset_choices_for(user)
        self.fields["preset"].initial = default_preset()
        add_advanced_fields(self)

    def preset_names(self) -> set[str]:
        names = set()
        for value, label in self.fields["preset"].choices:
            if isinstance(label, list | tuple):  # a group: (team label, [(name, name), ...])
                names.update(name for name, _ in label)
            else:
                names.add(value)
        return names

    def clean(self):
        cleaned = super().clean()
        cleaned["parameters"] = advanced_parameters(cleaned)
        low, high = cleaned.get("published_from"), cleaned.get("published_to")
        if low and high and low > high:
            self.add_error("published_to", f"The date range is empty: {low} is after {high}.")
        cleaned["sources"] = [s.strip() for s in (cleaned.get("sources") or "").split(",") if s.strip()]
        return cleaned


# --- the ask form's "advanced" disclosure: preset parameters for one question --------------
# Built from the pipeline's own parameter list (qa.pipeline.config.parameters), so a retriever added
# there is offered here. Left blank, a field keeps the preset's value.
ADVANCED_FIELDS = ("retriever", "alpha", "top_k", "reranker")


def add_advanced_fields(form: forms.Form) -> None:
    for name in ("retriever", "reranker"):
        parameter = BY_NAME[name]
        form.fields[name] = forms.ChoiceField(
            required=False,
            label=parameter.label,
            help_text=parameter.help,
            choices=[("", "Preset's own")] + [(c, c) for c in parameter.choices],
        )
    top_k = BY_NAME["top_k"]
    form.fields["top_k"] = forms.IntegerField(
        required=False,
        min_value=int(top_k.minimum),
        max_value=int(top_k.maximum),
        label=top_k.label,
        help_text=f"{top_k.help} Blank: the preset's own.",
    )
    alpha = BY_NAME["alpha"]
    form.fields["alpha"] = forms.FloatField(
        required=False,
        min_value=alpha.minimum,
        max_value=alpha.maximum,
        initial=0.5,
        label=alpha.label,
        help_text=f"{alpha.help} Applies to hybrid min-max retrieval only.",
        widget=forms.NumberInput(attrs={"type": "range", "step": "0.05", "min": "0", "max": "1"}),
    )
    # A slider always has a value, so a box says whether to use it.
    form.fields["alpha_set"] = forms.BooleanField(required=False, label="Set alpha")


def advanced_parameters(cleaned: dict) -> dict[str, object]:
    """The advanced fields the asker filled in, as preset parameters."""
    values = {}
    for name in ("retriever", "reranker", "top_k"):
        if cleaned.get(name) not in (None, ""):
            values[name] = cleaned[name]
    if cleaned.get("alpha_set") and cleaned.get("alpha") is not None:
        values["alpha"] = cleaned["alpha"]
    return values


# Evaluation runs' questions are left out of lists unless the reader asks for them.
ORIGIN_CHOICES = [
    ("asked", "Asked by people"),
    ("evaluation", "Asked by evaluation runs"),
    ("all", "Both"),
]


class HistorySearchForm(UIForm):
    q = forms.CharField(required=False, max_length=200, label="Search questions and answers")
    corpus = forms.ModelChoiceField(queryset=None, required=False, empty_label="All corpora")
    origin = forms.ChoiceField(choices=ORIGIN_CHOICES, required=False, label="Questions")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["corpus"].queryset = corpora_for_user(user)


class CorpusCreateForm(UIForm):
    name = forms.CharField(max_length=200)
    team = forms.ModelChoiceField(queryset=None, empty_label=None)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, teams, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams


# --- review -----------------------------------------------------------------------

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


class EvaluationRunForm(UIForm):
    benchmark = forms.ModelChoiceField(queryset=None, empty_label=None)
    # A team preset runs on its team's benchmarks only; the service says so for another team's.
    preset = forms.ChoiceField()
    split = forms.ChoiceField(required=False)
    limit = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=100000,
        label="At most this many cases",
        help_text="Leave empty for every case of the split.",
    )

    def __init__(self, *args, benchmarks, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["preset"].choices = preset_choices_for(user)
        self.fields["benchmark"].queryset = benchmarks
        self.fields["benchmark"].label_from_instance = lambda b: (
            f"{b.name} ({b.corpus.name}, {b.case_count} cases)"
        )
        self.fields["split"].choices = [("", "All splits")] + list(GoldCase.Split.choices)
        self.fields["preset"].initial = default_preset()


# --- team presets -----------------------------------------------------------------------


def parameter_field(parameter) -> forms.Field:
    """A form field for one preset parameter; blank keeps the base preset's value."""
    common = {"required": False, "label": parameter.label, "help_text": parameter.help}
    if parameter.kind is str:
        return forms.ChoiceField(
            choices=[("", "Base preset's own")] + [(c, c) for c in parameter.choices], **common
        )
    if parameter.kind is int:
        return forms.IntegerField(
            min_value=int(parameter.minimum), max_value=int(parameter.maximum), **common
        )
    if parameter.kind in (tuple, list):
        # A pair (hybrid_of: pick two, in the order listed) or a set (rules_off); the parameter's
        # own check (qa.pipeline.config.parameters) says what is wrong with a choice.
        return forms.MultipleChoiceField(
            choices=[(c, c) for c in parameter.choices], widget=forms.CheckboxSelectMultiple, **common
        )
    return forms.FloatField(
        min_value=parameter.minimum,
        max_value=parameter.maximum,
        widget=forms.NumberInput(attrs={"step": "0.05"}),
        **common,
    )


class TeamPresetForm(UIForm):
    """Save a built-in preset plus parameters under a name for one of the user's teams."""

    team = forms.ModelChoiceField(queryset=None, empty_label=None)
    name = forms.CharField(max_length=50, help_text="Letters, digits, '.', '_' or '-'.")
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    base = forms.ChoiceField(choices=preset_choices, label="Starts from preset")

    def __init__(self, *args, teams, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams
        self.fields["base"].initial = default_preset()
        for parameter in PARAMETERS:
            self.fields[parameter.name] = parameter_field(parameter)

    def parameter_fields(self):
        return [self[parameter.name] for parameter in PARAMETERS]

    def clean(self):
        cleaned = super().clean()
        cleaned["parameters"] = {
            p.name: cleaned[p.name] for p in PARAMETERS if cleaned.get(p.name) not in (None, "", [])
        }
        return cleaned


# --- the intrinsics page: cite a text, judge a question, check an answer ------------------------


class CiteTextForm(UIForm):
    id_prefix = "cite_"
    text = forms.CharField(
        max_length=MAX_TEXT_CHARS,
        strip=True,
        label="Text to cite",
        widget=forms.Textarea(attrs={"rows": 6, "placeholder": "Paste a response written elsewhere"}),
        help_text="Each sentence gets the corpus sentences that support it and a label.",
        error_messages={"required": "Paste a text first."},
    )


class QuestionCheckForm(UIForm):
    id_prefix = "check_"
    question = forms.CharField(
        max_length=MAX_QUESTION_CHARS,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 2}),
        error_messages={"required": "Write a question first."},
    )
    preset = forms.ChoiceField(
        required=False, help_text="Whose retrieval finds the passages that are judged. Blank: the default."
    )
    answer = forms.CharField(
        max_length=MAX_TEXT_CHARS,
        required=False,
        strip=True,
        label="Answer to check (optional)",
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Checked sentence by sentence against the corpus, and as a whole against the question.",
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["preset"].choices = preset_choices_for(user)
        self.fields["preset"].initial = default_preset()


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
