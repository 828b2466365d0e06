"""Agreement statistics: hand-computed small cases, then generated data against independent formulas
and the reference packages called directly."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from review.evaluation.agreement import (
    Judgement,
    agreement,
    cohen_kappa,
    evidence_f1,
    krippendorff_alpha,
)

# ---- hand-computed cases -------------------------------------------------------------------

KAPPA_CASES = [
    # p_o = 3/4; p_e = .5*.25 + .5*.75 = .5; kappa = (.75 - .5) / .5
    (["ans", "ans", "un", "un"], ["ans", "un", "un", "un"], 0.5),
    # Perfect agreement with two categories used.
    (["ans", "un", "part"], ["ans", "un", "part"], 1.0),
    # p_o = 0, p_e = .5*.5*2 = .5: kappa = -1
    (["ans", "un"], ["un", "ans"], -1.0),
    # p_o = 2/4, p_e = (.5*.5)+(.5*.5) = .5: chance-level agreement.
    (["a", "a", "b", "b"], ["a", "b", "a", "b"], 0.0),
    # Both used one and the same category: expected agreement 1, kappa undefined.
    (["ans", "ans"], ["ans", "ans"], None),
    ([], [], None),
]


@pytest.mark.parametrize(("a", "b", "expected"), KAPPA_CASES)
def test_cohen_kappa_hand_cases(a, b, expected):
    value = cohen_kappa(a, b)
    if expected is None:
        assert value is None
    else:
        assert value == pytest.approx(expected)


def test_cohen_kappa_refuses_unequal_lengths():
    with pytest.raises(ValueError, match="different lengths"):
        cohen_kappa(["a"], ["a", "b"])


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the nominal example with
# four coders, twelve units and missing values: alpha = 0.743.
_K2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}
K2011_UNITS = [
    {coder: values[u] for coder, values in _K2011.items() if values[u] is not None} for u in range(12)
]

ALPHA_CASES = [
    ("krippendorff 2011 nominal example", K2011_UNITS, 0.743),
    # o_aa=2, o_ab=o_ba=1, o_bb=2; n_a=n_b=3, n=6: D_o=2/6, D_e=18/30; alpha = 1 - (1/3)/0.6 = 4/9
    ("two coders, three units", [{"x": "a", "y": "a"}, {"x": "a", "y": "b"}, {"x": "b", "y": "b"}], 4 / 9),
    # Missing data: u1 three coders agree (each ordered pair weighs 1/2), u4 is unpairable.
    # o_aa=3, o_ab=o_ba=1, o_bb=2; n_a=4, n_b=3, n=7: D_o=2/7, D_e=24/42; alpha = 0.5
    (
        "three coders, missing judgements",
        [{"A": "a", "B": "a", "C": "a"}, {"A": "a", "B": "b"}, {"B": "b", "C": "b"}, {"A": "a"}],
        0.5,
    ),
    ("one value only: undefined", [{"x": "a", "y": "a"}, {"x": "a", "y": "a"}], None),
    ("no unit judged twice: undefined", [{"x": "a"}, {"y": "b"}], None),
    ("nothing judged", [], None),
]


@pytest.mark.parametrize(("name", "units", "expected"), ALPHA_CASES, ids=[c[0] for c in ALPHA_CASES])
def test_krippendorff_alpha_hand_cases(name, units, expected):
    value = krippendorff_alpha(units)
    if expected is None:
        assert value is None
    else:
        assert value == pytest.approx(expected, abs=5e-4)


F1_CASES = [
    ({"s1", "s2"}, {"s1"}, 2 / 3),
    ({"s1"}, {"s2"}, 0.0),
    (set(), set(), 1.0),  # both say there is no evidence
    ({"s1"}, set(), 0.0),
    ({"s1", "s2", "s3", "s4"}, {"s3", "s4"}, 2 * 2 / 6),
]


@pytest.mark.parametrize(("a", "b", "expected"), F1_CASES)
def test_evidence_f1_hand_cases(a, b, expected):
    assert evidence_f1(a, b) == pytest.approx(expected)
    assert evidence_f1(b, a) == pytest.approx(expected)


def test_agreement_on_one_item_per_candidate_sentence():
    # Candidates s1..s4; ann chose {s1, s2}, bob {s1}. Units: s1 (1,1) s2 (1,0) s3 (0,0) s4 (0,0).
    # kappa: p_o = 3/4, p_e = .5*.25 + .5*.75 = .5 -> 0.5.
    # alpha: o_11=2, o_10=o_01=1, o_00=4; n_1=3, n_0=5, n=8; D_o=2/8, D_e=30/56 -> 8/15.
    result = agreement(
        [
            Judgement("q1", "ann", "answerable", frozenset({"s1", "s2"})),
            Judgement("q1", "bob", "answerable", frozenset({"s1"})),
        ],
        {"q1": {"s1", "s2", "s3", "s4"}},
    )
    (pair,) = result.pairs
    assert pair.evidence_units == 4
    assert pair.evidence_kappa == pytest.approx(0.5)
    assert pair.evidence_f1 == pytest.approx(2 / 3)
    assert result.evidence_alpha == pytest.approx(8 / 15)
    (item,) = result.per_item
    assert item.labels_agree and item.evidence_f1 == pytest.approx(2 / 3)
    assert item.evidence_alpha == pytest.approx(8 / 15)
    assert not item.disagreement  # same label, F1 2/3 >= 0.5
    assert "opened or cited" in result.candidate_set


def test_chosen_sentences_join_the_candidate_set():
    # s9 was chosen but the caller did not list it: it is still a unit (0 for the other annotator).
    result = agreement(
        [
            Judgement("q1", "ann", "answerable", frozenset({"s1", "s9"})),
            Judgement("q1", "bob", "answerable", frozenset({"s1"})),
        ],
        {"q1": {"s1", "s2"}},
    )
    assert result.evidence_units == 3
    assert result.pairs[0].evidence_kappa == pytest.approx(cohen_kappa([1, 1, 0], [1, 0, 0]))


DISAGREEMENT_CASES = [
    # (labels, evidence sets, disagreement?)
    (("answerable", "answerable"), ({"s1"}, {"s1"}), False),
    (("answerable", "unanswerable"), ({"s1"}, set()), True),
    (("answerable", "partial"), ({"s1"}, {"s1"}), True),
    (("answerable", "answerable"), ({"s1"}, {"s2"}), True),  # F1 0 < 0.5
    (("answerable", "answerable"), ({"s1", "s2"}, {"s1", "s3"}), False),  # F1 0.5, not below
    (("answerable", "answerable"), ({"s1", "s2", "s3"}, {"s1", "s4", "s5"}), True),  # F1 1/3
    (("unanswerable", "unanswerable"), (set(), set()), False),
]


@pytest.mark.parametrize(("labels", "evidence", "expected"), DISAGREEMENT_CASES)
def test_disagreement_threshold(labels, evidence, expected):
    result = agreement(
        [
            Judgement("q", name, label, frozenset(chosen))
            for name, label, chosen in zip(("ann", "bob"), labels, evidence, strict=True)
        ],
        {"q": {"s1", "s2", "s3", "s4", "s5"}},
    )
    assert result.per_item[0].disagreement is expected


def test_a_single_annotator_is_no_disagreement():
    result = agreement([Judgement("q", "ann", "answerable", frozenset({"s1"}))], {"q": {"s1"}})
    assert not result.per_item[0].disagreement
    assert result.pairs == () and result.answerability_alpha is None


def test_the_same_annotator_twice_on_one_item_is_refused():
    with pytest.raises(ValueError, match="twice"):
        agreement([Judgement("q", "ann", "answerable"), Judgement("q", "ann", "partial")], {})


# ---- generated data: independent formulas and the packages called directly ----------------


def _kappa_by_formula(a, b):
    n = len(a)
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[k] * cb[k] for k in set(ca) | set(cb)) / n / n
    return None if p_e == 1 else (p_o - p_e) / (1 - p_e)


def _alpha_by_coincidences(units):
    """Nominal alpha from the coincidence matrix (Krippendorff 2011, section C)."""
    o = Counter()
    for unit in units:
        values = list(unit.values())
        m = len(values)
        if m < 2:
            continue
        for i, j in itertools.permutations(range(m), 2):
            o[(values[i], values[j])] += 1 / (m - 1)
    n_c = Counter()
    for (c, _k), weight in o.items():
        n_c[c] += weight
    n = sum(n_c.values())
    if n == 0 or len(n_c) < 2:
        return None
    d_o = sum(w for (c, k), w in o.items() if c != k) / n
    d_e = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k) / (n * (n - 1))
    return 1 - d_o / d_e


def _generated(seed):
    rng = random.Random(seed)
    annotators = [f"a{i}" for i in range(rng.randint(2, 5))]
    judgements, candidates = [], {}
    for item in range(rng.randint(5, 30)):
        truth = rng.choice(["answerable", "partial", "unanswerable"])
        sentences = [f"q{item}s{s}" for s in range(rng.randint(1, 12))]
        candidates[f"q{item}"] = set(sentences)
        gold = {s for s in sentences if rng.random() < 0.3}
        judged_by = [a for a in annotators if rng.random() < 0.7]
        for name in judged_by:
            label = truth if rng.random() < 0.7 else rng.choice(["answerable", "partial", "unanswerable"])
            chosen = {s for s in sentences if (s in gold) != (rng.random() < 0.15)}
            judgements.append(Judgement(f"q{item}", name, label, frozenset(chosen)))
    return judgements, candidates


@pytest.mark.parametrize("seed", range(40))
def test_generated_data_matches_the_formulas_and_the_packages(seed):
    judgements, candidates = _generated(seed)
    result = agreement(judgements, candidates)
    by = {(j.item, j.annotator): j for j in judgements}
    items = sorted({j.item for j in judgements})
    annotators = sorted({j.annotator for j in judgements})

    # Answerability alpha: the package on the (annotators x items) matrix with nan for missing.
    code = {"answerable": 0, "partial": 1, "unanswerable": 2}
    matrix = np.array(
        [[code[by[(i, a)].label] if (i, a) in by else np.nan for i in items] for a in annotators]
    )
    units = [{a: by[(i, a)].label for a in annotators if (i, a) in by} for i in items]
    expected_by_formula = _alpha_by_coincidences(units)
    if expected_by_formula is None:
        assert result.answerability_alpha is None
    else:
        assert result.answerability_alpha == pytest.approx(expected_by_formula, abs=1e-9)
        assert result.answerability_alpha == pytest.approx(
            krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"), abs=1e-9
        )

    # Evidence alpha over candidate sentences.
    evidence_units = [
        {a: int(s in by[(i, a)].evidence) for a in annotators if (i, a) in by}
        for i in items
        for s in sorted(candidates[i])
    ]
    assert result.evidence_units == len(evidence_units)
    expected = _alpha_by_coincidences(evidence_units)
    if expected is None:
        assert result.evidence_alpha is None
    else:
        assert result.evidence_alpha == pytest.approx(expected, abs=1e-9)

    # Pairwise kappa: the formula and scikit-learn on the items both judged.
    for pair in result.pairs:
        shared = [i for i in items if (i, pair.annotator_a) in by and (i, pair.annotator_b) in by]
        assert pair.items == len(shared)
        la = [by[(i, pair.annotator_a)].label for i in shared]
        lb = [by[(i, pair.annotator_b)].label for i in shared]
        if not shared:
            assert pair.answerability_kappa is None
            continue
        formula = _kappa_by_formula(la, lb)
        if formula is None:
            assert pair.answerability_kappa is None
        else:
            assert pair.answerability_kappa == pytest.approx(formula, abs=1e-9)
            assert pair.answerability_kappa == pytest.approx(cohen_kappa_score(la, lb), abs=1e-9)
        ea = [int(s in by[(i, pair.annotator_a)].evidence) for i in shared for s in sorted(candidates[i])]
        eb = [int(s in by[(i, pair.annotator_b)].evidence) for i in shared for s in sorted(candidates[i])]
        formula = _kappa_by_formula(ea, eb)
        assert (pair.evidence_kappa is None) == (formula is None)
        if formula is not None:
            assert pair.evidence_kappa == pytest.approx(formula, abs=1e-9)
        f1s = [
            evidence_f1(by[(i, pair.annotator_a)].evidence, by[(i, pair.annotator_b)].evidence)
            for i in shared
        ]
        assert pair.evidence_f1 == pytest.approx(sum(f1s) / len(f1s))

    for item in result.per_item:
        if len(item.annotators) < 2:
            assert item.evidence_f1 is None and not item.disagreement
        else:
            assert 0.0 <= item.evidence_f1 <= 1.0


def test_agreement_with_the_suggestion_by_hand():
    from review.evaluation.agreement import suggestion_agreement

    def j(label, *evidence):
        return Judgement(item="", annotator="", label=label, evidence=frozenset(evidence))

    figures = suggestion_agreement(
        [
            (j("answerable", "d#S1"), j("answerable", "d#S1")),  # kept as it was
            (j("answerable", "d#S1", "d#S2"), j("answerable", "d#S1")),  # F1 = 2*1 / 3
            (j("partial", "d#S3"), j("answerable", "d#S1")),  # F1 0, label changed
            (j("unanswerable"), j("unanswerable")),  # both empty: F1 1
        ]
    )
    assert (figures.annotations, figures.labels_kept, figures.unchanged) == (4, 0.75, 2)
    assert figures.evidence_f1 == pytest.approx((1 + 2 / 3 + 0 + 1) / 4)
    assert suggestion_agreement([]).labels_kept is None and suggestion_agreement([]).evidence_f1 is None
