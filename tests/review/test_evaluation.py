"""The evaluate command on a tiny benchmark, --compare, the judge, and the report-table layout."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from qa.pipeline.core.types import Answer as PipelineAnswer
from qa.pipeline.core.types import AnswerSentence as PipelineSentence
from qa.pipeline.core.types import SourceSentence
from qa.pipeline.flow.run import PipelineRun
from review.models import EvaluationRun
from review.services.evaluation import preset_config
from tests.conftest import shared_data
from tests.review.helpers import MUSCAT, PERFECT, SHIFTED, STAFF, ScriptedAnswers


def evaluate(*args, stderr=None, **options) -> str:
    out = StringIO()
    call_command("evaluate", *args, stdout=out, stderr=stderr or StringIO(), **options)
    return out.getvalue()


class FixedJudge:
    name = "fixed"

    def __init__(self, reply: str):
        self.reply = reply
        self.prompts = []

    def complete(self, messages, *, temperature=0.0, max_tokens=512):
        self.prompts.append(messages)
        return self.reply


@pytest.mark.django_db
def test_evaluate_scores_a_tiny_benchmark_and_writes_json(tiny, analyst, tmp_path):
    answers = ScriptedAnswers(PERFECT, analyst)
    out_path = tmp_path / "run.json"
    output = evaluate(
        user=analyst.username,
        benchmark="tiny",
        preset="default",
        json_out=out_path,
        answer_fn=answers,
        judge=None,
    )

    assert [preset for _, preset in answers.asked] == ["default"] * 3
    data = json.loads(out_path.read_text())
    metrics = data["metrics"]
    assert metrics["recall_at_1"] == pytest.approx(2 / 3)  # the staff question ranked its document second
    assert metrics["recall_at_5"] == 1.0
    assert metrics["citation_f1"] == pytest.approx(0.5)  # right on c1, wrong sentence on c2
    assert metrics["refusal_recall"] == 1.0 and metrics["refusal_precision"] == 1.0
    assert metrics["answer_score"] is None and metrics["combined"] is None  # no LLM: no judge, no estimate
    assert metrics["latency_generation"] == pytest.approx(0.05)
    assert data["preset"]["name"] == "default" and "retrieval" in data["preset"]["config"]
    assert [c["case_id"] for c in data["cases"]] == ["c1", "c2", "c3"]
    assert data["cases"][1]["metrics"]["citation_f1"] == 0.0
    assert data["cases"][1]["prediction"]["cited_evidence"] == ["port#S1"]

    run = EvaluationRun.objects.get()
    assert (run.status, run.progress_done, run.progress_total, run.benchmark_version) == ("done", 3, 3, 1)
    assert "R@1" in output and "66.7%" in output
    assert f"run {run.pk}: preset default, 3 case(s)" in output


@pytest.mark.django_db
def test_a_configured_judge_scores_answers_against_the_rubric(tiny, analyst, tmp_path):
    judge = FixedJudge("Score: 4")
    out_path = tmp_path / "run.json"
    evaluate(
        user=analyst.username,
        benchmark="tiny",
        preset="default",
        json_out=out_path,
        answer_fn=ScriptedAnswers(PERFECT, analyst),
        judge=judge,
    )
    metrics = json.loads(out_path.read_text())["metrics"]
    assert metrics["answer_score"] == 4.0
    assert metrics["combined"] is not None
    assert "right" in judge.prompts[0][1]["content"]  # the case's rubric went to the judge


@pytest.mark.django_db
def test_limit_and_split_choose_the_cases(tiny, analyst):
    answers = ScriptedAnswers(PERFECT, analyst)
    evaluate(
        user=analyst.username,
        benchmark="tiny",
        preset="default",
        split="dev",
        limit=2,
        answer_fn=answers,
        judge=None,
    )
    assert [text for text, _ in answers.asked] == [MUSCAT, STAFF]
    with pytest.raises(CommandError, match="no cases in split test"):
        evaluate(
            user=analyst.username,
            benchmark="tiny",
            preset="default",
            split="test",
            answer_fn=answers,
            judge=None,
        )
    with pytest.raises(CommandError, match="Unknown preset"):
        evaluate(user=analyst.username, benchmark="tiny", preset="no-such-preset", judge=None)


@pytest.mark.django_db
def test_a_case_that_cannot_be_answered_scores_as_a_failure_not_a_smaller_test(tiny, analyst, tmp_path):
    def flaky(*, corpus, text, preset, user=None):
        if text == STAFF:
            raise RuntimeError("the retriever fell over")
        return ScriptedAnswers(PERFECT, analyst)(corpus=corpus, text=text, preset=preset, user=user)

    out_path = tmp_path / "run.json"
    evaluate(
        user=analyst.username,
        benchmark="tiny",
        preset="default",
        json_out=out_path,
        answer_fn=flaky,
        judge=None,
    )
    data = json.loads(out_path.read_text())
    assert data["metrics"]["recall_at_1"] == pytest.approx(2 / 3)
    assert "the retriever fell over" in data["cases"][1]["error"]
    assert EvaluationRun.objects.get().error.startswith("1 of 3 case(s) got no answer")


@pytest.mark.django_db
def test_a_run_that_answers_nothing_fails_and_says_why(tiny, analyst, tmp_path):
    def no_llm(*, corpus, text, preset, user=None):
        raise RuntimeError("QA_LLM_PROVIDER is none: this preset needs an LLM")

    with pytest.raises(CommandError, match="All 3 case.s. got no answer; the first: .*needs an LLM"):
        evaluate(user=analyst.username, benchmark="tiny", preset="default", answer_fn=no_llm, judge=None)
    assert EvaluationRun.objects.get().status == "failed"


@pytest.mark.django_db
def test_compare_lists_metric_deltas_and_the_cases_that_got_worse_first(tiny, analyst):
    evaluate(
        user=analyst.username,
        benchmark="tiny",
        preset="default",
        answer_fn=ScriptedAnswers(PERFECT, analyst),
        judge=None,
    )
    evaluate(
        user=analyst.username,
        benchmark="tiny",
        preset="default",
        answer_fn=ScriptedAnswers(SHIFTED, analyst),
        judge=None,
    )
    first, second = EvaluationRun.objects.order_by("pk")
    output = evaluate(compare=[first.pk, second.pk])

    recall_line = next(line for line in output.splitlines() if line.startswith("recall_at_1"))
    assert recall_line.split()[1:] == ["0.667", "0.667", "+0.000"]
    citation_line = next(line for line in output.splitlines() if line.startswith("citation_f1"))
    assert citation_line.split()[1:] == ["0.500", "0.500", "+0.000"]
    worse = output.index("Cases that got worse (1)")
    better = output.index("Cases that got better (1)")
    assert worse < output.index("dev/c1") < better < output.index("dev/c2")
    assert "citation_f1 1.000 -> 0.000" in output
    with pytest.raises(CommandError, match="No evaluation run 999999"):
        evaluate(compare=[first.pk, 999999])


class GoldParrot:
    """Answers every analyst-bench question with its gold document and evidence (no sentence rows needed)."""

    def __init__(self, benchmark, user):
        self.cases = {case.question: case for case in benchmark.cases.all()}
        self.user = user

    def __call__(self, *, corpus, text, preset, user=None):
        from qa.models import Answer, AnswerSentence, Citation, Question

        case = self.cases[text]
        question = Question.objects.create(
            user=self.user, corpus=corpus, text=text, preset=preset, status="done"
        )
        answer = Answer.objects.create(
            question=question,
            text=case.reference_answer,
            refused=not case.answerable,
            retrieved_documents=case.gold_documents,
        )
        row = AnswerSentence.objects.create(answer=answer, ordinal=0, text=case.reference_answer or "-")
        for ordinal, key in enumerate(case.gold_evidence if case.answerable else []):
            doc, label = key.rsplit("#", 1)
            Citation.objects.create(
                answer_sentence=row,
                ordinal=ordinal,
                document_external_id=doc,
                document_title=doc,
                label=label,
                sentence_ordinal=0,
                text=case.evidence_texts[key],
                start=0,
                end=1,
            )
        cited = tuple(
            SourceSentence(n, doc, doc, 0, label, case.evidence_texts[f"{doc}#{label}"])
            for n, (doc, label) in enumerate(
                key.rsplit("#", 1) for key in (case.gold_evidence if case.answerable else [])
            )
        )
        answered = PipelineAnswer(
            sentences=(PipelineSentence(case.reference_answer or "-", cited),),
            refused=not case.answerable,
            retrieved_documents=tuple(case.gold_documents),
        )
        return question, PipelineRun(question=text, preset=preset, answer=answered)


@pytest.mark.django_db
def test_preset_all_on_analyst_bench_train_prints_the_report_table_with_the_reports_outputs_rescored(analyst):
    from qa.presets import PRESET_NAMES

    root = shared_data("analyst-bench")
    call_command(
        "import_benchmark",
        str(root),
        name="ab",
        format="analyst-bench",
        documents="gold",
        no_wait=True,
        stdout=StringIO(),
    )
    from review.models import Benchmark

    parrot = GoldParrot(Benchmark.objects.get(name="ab"), analyst)
    err = StringIO()
    output = evaluate(
        user=analyst.username,
        benchmark="ab",
        preset="all",
        split="train",
        answer_fn=parrot,
        judge=None,
        stderr=err,
    )

    # No LLM is configured in the tests: the presets with no retrieval (llm-only,
    # vanilla) are left out and say so; the rest ran.
    llm_only = {name for name in PRESET_NAMES if preset_config(name).get("retrieval") is None}
    assert "llm-only" in llm_only
    for name in llm_only:
        assert f"{name}: skipped" in err.getvalue()
    assert "QA_LLM_PROVIDER" in err.getvalue()
    assert (
        set(EvaluationRun.objects.filter(status="done").values_list("preset", flat=True))
        == set(PRESET_NAMES) - llm_only
    )
    assert not EvaluationRun.objects.exclude(status="done").exists()
    assert "the report's table layout" in output
    lines = output.splitlines()
    bm25 = lines.index(next(line for line in lines if line.startswith("BM25 baseline (bm25)")))
    assert lines[bm25].split()[3:6] == ["published", "54.2%", "62.5%"]
    assert lines[bm25 + 1].split()[:3] == [
        "re-scored",
        "54.2%",
        "62.5%",
    ]  # the report's own outputs, our metric code
    assert lines[bm25 + 2].split()[:3] == ["ours", "100.0%", "100.0%"]
    assert any(line.startswith("Ext 6 verification (verify)") for line in lines)
