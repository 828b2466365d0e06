"""Scoring the report's own outputs must reproduce the report's numbers.

These read shared/data/analyst-bench beside the repository (``../shared/data``
from its root) and skip when it is absent.
"""

import json

import pytest

from review.evaluation import evaluate, evidence_key
from review.evaluation.reference import (
    CONFIGURATIONS,
    PRESET_CONFIGURATIONS,
    REPORTED_RESULTS,
    SPLITS,
    analyst_bench_dir,
    load_gold_cases,
    load_gold_sentence_texts,
    load_reference_evaluation,
    load_reference_predictions,
    looks_like_refusal,
    rescore_reference,
)

BENCH = analyst_bench_dir()
needs_data = pytest.mark.skipif(
    not (BENCH / "reference-outputs").is_dir(),
    reason=f"analyst-bench data not found at {BENCH} (expected ../shared/data from the repo root)",
)

ORACLE_DOC = "gold/the-world-factbook-by-cia__Oman_history"


def test_presets_cover_every_report_configuration_once():
    assert sorted(PRESET_CONFIGURATIONS.values()) == sorted(CONFIGURATIONS)
    assert set(REPORTED_RESULTS) == set(CONFIGURATIONS)


def test_looks_like_refusal_reads_the_first_sentence():
    assert looks_like_refusal("The document does not provide sufficient information to answer this question.")
    assert looks_like_refusal("Unfortunately, I don’t have the information you need.")
    assert looks_like_refusal("I'm unable to verify the figure. However, estimates say 15%.")
    assert not looks_like_refusal(
        "Keita won the 2013 election. The document does not provide sufficient information on turnout."
    )
    assert not looks_like_refusal("")


@needs_data
def test_gold_cases_follow_file_order_and_key_evidence_by_document():
    cases = load_gold_cases("train")
    assert len(cases) == 24
    assert [c.case_id for c in cases[:3]] == ["q001", "q002", "q003"]
    q005 = cases[4]
    assert q005.gold_documents == (ORACLE_DOC,)
    assert q005.gold_evidence == (evidence_key(ORACLE_DOC, "S8"), evidence_key(ORACLE_DOC, "S9"))
    assert q005.rubric is not None
    unanswerable = [c.case_id for c in cases if not c.answerable]
    assert unanswerable == ["q004", "q010", "q011"]
    # the quirk: q011 is unanswerable yet lists evidence
    assert cases[10].gold_evidence == (evidence_key(ORACLE_DOC, "S9"),)


@needs_data
def test_reference_outputs_are_keyed_like_our_cases():
    for split in SPLITS:
        cases = load_gold_cases(split)
        for configuration in CONFIGURATIONS:
            predictions = load_reference_predictions(split, configuration)
            assert [p.case_id for p in predictions] == [c.case_id for c in cases]


@needs_data
def test_gold_sentence_texts_are_keyed_like_evidence():
    texts = load_gold_sentence_texts()
    assert texts[evidence_key(ORACLE_DOC, "S1")].startswith("The inhabitants of the area")
    every_gold_key = {k for s in SPLITS for c in load_gold_cases(s) for k in c.gold_evidence}
    assert every_gold_key <= set(texts)


@needs_data
def test_bm25_baseline_rescored_matches_published_recall():
    # The report: BM25 baseline R@1 54.2% (13/24), R@5 62.5% (15/24).
    metrics = rescore_reference("train", configurations=("simple",))["simple"].metrics
    assert metrics["recall_at_1"] == pytest.approx(13 / 24)
    assert metrics["recall_at_5"] == pytest.approx(15 / 24)
    assert round(100 * metrics["recall_at_1"], 1) == 54.2
    assert round(100 * metrics["recall_at_5"], 1) == 62.5
    # no judge ran on the baseline: the table's "-"
    assert metrics["answer_score"] is None
    assert metrics["combined"] is None


@needs_data
def test_rescored_train_matches_the_published_table():
    results = rescore_reference("train")
    for configuration, published in REPORTED_RESULTS.items():
        metrics = results[configuration].metrics
        assert round(metrics["recall_at_1"], 3) == published.recall_at_1, configuration
        assert round(metrics["recall_at_5"], 3) == published.recall_at_5, configuration
        assert round(metrics["citation_f1"], 3) == published.citation_f1, configuration
        if published.answer_score is None:
            assert metrics["answer_score"] is None
        else:
            assert round(metrics["answer_score"], 2) == published.answer_score, configuration
            assert round(metrics["combined"], 2) == published.combined, configuration


def _authors_numbers(evaluation):
    retrieval, citation = evaluation["retrieval"], evaluation["citation"]
    judge = evaluation.get("llm_judge") or {}
    return {
        "recall_at_1": retrieval["recall_at_1"] / retrieval["total"],
        "recall_at_5": retrieval["recall_at_5"] / retrieval["total"],
        "citation_precision": citation["avg_precision"],
        "citation_recall": citation["avg_recall"],
        "citation_f1": citation["avg_f1"],
        "answer_score": judge.get("avg_answer_score"),
        "evidence_score": judge.get("avg_evidence_score"),
        "combined": judge.get("avg_combined_score"),
    }


@needs_data
@pytest.mark.parametrize("split", SPLITS)
def test_rescored_outputs_match_the_authors_evaluation_files(split):
    # Every split and configuration, at full precision: our metrics reproduce the
    # authors' scorer on their outputs.
    for configuration, result in rescore_reference(split).items():
        expected = _authors_numbers(load_reference_evaluation(split, configuration))
        for key, value in expected.items():
            if value is None:
                if key == "evidence_score":
                    continue  # no judge file, but EvidenceScore needs none
                assert result.metrics[key] is None, (split, configuration, key)
            else:
                assert result.metrics[key] == pytest.approx(value), (split, configuration, key)


@needs_data
def test_per_question_evidence_scores_match_the_authors():
    cases = load_gold_cases("train")
    texts = load_gold_sentence_texts()
    evaluation = load_reference_evaluation("train", "extension5")
    predictions = load_reference_predictions("train", "extension5")
    rows = {row["case_id"]: row for row in evaluate(cases, predictions, texts).per_case}
    for authors in evaluation["llm_judge"]["per_question"]:
        ours = rows[authors["question_id"]]
        assert ours["evidence_score"] == pytest.approx(authors["evidence_score"])
        assert ours["combined"] == pytest.approx(authors["combined_score"])


@needs_data
def test_keying_evidence_to_the_answer_document_only_lowers_citation_credit():
    gold_keyed = rescore_reference("train")
    answer_keyed = rescore_reference("train", evidence_document="answer")
    for configuration in CONFIGURATIONS:
        assert (
            answer_keyed[configuration].metrics["citation_f1"]
            <= gold_keyed[configuration].metrics["citation_f1"]
        )
    # the BM25 baseline cites from its top document, which is not the gold one for 11 of 24
    assert answer_keyed["simple"].metrics["citation_f1"] < 0.241


@needs_data
def test_reference_refusals_on_train():
    refused = {
        configuration: [p.case_id for p in load_reference_predictions("train", configuration) if p.refused]
        for configuration in ("simple", "extension6")
    }
    assert refused["simple"] == []
    assert refused["extension6"] == ["q004", "q010", "q011"]


@needs_data
def test_reference_outputs_question_text_is_checked(tmp_path):
    bench = tmp_path / "analyst-bench"
    (bench / "questions").mkdir(parents=True)
    (bench / "reference-outputs").mkdir()
    (bench / "questions" / "dev.jsonl").write_text(
        (BENCH / "questions" / "dev.jsonl").read_text(encoding="utf-8"), encoding="utf-8"
    )
    outputs = json.loads((BENCH / "reference-outputs" / "dev_simple_output.json").read_text())
    outputs["q002"]["question"] = "a different question"
    (bench / "reference-outputs" / "dev_simple_output.json").write_text(json.dumps(outputs))
    with pytest.raises(ValueError, match="q002"):
        load_reference_predictions("dev", "simple", data_dir=tmp_path, with_judge_scores=False)


def test_unknown_split_or_configuration_is_an_error():
    with pytest.raises(ValueError):
        load_gold_cases("validation")
    with pytest.raises(ValueError):
        load_reference_predictions("train", "extension7")
