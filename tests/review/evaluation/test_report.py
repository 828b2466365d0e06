from review.evaluation import EvaluationResult
from review.evaluation.reference import CONFIGURATION_LABELS, CONFIGURATIONS
from review.evaluation.report import format_comparison_table, results_table


def _lines_for(table, label):
    lines = table.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(label))
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith(" "):
            break
        block.append(line)
    return block


def test_published_rows_only_by_default_in_report_order():
    table = format_comparison_table()
    lines = table.splitlines()
    assert lines[0].split() == [
        "configuration",
        "source",
        "R@1",
        "R@5",
        "citation",
        "F1",
        "answer",
        "/5",
        "combined",
    ]
    labels = [line for line in lines[2:] if not line.startswith(" ")]
    assert [line.split("  ")[0].split(" (")[0] for line in labels] == [
        CONFIGURATION_LABELS[c] for c in CONFIGURATIONS
    ]
    bm25 = _lines_for(table, "BM25 baseline (bm25)")
    assert bm25[0].split()[-5:] == ["54.2%", "62.5%", "0.241", "-", "-"]
    verify = _lines_for(table, "Ext 6 verification (verify)")
    assert verify[0].split()[-5:] == ["75.0%", "100.0%", "0.632", "3.88", "0.71"]


def test_three_sources_per_configuration_with_missing_values_as_dashes():
    rescored = {
        "simple": EvaluationResult(
            metrics={
                "recall_at_1": 0.5,
                "recall_at_5": 1.0,
                "citation_f1": 0.25,
                "answer_score": None,
                "combined": None,
            },
            per_case=[],
        )
    }
    ours = {"bm25": {"recall_at_1": 0.75, "citation_f1": 0.3333}, "bm25-tuned": {"recall_at_1": 1.0}}
    table = format_comparison_table(rescored, ours)
    bm25 = _lines_for(table, "BM25 baseline (bm25)")
    assert [line.split()[-6] for line in bm25] == ["published", "re-scored", "ours"]
    assert bm25[1].split()[-5:] == ["50.0%", "100.0%", "0.250", "-", "-"]
    assert bm25[2].split()[-5:] == ["75.0%", "-", "0.333", "-", "-"]
    # a preset the report has no row for comes after the report's rows
    assert table.splitlines()[-1].split()[:3] == ["bm25-tuned", "ours", "100.0%"]
    # columns line up: every row is as wide as the header or narrower
    width = len(table.splitlines()[0])
    assert all(len(line) <= width for line in table.splitlines())


def test_extra_columns_and_title():
    table = format_comparison_table(
        {"strong": {"rouge_l": 0.1234, "evidence_score": 0.08}},
        columns=("evidence_score", "rouge_l"),
        title="train",
    )
    lines = table.splitlines()
    assert lines[0] == "train"
    assert lines[1].split()[-2:] == ["evidence", "ROUGE-L"]
    strong = _lines_for(table, "LLM only (llm-only)")
    assert strong[1].split()[-2:] == ["0.080", "0.123"]


def test_a_benchmark_the_report_never_scored_gets_our_numbers_in_wide_columns():
    table = results_table(
        {"default": {"recall_at_1": 0.5, "mrr": 0.625, "jafs": 1.0}},
        title="harbor v3, split dev",
        source_format="analyst-bench",
        split="dev",
    )
    header = table.text.splitlines()[1].split()
    assert {"MRR", "JAFS", "evidence"} <= set(header)
    assert "published" not in table.text and "50.0%" in table.text and "0.625" in table.text
    assert table.warnings == ()


def test_analyst_bench_train_without_the_reports_outputs_keeps_published_and_ours_and_warns(tmp_path):
    missing = tmp_path / "analyst-bench"
    missing.mkdir()
    table = results_table(
        {"bm25": {"recall_at_1": 0.667}},
        title="ab v1, split train",
        source_format="analyst-bench",
        source_path=str(missing),
        split="train",
    )
    assert "the report's table layout" in table.text
    lines = table.text.splitlines()
    bm25 = next(i for i, line in enumerate(lines) if line.startswith("BM25 baseline (bm25)"))
    assert lines[bm25].split()[3:5] == ["published", "54.2%"]
    assert lines[bm25 + 1].split()[:2] == ["ours", "66.7%"]
    assert len(table.warnings) == 1 and "could not be re-scored" in table.warnings[0]
