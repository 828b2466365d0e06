"""Evaluation runs through the API, the review -> gold -> evaluation loop, and real end-to-end runs."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from documents.models import Document, Sentence
from qa import services as qa_services
from qa.models import Question
from review.models import EvaluationRun, GoldCase
from review.services import evaluation as evaluation_services
from review.services import gold as gold_services
from review.services import reviews as review_services
from tests.conftest import wait_for
from tests.factories import ingest_inline
from tests.review.helpers import PERFECT, PERFECT_PORT, STAFF, ScriptedAnswers, client_for, make_document

pytestmark = pytest.mark.urls("tests.review.urls")


def execute(run_id, script, user):
    """What the worker does, with scripted answers instead of the pipeline."""
    return evaluation_services.evaluation_run_execute(
        run_id=run_id, answer_fn=ScriptedAnswers(script, user), judge=None
    )


@pytest.mark.django_db
def test_starting_an_evaluation_returns_202_and_the_status_url_shows_progress_then_metrics(tiny, analyst):
    client = client_for(analyst)
    response = client.post(
        "/api/evaluations/", {"benchmark": "tiny", "preset": "default", "split": "dev"}, format="json"
    )
    assert response.status_code == 202, response.content
    body = response.json()
    assert (body["status"], body["progress"]) == ("queued", {"done": 0, "total": 3})
    assert body["preset_config"]["name"] == "default" and body["benchmark_version"] == 1
    assert response["Location"] == body["status_url"]

    execute(body["id"], PERFECT, analyst)
    status = client.get(body["status_url"]).json()
    assert (status["status"], status["progress"]) == ("done", {"done": 3, "total": 3})
    assert status["metrics"]["citation_f1"] == pytest.approx(0.5)
    cases = client.get(body["cases_url"]).json()["results"]
    assert [c["case_id"] for c in cases] == ["c1", "c2", "c3"]
    assert cases[0]["answer"] is not None and cases[0]["metrics"]["recall_at_1"] == 1.0
    assert execute(body["id"], PERFECT, analyst) is None  # a second delivery finds nothing to claim


@pytest.mark.django_db
def test_evaluation_requests_are_validated_and_team_scoped(tiny, analyst, outsider):
    client = client_for(analyst)
    bad = client.post("/api/evaluations/", {"benchmark": "tiny", "preset": "nope"}, format="json")
    assert bad.status_code == 400 and "Unknown preset" in bad.json()["detail"]
    run = evaluation_services.evaluation_run_create(
        benchmark=tiny, preset="default", user=analyst, enqueue=False
    )
    stranger = client_for(outsider)
    assert (
        stranger.post(
            "/api/evaluations/", {"benchmark": "tiny", "preset": "default"}, format="json"
        ).status_code
        == 404
    )
    assert stranger.get(f"/api/evaluations/{run.pk}/").status_code == 404
    assert stranger.get(f"/api/evaluations/{run.pk}/cases/").status_code == 404
    assert stranger.get("/api/evaluations/").json()["results"] == []
    assert not EvaluationRun.objects.exclude(pk=run.pk).exists()


@pytest.mark.django_db
def test_correcting_a_citation_of_an_evaluated_answer_changes_the_gold_and_the_next_run(
    tiny, analyst, corpus
):
    client = client_for(analyst)
    first = client.post("/api/evaluations/", {"benchmark": "tiny", "preset": "default"}, format="json").json()
    execute(first["id"], PERFECT, analyst)
    staff_case = next(c for c in client.get(first["cases_url"]).json()["results"] if c["case_id"] == "c2")
    assert staff_case["metrics"]["citation_f1"] == 0.0  # the system cited S1, the gold says S2

    # A reviewer decides the answer's S1 is evidence too: the citations become S1 + S2.
    port = Document.objects.get(corpus=corpus, external_id="port")
    cited = [Sentence.objects.get(document=port, label=label).pk for label in ("S1", "S2")]
    corrected = client.post(
        f"/api/answers/{staff_case['answer']}/reviews/",
        {
            "action": "correct",
            "reason": "wrong_citation",
            "base_version": 0,
            "sentences": [
                {"text": "It handled 4.2 million containers with 1,850 staff.", "citations": cited}
            ],
        },
        format="json",
    )
    assert corrected.status_code == 201, corrected.content
    gold = GoldCase.objects.get(case_id="c2")
    assert (gold.revision, gold.gold_evidence) == (2, ["port#S1", "port#S2"])
    assert gold.reference_answer == "1,850 staff."  # written by an annotator: stays

    second = client.post(
        "/api/evaluations/", {"benchmark": "tiny", "preset": "default"}, format="json"
    ).json()
    assert second["benchmark_version"] == 2
    execute(second["id"], PERFECT, analyst)
    staff_again = next(c for c in client.get(second["cases_url"]).json()["results"] if c["case_id"] == "c2")
    assert staff_again["gold_revision"] == 2
    assert staff_again["metrics"]["citation_f1"] == pytest.approx(2 / 3)  # same answer, corrected gold
    assert client.get(second["status_url"]).json()["metrics"]["citation_f1"] > first_f1(client, first)


def first_f1(client, run) -> float:
    return client.get(run["status_url"]).json()["metrics"]["citation_f1"]


@pytest.mark.django_db
def test_an_answer_made_gold_then_corrected_is_evaluated_against_the_correction(corpus, analyst, tmp_path):
    make_document(
        corpus, "port", ["The port handled 4.2 million containers in 2024.", "It employed 1,850 staff."]
    )
    asked = ScriptedAnswers(PERFECT_PORT, analyst)
    answer = asked(corpus=corpus, text=STAFF, preset="default")[0].answer  # cites S1, like the system did
    review_services.answer_accept(answer=answer, reviewer=analyst, base_version=0)
    benchmark = gold_services.gold_case_from_answer(
        answer=answer, benchmark=_benchmark(corpus, analyst), split="dev", user=analyst
    ).benchmark
    out = StringIO()
    call_command(
        "evaluate",
        user=analyst.username,
        benchmark=benchmark.name,
        preset="default",
        answer_fn=asked,
        judge=None,
        stdout=out,
    )
    assert EvaluationRun.objects.get().metrics["citation_f1"] == 1.0  # gold = what was accepted

    port = Document.objects.get(corpus=corpus, external_id="port")
    review_services.answer_correct(
        answer=answer,
        reviewer=analyst,
        base_version=1,
        sentences=[
            review_services.CorrectionSentence(
                "1,850 staff.", (Sentence.objects.get(document=port, label="S2").pk,)
            )
        ],
    )
    call_command(
        "evaluate",
        user=analyst.username,
        benchmark=benchmark.name,
        preset="default",
        answer_fn=asked,
        judge=None,
        stdout=out,
    )
    latest = EvaluationRun.objects.order_by("-pk").first()
    assert latest.metrics["citation_f1"] == 0.0  # the system still cites S1; the corrected gold is S2
    assert GoldCase.objects.get().reference_answer == "1,850 staff."


def _benchmark(corpus, user):
    from review.services.benchmarks import benchmark_create

    return benchmark_create(name="from-reviews", corpus=corpus, user=user)


REPORT = b"""Harbor report

The port handled 4.2 million containers in 2024. Dredging of the main channel finished in October.
The authority employed 1,850 staff. Revenue reached 312 million dollars.
"""
FLOODS = b"""Westmere floods

Heavy rain flooded the river valley in March. Two thousand residents were evacuated from the lowlands.
The government opened six shelters near the capital.
"""


def annotate_two_cases(corpus, user):
    from review.services.benchmarks import benchmark_create

    benchmark = benchmark_create(name="harbor", corpus=corpus, user=user)
    report = Document.objects.get(corpus=corpus, external_id="report")
    floods = Document.objects.get(corpus=corpus, external_id="floods")
    staff = Sentence.objects.get(document=report, text="The authority employed 1,850 staff.")
    evacuated = Sentence.objects.get(
        document=floods, text="Two thousand residents were evacuated from the lowlands."
    )
    for document, question, evidence, reference in [
        (report, "How many staff did the port authority employ?", staff, "1,850 staff."),
        (floods, "How many residents were evacuated after the floods?", evacuated, "Two thousand residents."),
    ]:
        gold_services.gold_case_annotate(
            benchmark=benchmark,
            document=document,
            question=question,
            evidence_sentence_ids=[evidence.pk],
            reference_answer=reference,
            answerable=True,
            split="dev",
            user=user,
        )
    return benchmark


@pytest.mark.django_db
def test_the_real_pipeline_answers_an_annotated_benchmark_in_process(corpus, analyst, embedder, tmp_path):
    ingest_inline(corpus, embedder, "report.txt", REPORT)
    ingest_inline(corpus, embedder, "floods.txt", FLOODS)
    benchmark = annotate_two_cases(corpus, analyst)
    out_path = tmp_path / "real.json"
    call_command(
        "evaluate",
        user=analyst.username,
        benchmark=benchmark.name,
        preset="bm25",
        json_out=out_path,
        stdout=StringIO(),
    )
    run = EvaluationRun.objects.get()
    assert run.status == "done", run.error
    assert run.metrics["recall_at_1"] == 1.0
    assert run.metrics["citation_recall"] == 1.0  # the default preset cites the sentence that answers
    assert {key for key in run.metrics if key.startswith("latency_")}  # per-stage timings from the trace
    assert all(result.answer_id for result in run.case_results.all())


@pytest.mark.django_db
def test_evaluation_questions_stay_out_of_the_review_queue_and_history_unless_asked_for(
    corpus, analyst, embedder
):
    ingest_inline(corpus, embedder, "report.txt", REPORT)
    ingest_inline(corpus, embedder, "floods.txt", FLOODS)
    benchmark = annotate_two_cases(corpus, analyst)
    with pytest.raises(CommandError, match="Give --user NAME"):
        call_command("evaluate", benchmark=benchmark.name, preset="bm25", stdout=StringIO())
    asked = qa_services.answer_now(user=analyst, corpus=corpus, text="How many staff does the port employ?")
    call_command(
        "evaluate", user=analyst.username, benchmark=benchmark.name, preset="bm25", stdout=StringIO()
    )
    evaluated = {result.question_id for result in EvaluationRun.objects.get().case_results.all()}
    assert len(evaluated) == 2 and Question.objects.filter(pk__in=evaluated, is_evaluation=True).count() == 2

    client = client_for(analyst)

    def shown(url: str, key: str) -> set[int]:
        body = client.get(url).json()
        return {row[key] for row in (body["results"] if isinstance(body, dict) else body)}

    assert shown("/api/questions/", "id") == {asked.pk}
    assert shown("/api/questions/?origin=evaluation", "id") == evaluated
    assert shown("/api/questions/?origin=all", "id") == evaluated | {asked.pk}
    assert shown("/api/review-queue/", "question_id") == {asked.pk}
    assert shown("/api/review-queue/?origin=evaluation", "question_id") == evaluated
    assert client.get("/api/review-queue/?origin=mine").status_code == 400


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_an_evaluation_started_from_the_api_is_run_by_a_real_worker(
    celery_worker_process, corpus, analyst, embedder
):
    ingest_inline(corpus, embedder, "report.txt", REPORT)
    ingest_inline(corpus, embedder, "floods.txt", FLOODS)
    annotate_two_cases(corpus, analyst)
    client = client_for(analyst)
    response = client.post("/api/evaluations/", {"benchmark": "harbor", "preset": "bm25"}, format="json")
    assert response.status_code == 202
    status = wait_for(
        lambda: (
            (body := client.get(response.json()["status_url"]).json())["status"] in ("done", "failed")
            and body
        ),
        timeout=300,
        message="the worker to finish the evaluation run",
    )
    assert status["status"] == "done", status["error"]
    assert status["progress"] == {"done": 2, "total": 2}
    assert status["metrics"]["recall_at_1"] == 1.0
    cases = client.get(response.json()["cases_url"]).json()["results"]
    assert all(case["answer"] for case in cases)
