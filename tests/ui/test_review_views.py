"""Review, annotation and evaluation pages through Django's test client."""

from __future__ import annotations

import pytest

from review.models import Benchmark, EvaluationRun, GoldCase, Review
from tests.ui.conftest import PASSWORD, PRESET

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client, analyst):
    assert client.login(username=analyst.username, password=PASSWORD)
    return client


def review_url(question) -> str:
    return f"/review/answers/{question.answer.pk}/"


def test_the_queue_lists_unreviewed_answers_first(signed_in, answered):
    page = signed_in.get("/review/").content.decode()
    assert answered.text[:40] in page
    assert review_url(answered) in page
    assert signed_in.get("/review/?status=accepted").content.decode().count(review_url(answered)) == 0
    assert signed_in.get("/review/?status=bogus&corpus=x&preset=y").status_code == 200


def test_accept_then_the_history_shows_it(signed_in, analyst, answered):
    url = review_url(answered)
    response = signed_in.post(url, {"action": "accept", "base_version": 0, "comment": "Checked against S2."})
    assert response.status_code == 302
    review = Review.objects.get(answer=answered.answer)
    assert (review.action, review.version, review.comment) == ("accept", 1, "Checked against S2.")
    page = signed_in.get(url).content.decode()
    assert "Checked against S2." in page and "latest: accept" in page


def test_a_flag_needs_a_reason(signed_in, answered):
    response = signed_in.post(review_url(answered), {"action": "flag", "base_version": 0, "reason": ""})
    assert response.status_code == 400
    assert "Choose why you flag it." in response.content.decode()
    assert not Review.objects.exists()
    response = signed_in.post(review_url(answered), {"action": "flag", "base_version": 0, "reason": "other"})
    assert response.status_code == 400
    assert "needs a comment" in response.content.decode()


def test_a_stale_decision_is_refused_and_shows_what_changed(signed_in, analyst, answered):
    from review.services.reviews import answer_accept

    answer_accept(answer=answered.answer, reviewer=analyst, base_version=0, comment="first look")
    response = signed_in.post(
        review_url(answered), {"action": "flag", "base_version": 0, "reason": "wrong", "comment": "mine"}
    )
    assert response.status_code == 409
    page = response.content.decode()
    assert "Someone decided first." in page and "first look" in page
    assert 'name="base_version" value="1"' in page  # resubmitting now decides on the current version
    assert Review.objects.count() == 1


@pytest.mark.parametrize(
    "cite",
    [
        # As the viewer shows it, document:number: the one name a person sees and types.
        lambda sentence: f"{sentence.document.external_id}:{sentence.label}",
        # A sentence's database id, as older pages and scripts gave it.
        lambda sentence: f"{sentence.pk}",
    ],
    ids=["reference", "id"],
)
def test_a_correction_with_cited_sentences(signed_in, answered, demo_documents, cite):
    sentence = demo_documents[0].sentences.order_by("ordinal")[1]
    response = signed_in.post(
        review_url(answered),
        {
            "action": "correct",
            "base_version": 0,
            "sentence_text": ["Corrected.", ""],
            "sentence_cites": [cite(sentence), ""],
            "comment": "tighter",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    review = Review.objects.get()
    corrected = review.sentences.get()
    assert corrected.text == "Corrected."
    assert corrected.citations.get().label == sentence.label
    page = signed_in.get(review_url(answered)).content.decode()
    assert "Answer as corrected" in page and "Corrected." in page


def test_the_correction_form_shows_citations_as_the_viewer_names_them(signed_in, answered):
    page = signed_in.get(review_url(answered)).content.decode()
    cited = answered.answer.sentences.first().citations.first()
    assert f'value="{cited.document_external_id}:{cited.label}' in page


@pytest.mark.parametrize(
    "rows, message",
    [
        (
            {"sentence_text": ["Text"], "sentence_cites": ["12 abc"]},
            "is not a sentence: write document:number",
        ),
        ({"sentence_text": ["Text"], "sentence_cites": ["nowhere:3"]}, "names no sentence of this corpus"),
        ({"sentence_text": [""], "sentence_cites": ["12"]}, "has citations but no text"),
        ({"sentence_text": [""], "sentence_cites": [""]}, "has no sentences"),
        ({"sentence_text": ["Text"], "sentence_cites": ["99999999"]}, "are not sentences of corpus"),
    ],
)
def test_bad_corrections_are_form_errors(signed_in, answered, rows, message):
    response = signed_in.post(review_url(answered), {"action": "correct", "base_version": 0, **rows})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Review.objects.exists()


def test_add_to_benchmark_after_accepting(signed_in, analyst, answered):
    url = review_url(answered)
    assert "Accept or correct the answer first" in signed_in.get(url).content.decode()
    signed_in.post(url, {"action": "accept", "base_version": 0})
    response = signed_in.post(url, {"action": "gold", "new_benchmark": "ports", "split": "dev"})
    assert response.status_code == 302
    case = GoldCase.objects.get()
    assert (case.benchmark.name, case.split, case.source_answer_id) == ("ports", "dev", answered.answer.pk)
    page = signed_in.get(url).content.decode()
    assert f"/benchmarks/{case.benchmark_id}/cases/{case.pk}/" in page
    assert signed_in.get(f"/benchmarks/{case.benchmark_id}/cases/{case.pk}/").status_code == 200
    response = signed_in.post(
        url, {"action": "gold", "benchmark": "ports", "new_benchmark": "other", "split": "dev"}
    )
    assert response.status_code == 400 and "not both" in response.content.decode()


def test_annotate_a_question_with_evidence(signed_in, demo_documents):
    document = demo_documents[0]
    evidence = list(document.sentences.order_by("ordinal"))[1:3]
    url = f"/annotate/?document={document.pk}"
    assert signed_in.get("/annotate/").status_code == 200
    page = signed_in.get(url).content.decode()
    assert f'value="{evidence[0].pk}"' in page
    missing = signed_in.post(url, {"question": "How big?", "new_benchmark": "annotated", "split": "train"})
    assert missing.status_code == 400
    assert "Select the sentences that answer the question" in missing.content.decode()
    response = signed_in.post(
        url,
        {
            "question": "How many containers?",
            "evidence": [s.pk for s in evidence],
            "reference_answer": "4.2 million.",
            "new_benchmark": "annotated",
            "split": "train",
        },
    )
    assert response.status_code == 302
    case = GoldCase.objects.get()
    assert case.gold_evidence == [f"{document.external_id}#{s.label}" for s in evidence]
    assert case.answerable and case.reference_answer == "4.2 million."
    unanswerable = signed_in.post(
        url,
        {"question": "Who is the mayor?", "unanswerable": "on", "benchmark": "annotated", "split": "train"},
    )
    assert unanswerable.status_code == 302
    assert not GoldCase.objects.get(question="Who is the mayor?").answerable


def test_an_outsider_cannot_reach_benchmarks_or_runs(client, outsider, analyst, demo_documents, corpus):
    from review.services.benchmarks import benchmark_create
    from review.services.evaluation import evaluation_run_create
    from review.services.gold import gold_case_annotate

    benchmark = benchmark_create(name="private", corpus=corpus, user=analyst)
    case = gold_case_annotate(
        benchmark=benchmark,
        document=demo_documents[0],
        question="Q?",
        evidence_sentence_ids=[],
        reference_answer="",
        answerable=False,
        split="dev",
        user=analyst,
    )
    run = evaluation_run_create(benchmark=benchmark, preset=PRESET, user=analyst, enqueue=False)
    assert client.login(username=outsider.username, password=PASSWORD)
    for url in (
        f"/benchmarks/{benchmark.pk}/",
        f"/benchmarks/{benchmark.pk}/cases/{case.pk}/",
        f"/evaluate/runs/{run.pk}/",
        f"/evaluate/runs/{run.pk}/progress/",
    ):
        assert client.get(url).status_code == 404, url
    assert "private" not in client.get("/evaluate/").content.decode()


def test_start_a_run_and_read_its_progress(signed_in, analyst, demo_documents, corpus):
    from review.services.benchmarks import benchmark_create
    from review.services.gold import gold_case_annotate

    benchmark = benchmark_create(name="bench", corpus=corpus, user=analyst)
    gold_case_annotate(
        benchmark=benchmark,
        document=demo_documents[0],
        question="How many staff?",
        evidence_sentence_ids=[demo_documents[0].sentences.first().pk],
        reference_answer="1,850",
        answerable=True,
        split="dev",
        user=analyst,
    )
    bad = signed_in.post(
        "/evaluate/", {"benchmark": benchmark.pk, "preset": PRESET, "split": "test", "limit": ""}
    )
    assert bad.status_code == 200 and "has no cases in split test" in bad.content.decode()
    bad = signed_in.post("/evaluate/", {"benchmark": benchmark.pk, "preset": PRESET, "limit": "0"})
    assert "greater than or equal to 1" in bad.content.decode()
    response = signed_in.post("/evaluate/", {"benchmark": benchmark.pk, "preset": PRESET, "split": "dev"})
    run = EvaluationRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/evaluate/runs/{run.pk}/"
    page = signed_in.get(response["Location"]).content.decode()
    assert "<progress" in page and "0 of 1 cases" in page
    assert signed_in.get(f"/evaluate/runs/{run.pk}/progress/").json() == {
        "id": run.pk,
        "status": "queued",
        "done": 0,
        "total": 1,
        "percent": 0,
        "error": "",
    }
    assert Benchmark.objects.get().name in signed_in.get("/evaluate/").content.decode()


def test_a_finished_run_shows_metrics_beside_the_report_and_charts(
    signed_in, analyst, demo_documents, corpus
):
    from review.services.benchmarks import benchmark_create
    from review.services.evaluation import evaluation_run_create, evaluation_run_execute
    from review.services.gold import gold_case_annotate

    benchmark = benchmark_create(name="bench", corpus=corpus, user=analyst)
    document = demo_documents[0]
    gold_case_annotate(
        benchmark=benchmark,
        document=document,
        question="How many containers did the port handle?",
        evidence_sentence_ids=[document.sentences.get(ordinal=1).pk],
        reference_answer="4.2 million",
        answerable=True,
        split="dev",
        user=analyst,
    )
    run = evaluation_run_create(benchmark=benchmark, preset=PRESET, user=analyst, enqueue=False)
    evaluation_run_execute(run_id=run.pk, judge=None)
    page = signed_in.get(f"/evaluate/runs/{run.pk}/").content.decode()
    assert "Metrics beside the report" in page
    assert "0.833" in page  # the report's Recall@1 for extension 4, which the hybrid preset reproduces
    assert "/benchmarks/" in page and "/trace/" in page and "/review/answers/" in page
    # The retrieval lab's metrics and the per-type breakdown ("how many" is a quantity question).
    assert "nDCG@10" in page and "MAP@10" in page and "Unanswerable class F1" in page
    assert 'id="types-table"' in page and 'data-type="quantity"' in page
    overview = signed_in.get("/evaluate/").content.decode()
    assert overview.count('<svg class="chart"') == 2
    assert "Metrics by preset" in overview


def test_a_default_run_shows_its_reliability_diagram_and_ece(signed_in, analyst, demo_documents, corpus):
    from review.services.benchmarks import benchmark_create
    from review.services.evaluation import evaluation_run_create, evaluation_run_execute
    from review.services.gold import gold_case_annotate

    benchmark = benchmark_create(name="calibration", corpus=corpus, user=analyst)
    document = demo_documents[0]
    for question, answerable in (
        ("How many containers did the port handle?", True),
        ("What is the annual rainfall on Jupiter's moon Europa?", False),
    ):
        gold_case_annotate(
            benchmark=benchmark,
            document=document,
            question=question,
            evidence_sentence_ids=[document.sentences.get(ordinal=1).pk] if answerable else [],
            reference_answer="4.2 million" if answerable else "",
            answerable=answerable,
            split="dev",
            user=analyst,
        )
    run = evaluation_run_create(benchmark=benchmark, preset="default", user=analyst, enqueue=False)
    evaluation_run_execute(run_id=run.pk, judge=None)
    run.refresh_from_db()
    page = signed_in.get(f"/evaluate/runs/{run.pk}/").content.decode()
    assert "Confidence calibration" in page
    assert 'id="reliability-diagram"' in page and 'class="chart reliability"' in page
    ece = run.metrics["confidence_ece"]
    assert ece is not None and f"{ece:.3f}" in page.split('id="calibration-ece"')[1][:300]
    # Both cases have a confidence: the table's case counts add up to two.
    table = page.split('id="calibration-table"')[1].split("</table>")[0]
    assert sum(int(n) for n in __import__("re").findall(r'<td class="num">(\d+)</td>', table)) == 2
    # Selective answering: the risk-coverage curve, the preset's threshold named, one row per threshold.
    assert 'id="risk-coverage"' in page and 'class="chart risk-coverage"' in page
    assert "answer confidence <strong>0.65</strong>" in page
    curve = page.split('id="risk-coverage-table"')[1].split("</table>")[0]
    assert curve.count("<tr") == 21  # the header and 20 thresholds, 0.00 to 0.95
    answered = sum(not result.metrics["refused"] for result in run.case_results.all())
    first = curve.split("<tbody>")[1].split("</tr>")[0]
    assert f'<td class="num">{answered}</td>' in first  # at 0.00 every answered question is shown
    # Each case says what its analyst saw at 0.65 and whether that was right.
    from review.evaluation.selective import outcome_at

    cases = page.split('id="cases-table"')[1].split("</table>")[0]
    for result in run.case_results.all():
        seen = outcome_at(result.metrics, 0.65)
        row = cases.split(f"{result.gold_case.case_id}</a>")[1].split("</tr>")[0]
        assert f"{seen.shown_as} " in row and ('title="right"' in row) == seen.right
    assert cases.count("data-shown-as=") == run.case_results.count()
