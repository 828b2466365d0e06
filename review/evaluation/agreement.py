"""How far annotators agree on a question: answerability and evidence sentences.

Pure functions over plain values (no Django): the annotation service gathers
each annotator's judgement of each item and hands them here.

Two things are compared:

- **Answerability**: each annotator's label for an item (``answerable``,
  ``partial``, ``unanswerable``), a nominal category.
- **Evidence sentences**: which sentences each annotator chose as evidence.
  Agreement "per candidate sentence" needs a set of sentences that every
  annotator of the item could have chosen; over all the corpus's sentences
  almost every pair would agree on "not evidence" and kappa would mean
  nothing. The **candidate set** of an item is the caller's to give (it is
  ``Judgements.candidates``); the annotation service uses *every sentence of
  every document that any annotator of the item opened or cited*. Each
  candidate sentence is one unit whose value, for each annotator of the item,
  is 1 (chosen) or 0 (not chosen). Candidate sentences that no annotator chose
  still count: they are the agreement on what is not evidence within the
  documents someone looked at.

Statistics:

- Cohen's kappa for a pair of annotators, over the items (or candidate
  sentences) both judged: scikit-learn's ``cohen_kappa_score``.
- Krippendorff's alpha (nominal) over all annotators, missing judgements
  allowed (an annotator who did not judge an item is missing there): the
  ``krippendorff`` package.
- Evidence-set F1 between two annotators on one item: 2|A∩B| / (|A|+|B|),
  symmetric; 1.0 when both chose no evidence (they agree there is none).

Undefined values are None, never a made-up number: kappa when the expected
agreement is 1 (both annotators used one and the same category throughout),
alpha when fewer than two values occur or no unit has two judgements.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score

ANSWERABILITY_LABELS: tuple[str, ...] = ("answerable", "partial", "unanswerable")

# An item goes to adjudication when its annotators' labels differ, or when any pair's
# evidence F1 is below this: under 0.5, the two evidence sets share less than they differ.
DISAGREEMENT_F1_THRESHOLD = 0.5


@dataclass(frozen=True)
class Judgement:
    """One annotator's answer for one item."""

    item: str
    annotator: str
    label: str
    evidence: frozenset[str] = frozenset()


@dataclass(frozen=True)
class PairAgreement:
    annotator_a: str
    annotator_b: str
    items: int
    answerability_kappa: float | None
    evidence_kappa: float | None
    evidence_units: int
    evidence_f1: float | None


@dataclass(frozen=True)
class ItemAgreement:
    item: str
    annotators: tuple[str, ...]
    labels: tuple[str, ...]
    labels_agree: bool
    # The mean and the lowest evidence F1 over the item's pairs of annotators.
    evidence_f1: float | None
    evidence_f1_min: float | None
    evidence_alpha: float | None
    candidates: int
    disagreement: bool


@dataclass(frozen=True)
class Agreement:
    """Agreement over a set of items: overall, per pair of annotators, per item."""

    annotators: tuple[str, ...]
    items: int
    answerability_alpha: float | None
    evidence_alpha: float | None
    evidence_units: int
    evidence_f1: float | None
    answerability_kappa_mean: float | None
    evidence_kappa_mean: float | None
    pairs: tuple[PairAgreement, ...] = field(default=())
    per_item: tuple[ItemAgreement, ...] = field(default=())
    candidate_set: str = ""
    f1_threshold: float = DISAGREEMENT_F1_THRESHOLD


def cohen_kappa(a: Sequence, b: Sequence) -> float | None:
    """Cohen's kappa of two annotators' parallel labels; None when undefined or empty."""
    if len(a) != len(b):
        raise ValueError(f"Two label sequences of different lengths ({len(a)} and {len(b)}).")
    if not a:
        return None
    labels = sorted(set(a) | set(b), key=str)
    with warnings.catch_warnings():
        # One shared category: scikit-learn warns and returns nan, which we report as None.
        warnings.simplefilter("ignore")
        value = cohen_kappa_score(list(a), list(b), labels=labels)
    return None if math.isnan(value) else float(value)


def krippendorff_alpha(units: Sequence[Mapping[str, object]]) -> float | None:
    """Nominal Krippendorff's alpha; each unit maps annotator -> value, absent annotators are missing."""
    annotators = sorted({name for unit in units for name in unit})
    values = sorted({value for unit in units for value in unit.values()}, key=str)
    pairable = [unit for unit in units if len(unit) >= 2]
    if len(values) < 2:
        # Everyone who judged gave one value: perfect observed agreement, but no variation to
        # measure it against, and the krippendorff package refuses such data.
        return None
    if not pairable:
        return None
    code = {value: index for index, value in enumerate(values)}
    data = np.full((len(annotators), len(units)), np.nan)
    row = {name: index for index, name in enumerate(annotators)}
    for column, unit in enumerate(units):
        for name, value in unit.items():
            data[row[name], column] = code[value]
    with np.errstate(invalid="ignore", divide="ignore"):
        # Every pairable unit holding one same value (the others only in unpaired units): 0/0, None.
        value = krippendorff.alpha(
            reliability_data=data, level_of_measurement="nominal", value_domain=list(range(len(values)))
        )
    return None if math.isnan(value) else float(value)


def evidence_f1(a: Iterable[str], b: Iterable[str]) -> float:
    """Symmetric F1 of two evidence sets; 1.0 when both are empty."""
    a, b = set(a), set(b)
    if not a and not b:
        return 1.0
    return 2 * len(a & b) / (len(a) + len(b))


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _by_item(judgements: Iterable[Judgement]) -> dict[str, dict[str, Judgement]]:
    """item -> annotator -> judgement; one annotator judging an item twice is a caller's error."""
    by_item: dict[str, dict[str, Judgement]] = {}
    for judgement in judgements:
        item = by_item.setdefault(judgement.item, {})
        if judgement.annotator in item:
            raise ValueError(f"{judgement.annotator} judged item {judgement.item} twice.")
        item[judgement.annotator] = judgement
    return by_item


def _pair_agreement(
    a: str, b: str, by_item: dict[str, dict[str, Judgement]], item_candidates: dict[str, list[str]]
) -> PairAgreement:
    """Kappa on labels and on candidate sentences, and mean evidence F1, over the items both judged."""
    shared = [item for item in sorted(by_item) if a in by_item[item] and b in by_item[item]]
    labels_a = [by_item[item][a].label for item in shared]
    labels_b = [by_item[item][b].label for item in shared]
    chosen_a, chosen_b = [], []
    for item in shared:
        for sentence in item_candidates[item]:
            chosen_a.append(int(sentence in by_item[item][a].evidence))
            chosen_b.append(int(sentence in by_item[item][b].evidence))
    return PairAgreement(
        annotator_a=a,
        annotator_b=b,
        items=len(shared),
        answerability_kappa=cohen_kappa(labels_a, labels_b),
        evidence_kappa=cohen_kappa(chosen_a, chosen_b),
        evidence_units=len(chosen_a),
        evidence_f1=_mean(
            evidence_f1(by_item[item][a].evidence, by_item[item][b].evidence) for item in shared
        ),
    )


def _item_agreement(
    item: str, judged: dict[str, Judgement], candidates: list[str], f1_threshold: float
) -> tuple[ItemAgreement, list[float]]:
    """One item's figures, and the evidence F1 of each pair of its annotators (for the task's mean)."""
    names = tuple(sorted(judged))
    f1s = [evidence_f1(judged[a].evidence, judged[b].evidence) for a, b in itertools.combinations(names, 2)]
    labels = tuple(judged[name].label for name in names)
    labels_agree = len(set(labels)) == 1
    f1_min = min(f1s) if f1s else None
    figures = ItemAgreement(
        item=item,
        annotators=names,
        labels=labels,
        labels_agree=labels_agree,
        evidence_f1=_mean(f1s),
        evidence_f1_min=f1_min,
        evidence_alpha=krippendorff_alpha(
            [{name: int(s in judged[name].evidence) for name in names} for s in candidates]
        ),
        candidates=len(candidates),
        disagreement=len(names) >= 2 and (not labels_agree or (f1_min is not None and f1_min < f1_threshold)),
    )
    return figures, f1s


def agreement(
    judgements: Iterable[Judgement],
    candidates: Mapping[str, Iterable[str]],
    *,
    candidate_set: str = "every sentence of the documents any annotator of the item opened or cited",
    f1_threshold: float = DISAGREEMENT_F1_THRESHOLD,
) -> Agreement:
    """Agreement of every annotator with every other over the judged items.

    ``candidates[item]`` is the item's candidate sentence set (see the module
    docstring); each annotator's evidence is added to it, so a chosen sentence
    is always a unit. ``candidate_set`` is the definition, stated beside the
    figures wherever they are shown.
    """
    by_item = _by_item(judgements)
    items = sorted(by_item)
    annotators = tuple(sorted({name for judged in by_item.values() for name in judged}))
    item_candidates = {
        item: sorted(set(candidates.get(item, ())) | {s for j in by_item[item].values() for s in j.evidence})
        for item in items
    }
    label_units = [{name: j.label for name, j in by_item[item].items()} for item in items]
    evidence_units = [
        {name: int(sentence in j.evidence) for name, j in by_item[item].items()}
        for item in items
        for sentence in item_candidates[item]
    ]
    pairs = [
        _pair_agreement(a, b, by_item, item_candidates) for a, b in itertools.combinations(annotators, 2)
    ]
    per_item = []
    all_f1s: list[float] = []
    for item in items:
        figures, f1s = _item_agreement(item, by_item[item], item_candidates[item], f1_threshold)
        per_item.append(figures)
        all_f1s.extend(f1s)
    return Agreement(
        annotators=annotators,
        items=len(items),
        answerability_alpha=krippendorff_alpha(label_units),
        evidence_alpha=krippendorff_alpha(evidence_units),
        evidence_units=len(evidence_units),
        # Over every (item, pair of its annotators): each item weighs by its number of pairs.
        evidence_f1=_mean(all_f1s),
        answerability_kappa_mean=_mean(p.answerability_kappa for p in pairs),
        evidence_kappa_mean=_mean(p.evidence_kappa for p in pairs),
        pairs=tuple(pairs),
        per_item=tuple(per_item),
        candidate_set=candidate_set,
        f1_threshold=f1_threshold,
    )


@dataclass(frozen=True)
class SuggestionAgreement:
    """How far annotators who started from the system's answer stayed with it.

    Reported apart from the annotators' agreement with each other: an annotator shown a
    suggestion is anchored by it, so their agreement with it is not independent judgement.
    """

    annotations: int
    labels_kept: float | None  # the share that kept the suggested label
    evidence_f1: float | None  # the mean F1 of the annotator's evidence with the suggested sentences
    unchanged: int  # kept both the label and exactly the suggested sentences


def suggestion_agreement(pairs: Iterable[tuple[Judgement, Judgement]]) -> SuggestionAgreement:
    """``pairs``: (the annotator's judgement, the suggestion they started from) per pre-filled item."""
    pairs = list(pairs)
    kept = [given.label == suggested.label for given, suggested in pairs]
    return SuggestionAgreement(
        annotations=len(pairs),
        labels_kept=sum(kept) / len(kept) if kept else None,
        evidence_f1=_mean(evidence_f1(given.evidence, suggested.evidence) for given, suggested in pairs),
        unchanged=sum(
            given.label == suggested.label and set(given.evidence) == set(suggested.evidence)
            for given, suggested in pairs
        ),
    )
