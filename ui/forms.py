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
from review.models import GoldCase


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
