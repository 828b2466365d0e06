import pytest

from review.evaluation import (
    AGGREGATE_KEYS,
    GoldCase,
    Prediction,
    evaluate,
    evidence_key,
    split_evidence_key,
)

DOC = "gold/oman"
OTHER = "cia/oman-full"

GOLD_TEXTS = {
    evidence_key(DOC, "S1"): "Qaboos opened the country",
    evidence_key(DOC, "S2"): "reforms created jobs",
    evidence_key(DOC, "S3"): "oil revenue fell",
}


def case(case_id, *, evidence=("S1", "S2"), answerable=True, documents=(DOC,), answer="jobs"):
    return GoldCase(
        case_id=case_id,
        question=f"question {case_id}",
        gold_documents=documents,
        gold_evidence=tuple(evidence_key(DOC, label) for label in evidence),
        reference_answer=answer,
        answerable=answerable,
    )


def prediction(case_id, *, retrieved=(DOC,), cited=(), refused=False, answer="jobs", **extra):
    return Prediction(
        case_id=case_id,
        answer=answer,
        refused=refused,
        retrieved_documents=retrieved,
        cited_evidence=tuple(evidence_key(DOC, label) for label in cited),
        **extra,
    )


def test_evidence_keys_round_trip():
    assert evidence_key("gold/a", "S3") == "gold/a#S3"
    assert split_evidence_key("gold/a#S3") == ("gold/a", "S3")
    assert split_evidence_key("S3") == ("", "S3")


def test_aggregates_hand_computed():
    cases = [case("q1"), case("q2"), case("q3", evidence=(), answerable=False)]
    predictions = [
        # q1: gold at rank 1; cites S1 (P 1, R 1/2, F1 2/3)
        prediction("q1", retrieved=(DOC, OTHER), cited=("S1",), answer_score=4, support_score=1.0),
        # q2: gold at rank 3; cites S1, S2, S3 (P 2/3, R 1, F1 0.8)
        prediction(
            "q2",
            retrieved=("x", "y", DOC),
            cited=("S1", "S2", "S3"),
            answer_score=2,
            support_score=0.5,
        ),
        # q3: unanswerable, refused, cites nothing
        prediction("q3", refused=True, answer="no", answer_score=5),
    ]
    result = evaluate(cases, predictions, GOLD_TEXTS)
    metrics = result.metrics
    # R@1 = (1 + 0 + 1) / 3; R@5 = 3/3; MRR = (1 + 1/3 + 1) / 3
    assert metrics["recall_at_1"] == pytest.approx(2 / 3)
    assert metrics["recall_at_5"] == 1.0
    assert metrics["mrr"] == pytest.approx((1 + 1 / 3 + 1) / 3)
    # citations over q1, q2 only (q3 has no gold evidence)
    assert metrics["citation_precision"] == pytest.approx((1 + 2 / 3) / 2)
    assert metrics["citation_recall"] == pytest.approx((0.5 + 1) / 2)
    assert metrics["citation_f1"] == pytest.approx((2 / 3 + 0.8) / 2)
    # evidence: gold words q1/q2 = {qaboos, opened, the, country, reforms, created, jobs} (7)
    #   q1 cites S1 -> 4/7; q2 cites all -> 7/7; q3 no gold, no citations -> 1
    assert metrics["evidence_score"] == pytest.approx((4 / 7 + 1 + 1) / 3)
    # combined per case: 0.5*4/5 + 0.5*4/7, 0.5*2/5 + 0.5*1, 0.5*5/5 + 0.5*1
    expected_combined = [0.4 + 2 / 7, 0.2 + 0.5, 1.0]
    assert metrics["combined"] == pytest.approx(sum(expected_combined) / 3)
    assert metrics["answer_score"] == pytest.approx(11 / 3)
    # refusal: one TP, nothing else -> P = R = F1 = 1
    assert (metrics["refusal_precision"], metrics["refusal_recall"], metrics["refusal_f1"]) == (
        1.0,
        1.0,
        1.0,
    )
    # JAFS: support 1.0, support 0.5, correct refusal 1 -> 2.5/3
    assert metrics["jafs"] == pytest.approx(2.5 / 3)
    # answers: q1, q2 "jobs" == "jobs"; q3 "no" vs "jobs" -> 0
    assert metrics["answer_token_f1"] == pytest.approx(2 / 3)
    assert metrics["rouge_l"] == pytest.approx(2 / 3)
    assert [row["case_id"] for row in result.per_case] == ["q1", "q2", "q3"]
    assert result.per_case[1]["gold_rank"] == 3
    assert result.per_case[2]["citation_f1"] is None


def test_exactly_the_documented_keys_without_latency():
    result = evaluate([case("q1")], [prediction("q1")], GOLD_TEXTS)
    assert tuple(result.metrics) == AGGREGATE_KEYS


def test_empty_case_list_gives_none_for_every_metric():
    result = evaluate([], [], {})
    assert set(result.metrics) == set(AGGREGATE_KEYS)
    assert all(value is None for value in result.metrics.values())
    assert result.per_case == []


def test_missing_prediction_scores_as_an_empty_answer():
    cases = [case("q1"), case("q2")]
    result = evaluate(cases, [prediction("q1", cited=("S1", "S2"), answer_score=5)], GOLD_TEXTS)
    missing = result.per_case[1]
    assert missing["recall_at_1"] == 0.0
    assert missing["citation_f1"] == 0.0
    assert missing["evidence_score"] == 0.0
    assert result.metrics["recall_at_1"] == 0.5
    # q2 has no judge score, so neither answer_score nor combined is estimated
    assert result.metrics["answer_score"] is None
    assert result.metrics["combined"] is None


def test_no_predictions_at_all():
    result = evaluate([case("q1"), case("q2", answerable=False)], [], GOLD_TEXTS)
    assert result.metrics["recall_at_1"] == 0.0
    assert result.metrics["citation_f1"] == 0.0
    assert result.metrics["refusal_recall"] == 0.0
    assert result.metrics["refusal_precision"] is None
    assert result.metrics["answer_score"] is None


def test_prediction_for_unknown_case_is_an_error():
    with pytest.raises(ValueError, match="unknown cases: q1$"):
        evaluate([case("q001")], [prediction("q1")], GOLD_TEXTS)


def test_two_predictions_for_one_case_is_an_error():
    with pytest.raises(ValueError, match="two predictions"):
        evaluate([case("q1")], [prediction("q1"), prediction("q1")], GOLD_TEXTS)


def test_unknown_convention_is_an_error():
    with pytest.raises(ValueError):
        evaluate([case("q1")], [prediction("q1")], GOLD_TEXTS, convention="lenient")


def test_combined_is_none_when_no_judge_ran():
    cases = [case("q1"), case("q2")]
    predictions = [prediction("q1", cited=("S1",)), prediction("q2", cited=("S2",))]
    result = evaluate(cases, predictions, GOLD_TEXTS)
    assert result.metrics["answer_score"] is None
    assert result.metrics["combined"] is None
    assert result.per_case[0]["combined"] is None
    assert result.metrics["evidence_score"] is not None


def test_one_missing_judge_score_makes_the_means_none_not_partial():
    cases = [case("q1"), case("q2")]
    predictions = [prediction("q1", answer_score=5), prediction("q2")]
    result = evaluate(cases, predictions, GOLD_TEXTS)
    assert result.per_case[0]["combined"] is not None
    assert result.metrics["answer_score"] is None
    assert result.metrics["combined"] is None


def test_cases_without_gold_evidence_stay_out_of_citation_averages():
    cases = [case("q1", evidence=()), case("q2", evidence=("S1",))]
    predictions = [prediction("q1", cited=("S3",)), prediction("q2", cited=("S1",))]
    result = evaluate(cases, predictions, GOLD_TEXTS)
    # only q2 counts: P = R = F1 = 1; q1's stray citation does not drag it down
    assert result.metrics["citation_f1"] == 1.0
    # but its EvidenceScore is 0 (no gold words, cited words present); q2 is 1
    assert result.metrics["evidence_score"] == 0.5


def test_only_cases_without_gold_evidence_give_no_citation_metrics():
    result = evaluate([case("q1", evidence=())], [prediction("q1")], GOLD_TEXTS)
    assert result.metrics["citation_f1"] is None
    assert result.metrics["citation_precision"] is None


def test_duplicate_citations_and_retrievals_count_once():
    cases = [case("q1", evidence=("S1", "S2"))]
    predictions = [prediction("q1", retrieved=("x", "x", "x", "x", "x", DOC), cited=("S1", "S1", "S1"))]
    result = evaluate(cases, predictions, GOLD_TEXTS)
    # document ranking x, DOC -> rank 2: R@1 0, R@5 1, MRR 1/2
    assert (result.metrics["recall_at_1"], result.metrics["recall_at_5"]) == (0.0, 1.0)
    assert result.metrics["mrr"] == 0.5
    # cited {S1}: P 1, R 1/2
    assert result.metrics["citation_precision"] == 1.0
    assert result.metrics["citation_recall"] == 0.5


def test_citation_of_same_label_in_another_document_earns_nothing():
    cases = [case("q1", evidence=("S1",))]
    stray = Prediction(
        case_id="q1",
        answer="jobs",
        refused=False,
        retrieved_documents=(OTHER,),
        cited_evidence=(evidence_key(OTHER, "S1"),),
    )
    result = evaluate(cases, [stray], GOLD_TEXTS)
    assert result.metrics["citation_f1"] == 0.0
    # its text is unknown (not a gold sentence, no cited_texts): no words
    assert result.metrics["evidence_score"] == 0.0


def test_cited_texts_override_the_gold_lookup():
    cases = [case("q1", evidence=("S1",))]
    cited = Prediction(
        case_id="q1",
        answer="jobs",
        refused=False,
        retrieved_documents=(OTHER,),
        cited_evidence=(evidence_key(OTHER, "S7"),),
        cited_texts=("Qaboos opened the borders",),
    )
    # gold words {qaboos, opened, the, country}; cited has 3 of them -> 3/4
    assert evaluate(cases, [cited], GOLD_TEXTS).metrics["evidence_score"] == 0.75


def test_gold_documents_missing_leave_case_out_of_retrieval():
    cases = [case("q1", documents=()), case("q2")]
    result = evaluate(cases, [prediction("q1"), prediction("q2")], GOLD_TEXTS)
    assert result.per_case[0]["recall_at_1"] is None
    assert result.metrics["recall_at_1"] == 1.0


def test_unanswerable_refused_and_answered():
    cases = [
        case("q1", evidence=(), answerable=False),
        case("q2", evidence=(), answerable=False),
    ]
    predictions = [
        prediction("q1", refused=True, support_score=None),
        prediction("q2", refused=False, cited=("S1",), support_score=1.0),
    ]
    result = evaluate(cases, predictions, GOLD_TEXTS)
    assert [row["jafs"] for row in result.per_case] == [1.0, 0.0]
    assert [row["evidence_score"] for row in result.per_case] == [1.0, 0.0]
    assert result.metrics["refusal_precision"] == 1.0
    assert result.metrics["refusal_recall"] == 0.5
    # F1 = 2*1 / (2*1 + 0 + 1)
    assert result.metrics["refusal_f1"] == pytest.approx(2 / 3)


def test_refusing_an_answerable_case_scores_zero_jafs_even_if_supported():
    cases = [case("q1")]
    result = evaluate(cases, [prediction("q1", refused=True, support_score=1.0)], GOLD_TEXTS)
    assert result.metrics["jafs"] == 0.0
    assert result.metrics["refusal_precision"] == 0.0
    assert result.metrics["refusal_recall"] is None


def test_jafs_is_none_when_an_answered_case_was_not_verified():
    cases = [case("q1"), case("q2", evidence=(), answerable=False)]
    predictions = [prediction("q1"), prediction("q2", refused=True)]
    assert evaluate(cases, predictions, GOLD_TEXTS).metrics["jafs"] is None


# The analyst-bench quirk: unanswerable, yet evidence ids are listed.
QUIRK = case("q11", evidence=("S2",), answerable=False)


def test_report_convention_scores_listed_evidence_of_unanswerable_cases():
    refused = prediction("q11", refused=True)
    result = evaluate([QUIRK], [refused], GOLD_TEXTS)
    # counted in citation metrics; citing nothing -> 0
    assert result.metrics["citation_f1"] == 0.0
    # gold words present, no citations -> 0, as the report scored train q011
    assert result.metrics["evidence_score"] == 0.0
    citing = prediction("q11", refused=True, cited=("S1", "S2"))
    result = evaluate([QUIRK], [citing], GOLD_TEXTS)
    # P 1/2, R 1, F1 2/3; evidence: all gold words {reforms, created, jobs} covered -> 1
    assert result.metrics["citation_f1"] == pytest.approx(2 / 3)
    assert result.metrics["evidence_score"] == 1.0


def test_stated_convention_leaves_unanswerable_cases_out_of_citations():
    refused = prediction("q11", refused=True)
    result = evaluate([QUIRK], [refused], GOLD_TEXTS, convention="stated")
    assert result.metrics["citation_f1"] is None
    assert result.metrics["evidence_score"] == 1.0
    citing = prediction("q11", refused=True, cited=("S1", "S2"))
    result = evaluate([QUIRK], [citing], GOLD_TEXTS, convention="stated")
    assert result.metrics["evidence_score"] == 1.0  # word overlap, as for any cited answer


def test_stated_convention_gives_zero_to_citations_without_gold_evidence():
    unanswerable = case("q1", evidence=(), answerable=False)
    # cites a label the gold texts do not know: under "report" that is no words -> 1.0
    bogus = Prediction(
        case_id="q1",
        answer="",
        refused=True,
        retrieved_documents=(),
        cited_evidence=(evidence_key(DOC, "S99"),),
    )
    assert evaluate([unanswerable], [bogus], GOLD_TEXTS).metrics["evidence_score"] == 1.0
    stated = evaluate([unanswerable], [bogus], GOLD_TEXTS, convention="stated")
    assert stated.metrics["evidence_score"] == 0.0


def test_latency_keys_are_medians_per_stage_seen():
    cases = [case("q1"), case("q2"), case("q3")]
    predictions = [
        prediction("q1", stage_latency={"retrieve": 0.1, "generate": 2.0}),
        prediction("q2", stage_latency={"retrieve": 0.3, "generate": 4.0}),
        prediction("q3", stage_latency={"retrieve": 5.0, "verify": 1.0}),
    ]
    metrics = evaluate(cases, predictions, GOLD_TEXTS).metrics
    assert metrics["latency_retrieve"] == 0.3  # median of 0.1, 0.3, 5.0
    assert metrics["latency_generate"] == 3.0  # median of 2.0, 4.0
    assert metrics["latency_verify"] == 1.0
    assert [key for key in metrics if key.startswith("latency_")] == [
        "latency_retrieve",
        "latency_generate",
        "latency_verify",
    ]
