"""MTRAG-UN: the real slice read into per-collection plans, a small file imported and evaluated
as multi-turn cases with per-class scores."""

from __future__ import annotations

import json
from collections import Counter
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from documents.models import Document
from review.benchmark_files import BenchmarkFileError, read_mtrag_un
from review.models import Benchmark, EvaluationRun
from tests.conftest import shared_data


def test_the_slice_reads_as_four_collections_with_every_task_and_class():
    plans = read_mtrag_un(shared_data("mtrag-un"))
    assert sorted(plans) == ["clapnq", "fiqa", "govt", "ibmcloud"]
    cases = [case for plan in plans.values() for case in plan.cases]
    # SOURCE.md: ANSWERABLE 145, UNANSWERABLE 42, UNDERSPECIFIED 39, PARTIAL 27.
    assert Counter(c.metadata["answerability"] for c in cases) == {
        "answerable": 145,
        "unanswerable": 42,
        "underspecified": 39,
        "partial": 27,
    }
    assert {c.split for c in cases} == {"train", "test"}
    # A conversation never straddles the split: tuning on train sees no test conversation.
    by_conversation = {}
    for case in cases:
        by_conversation.setdefault(case.case_id.rsplit("-", 1)[0], set()).add(case.split)
    assert all(len(splits) == 1 for splits in by_conversation.values())
    follow_up = next(c for c in cases if c.metadata["conversation"])
    assert follow_up.metadata["conversation"][0]["speaker"] == "user"
    assert all(not c.gold_evidence for c in cases if c.metadata["answerability"] == "unanswerable")
    govt = {d.external_id for d in plans["govt"].documents}
    assert all(doc in govt for c in plans["govt"].cases for doc in c.gold_documents)


def task(conversation, turn, turns, kind, contexts=(), collection="fiqa", target="..."):
    return {
        "conversation_id": conversation,
        "task_id": f"{conversation}<::>{turn}",
        "turn": str(turn),
        "input": [{"speaker": s, "text": t} for s, t in turns],
        "contexts": [{"document_id": d, "text": t} for d, t in contexts],
        "targets": [{"speaker": "agent", "text": target}],
        "answerability": [kind],
        "Question Type": ["Factoid"],
        "Multi-Turn": ["Follow-up"],
        "Collection": [collection],
    }


ROTH = (
    "roth-1",
    "A Roth IRA is a retirement account funded with money that has already been taxed. "
    "Withdrawals of contributions from a Roth IRA are free of tax and penalty at any time. "
    "Earnings withdrawn before age 59 and a half may be taxed.",
)
BONDS = (
    "bonds-1",
    "A bond fund holds many bonds at once. Bond prices fall when interest rates rise. "
    "Short-term bond funds move less with rates than long-term ones.",
)


def write_tasks(path, tasks):
    path.write_text("\n".join(json.dumps(t) for t in tasks) + "\n")
    return path


@pytest.fixture
def small_mtrag(tmp_path):
    return write_tasks(
        tmp_path / "reference.jsonl",
        [
            task(
                "c1",
                2,
                [
                    ("user", "What is a Roth IRA?"),
                    ("agent", "A Roth IRA is a retirement account funded with taxed money."),
                    ("user", "Can I withdraw my contributions from it without penalty?"),
                ],
                "ANSWERABLE",
                [ROTH],
            ),
            task(
                "c2",
                1,
                [("user", "What did the Federal Reserve decide at its meeting last week?")],
                "UNANSWERABLE",
            ),
            task(
                "c3",
                1,
                [("user", "Why do bond prices fall when interest rates rise?")],
                "ANSWERABLE",
                [BONDS],
            ),
        ],
    )


@pytest.mark.django_db
def test_import_then_evaluate_asks_each_follow_up_after_its_conversation(small_mtrag, analyst, tmp_path):
    out = StringIO()
    call_command(
        "import_benchmark", str(small_mtrag), name="mt", format="mtrag-un", in_process=True, stdout=out
    )
    assert "Benchmark 'mt-fiqa' v1 on corpus 'mt-fiqa': 3 case(s) read, 3 new" in out.getvalue()
    benchmark = Benchmark.objects.get(name="mt-fiqa")
    assert Document.objects.filter(corpus=benchmark.corpus, status="ready").count() == 2
    follow_up = benchmark.cases.get(case_id="c1-2")
    assert follow_up.question == "Can I withdraw my contributions from it without penalty?"
    assert follow_up.metadata["conversation"][0]["text"] == "What is a Roth IRA?"

    report = tmp_path / "run.json"
    call_command(
        "evaluate",
        user=analyst.username,
        benchmark="mt-fiqa",
        preset="default",
        json_out=report,
        judge=None,
        stdout=StringIO(),
        stderr=StringIO(),
    )
    run = EvaluationRun.objects.get()
    assert run.status == "done", run.error
    result = run.case_results.get(gold_case=follow_up)
    # The follow-up was searched with the conversation's subject, which its own words lack.
    assert "roth" in result.question.standalone_text.lower()
    assert run.metrics["class_answerable_cases"] == 2.0
    assert run.metrics["class_unanswerable_cases"] == 1.0
    assert "class_refusal_f1" in run.metrics


def test_a_task_with_an_unknown_class_names_its_line(tmp_path):
    path = write_tasks(tmp_path / "reference.jsonl", [task("c1", 1, [("user", "Hi?")], "MAYBE")])
    with pytest.raises(BenchmarkFileError, match="reference.jsonl, line 1: unknown answerability 'maybe'"):
        read_mtrag_un(path)


@pytest.mark.django_db
def test_an_unknown_collection_imports_nothing(small_mtrag):
    with pytest.raises(CommandError, match="No collection govt"):
        call_command(
            "import_benchmark",
            str(small_mtrag),
            name="mt",
            format="mtrag-un",
            collection=["govt"],
            stdout=StringIO(),
        )
    assert not Benchmark.objects.exists()
