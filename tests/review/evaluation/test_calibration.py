"""Expected calibration error of answer confidence, on hand-computed cases."""

from __future__ import annotations

import pytest

from review.evaluation.evaluate import evaluate
from review.evaluation.metrics import confidence_correct, expected_calibration_error
from review.evaluation.types import GoldCase, Prediction


def test_ece_weighs_each_bin_gap_by_its_share_of_answers():
    pairs = [(0.9, True), (0.9, False), (0.1, False), (0.1, False)]
    # bin 0.9: said 0.9, right 1 of 2 -> gap 0.4, half the answers; bin 0.1: gap 0.1, half.
    assert expected_calibration_error(pairs) == pytest.approx(0.4 * 0.5 + 0.1 * 0.5)
    assert expected_calibration_error([(1.0, True), (0.0, False)]) == pytest.approx(0.0)
    assert expected_calibration_error([]) is None


def test_right_means_refusing_the_unanswerable_or_citing_well_for_the_answerable():
    assert confidence_correct(refused=True, answerable=False, citation_f1=None)
    assert not confidence_correct(refused=False, answerable=False, citation_f1=None)
    assert confidence_correct(refused=False, answerable=True, citation_f1=0.5)
    assert not confidence_correct(refused=False, answerable=True, citation_f1=0.4)
    assert not confidence_correct(refused=True, answerable=True, citation_f1=0.0)


def test_evaluate_reports_the_ece_of_the_confidence_it_was_given():
    cases = [
        GoldCase("a", "Q?", ("d",), ("d#S1",), "ref", True),
        GoldCase("b", "Q?", ("d",), (), "", False),
    ]
    predictions = [
        Prediction("a", "x", False, ("d",), ("d#S1",), confidence=0.8),  # right, said 0.8
        Prediction("b", "x", False, ("d",), ("d#S2",), confidence=0.3),  # wrong (answered), said 0.3
    ]
    result = evaluate(cases, predictions)
    assert result.metrics["confidence_ece"] == pytest.approx(0.5 * 0.2 + 0.5 * 0.3)
    without = evaluate(cases, [Prediction("a", "x", False, ("d",), ("d#S1",))])
    assert without.metrics["confidence_ece"] is None


def test_reliability_bins_count_predict_and_observe_per_tenth():
    from review.evaluation.metrics import reliability_bins

    pairs = [(0.05, False), (0.15, False), (0.15, True), (0.95, True), (1.0, True), (0.9, False)]
    bins = reliability_bins(pairs)
    assert len(bins) == 10 and bins[0].low == 0.0 and bins[-1].high == 1.0
    assert [b.count for b in bins] == [1, 2, 0, 0, 0, 0, 0, 0, 0, 3]
    assert bins[0].mean_probability == pytest.approx(0.05) and bins[0].observed == 0.0
    assert bins[1].mean_probability == pytest.approx(0.15) and bins[1].observed == 0.5
    assert bins[2].mean_probability is None and bins[2].observed is None and bins[2].gap is None
    # 1.0 falls in the last bin with 0.9 and 0.95: predicted (0.9 + 0.95 + 1.0) / 3, right 2 of 3.
    assert bins[9].mean_probability == pytest.approx(0.95) and bins[9].observed == pytest.approx(2 / 3)
    # The ECE is the count-weighted mean of the bins' gaps.
    expected = (1 * 0.05 + 2 * 0.35 + 3 * abs(0.95 - 2 / 3)) / 6
    assert expected_calibration_error(pairs) == pytest.approx(expected)
