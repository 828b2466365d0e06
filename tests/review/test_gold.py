"""Gold cases: from accepted and corrected answers, from annotators, and revised by later corrections."""

from __future__ import annotations

import pytest

from review.errors import BenchmarkExists, BenchmarkNotFound, GoldCaseInvalid
from review.models import Benchmark, GoldCase
from review.services import benchmarks as benchmark_services
from review.services import gold as gold_services
from review.services import reviews as review_services
from tests.factories import CorpusFactory
from tests.review.helpers import OMAN, PORT, client_for, make_answer, make_document, sentence

pytestmark = pytest.mark.urls("tests.review.urls")


@pytest.fixture
def oman(corpus):
    return make_document(corpus, "gold/oman", OMAN)


@pytest.fixture
def answer(corpus, analyst, oman):
    return make_answer(
        corpus=corpus,
        user=analyst,
        question="Who held Muscat?",
        parts=[("The Portuguese held Muscat from 1507 to 1650.", [sentence(oman, "S2")])],
    )


def make_gold(client, answer, benchmark="oman-bench", split="dev"):
    return client.post(
        f"/api/answers/{answer.pk}/gold/", {"benchmark": benchmark, "split": split}, format="json"
    )


@pytest.mark.django_db
def test_an_accepted_answer_becomes_a_gold_case_in_one_step(analyst, answer):
    review_services.answer_accept(answer=answer, reviewer=analyst, base_version=0)
    response = make_gold(client_for(analyst), answer)
    assert response.status_code == 201, response.content
    case = response.json()
    assert case["question"] == "Who held Muscat?"
    assert case["reference_answer"] == "The Portuguese held Muscat from 1507 to 1650."
    assert case["gold_documents"] == ["gold/oman"]
    assert case["gold_evidence"] == [{"key": "gold/oman#S2", "text": OMAN[1]}]
    assert (case["answerable"], case["provenance"], case["split"]) == (True, "review", "dev")
    assert case["source_answer"] == answer.pk
    assert [r["revision"] for r in case["revisions"]] == [1]
    benchmark = Benchmark.objects.get(name="oman-bench")
    assert benchmark.version == 1 and benchmark.corpus_id == answer.question.corpus_id


@pytest.mark.django_db
def test_a_corrected_answer_becomes_gold_with_the_corrected_text_and_citations(analyst, answer, oman):
    review_services.answer_correct(
        answer=answer,
        reviewer=analyst,
        base_version=0,
        sentences=[
            review_services.CorrectionSentence(
                "Portugal held Muscat from 1507 to 1650.", (sentence(oman, "S2").pk,)
            ),
            review_services.CorrectionSentence(
                "Oman traded across the Indian Ocean.", (sentence(oman, "S1").pk,)
            ),
        ],
    )
    case = make_gold(client_for(analyst), answer, split="train").json()
    assert (
        case["reference_answer"]
        == "Portugal held Muscat from 1507 to 1650. Oman traded across the Indian Ocean."
    )
    assert [e["key"] for e in case["gold_evidence"]] == ["gold/oman#S2", "gold/oman#S1"]


@pytest.mark.django_db
def test_a_refusal_that_was_accepted_becomes_an_unanswerable_case(corpus, analyst):
    refusal = make_answer(corpus=corpus, user=analyst, question="What is Oman's GDP in 2030?", refused=True)
    review_services.answer_accept(answer=refusal, reviewer=analyst, base_version=0)
    case = make_gold(client_for(analyst), refusal).json()
    assert case["answerable"] is False
    assert case["gold_evidence"] == [] and case["gold_documents"] == []


@pytest.mark.django_db
@pytest.mark.parametrize("decision", [None, "flag"])
def test_unreviewed_or_flagged_answers_cannot_become_gold(analyst, answer, decision):
    if decision == "flag":
        review_services.answer_flag(answer=answer, reviewer=analyst, base_version=0, reason="wrong")
    response = make_gold(client_for(analyst), answer)
    assert response.status_code == 400
    assert "accepted or corrected" in response.json()["detail"]
    assert not GoldCase.objects.exists()
    assert not Benchmark.objects.exists()  # the benchmark the request named was not left behind


@pytest.mark.django_db
def test_making_the_same_answer_gold_twice_revises_rather_than_duplicates(analyst, answer):
    review_services.answer_accept(answer=answer, reviewer=analyst, base_version=0)
    client = client_for(analyst)
    make_gold(client, answer, split="dev")
    again = make_gold(client, answer, split="test").json()
    assert GoldCase.objects.count() == 1
    assert again["split"] == "test" and again["revision"] == 2
    assert [r["snapshot"]["split"] for r in again["revisions"]] == ["dev", "test"]


@pytest.mark.django_db
def test_correcting_a_gold_answer_revises_its_case_and_keeps_the_old_evidence(analyst, answer, oman):
    review_services.answer_accept(answer=answer, reviewer=analyst, base_version=0)
    client = client_for(analyst)
    case_id = make_gold(client, answer).json()["id"]
    benchmark = Benchmark.objects.get(name="oman-bench")

    corrected = client.post(
        f"/api/answers/{answer.pk}/reviews/",
        {
            "action": "correct",
            "reason": "wrong_citation",
            "base_version": 1,
            "sentences": [
                {"text": "Sultan Qaboos took power in 1970.", "citations": [sentence(oman, "S3").pk]}
            ],
        },
        format="json",
    )
    assert corrected.status_code == 201, corrected.content

    case = client.get(f"/api/benchmarks/{benchmark.pk}/cases/{case_id}/").json()
    assert case["revision"] == 2
    assert case["gold_evidence"] == [{"key": "gold/oman#S3", "text": OMAN[2]}]
    assert case["reference_answer"] == "Sultan Qaboos took power in 1970."
    first, second = case["revisions"]
    assert first["snapshot"]["gold_evidence"] == ["gold/oman#S2"]
    assert second["snapshot"]["gold_evidence"] == ["gold/oman#S3"]
    assert "review v2" in second["note"] and second["changed_by"] == analyst.username
    assert client.get(f"/api/benchmarks/{benchmark.pk}/").json()["version"] == 2


@pytest.mark.django_db
def test_annotators_write_benchmark_questions_with_evidence(analyst, corpus, oman):
    client = client_for(analyst)
    created = client.post("/api/benchmarks/", {"name": "annotated", "corpus_id": corpus.pk}, format="json")
    assert created.status_code == 201, created.content
    benchmark_id = created.json()["id"]
    evidence = [sentence(oman, "S4").pk, sentence(oman, "S3").pk]
    response = client.post(
        f"/api/benchmarks/{benchmark_id}/cases/",
        {
            "document": oman.pk,
            "question": "How long did Sultan Qaboos rule?",
            "evidence_sentence_ids": evidence,
            "reference_answer": "From 1970 until his death in 2020.",
            "split": "test",
            "rubric": {"description": "Both years", "scale": {"1": "wrong", "5": "1970 to 2020"}},
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    case = response.json()
    assert [e["key"] for e in case["gold_evidence"]] == ["gold/oman#S3", "gold/oman#S4"]  # document order
    assert (case["case_id"], case["provenance"], case["answerable"]) == ("n001", "annotated", True)
    listed = client.get(f"/api/benchmarks/{benchmark_id}/cases/?split=test").json()["results"]
    assert [c["question"] for c in listed] == ["How long did Sultan Qaboos rule?"]
    detail = client.get(f"/api/benchmarks/{benchmark_id}/").json()
    assert (detail["case_count"], detail["split_counts"]["test"], detail["version"]) == (1, 1, 1)


@pytest.mark.django_db
def test_annotation_refuses_evidence_from_another_document_and_bad_rubrics(analyst, corpus, oman):
    port = make_document(corpus, "port", PORT)
    benchmark = Benchmark.objects.create(name="b", corpus=corpus)
    with pytest.raises(GoldCaseInvalid, match="not sentences of 'gold/oman'"):
        gold_services.gold_case_annotate(
            benchmark=benchmark,
            document=oman,
            question="Staff?",
            evidence_sentence_ids=[sentence(port, "S2").pk],
            reference_answer="",
            answerable=True,
            split="dev",
            user=analyst,
        )
    with pytest.raises(GoldCaseInvalid, match="at least one evidence sentence"):
        gold_services.gold_case_annotate(
            benchmark=benchmark,
            document=oman,
            question="Staff?",
            evidence_sentence_ids=[],
            reference_answer="",
            answerable=True,
            split="dev",
            user=analyst,
        )
    with pytest.raises(GoldCaseInvalid, match="1 to 5"):
        gold_services.gold_case_annotate(
            benchmark=benchmark,
            document=oman,
            question="When?",
            evidence_sentence_ids=[sentence(oman, "S3").pk],
            reference_answer="1970",
            answerable=True,
            split="dev",
            user=analyst,
            rubric={"scale": {"10": "x"}},
        )
    assert not GoldCase.objects.exists()
    assert Benchmark.objects.get(pk=benchmark.pk).version == 0


@pytest.mark.django_db
def test_other_teams_cannot_see_or_annotate_a_benchmark(outsider, corpus, oman):
    benchmark = Benchmark.objects.create(name="private", corpus=corpus)
    client = client_for(outsider)
    assert client.get(f"/api/benchmarks/{benchmark.pk}/").status_code == 404
    assert client.get(f"/api/benchmarks/{benchmark.pk}/cases/").status_code == 404
    posted = client.post(
        f"/api/benchmarks/{benchmark.pk}/cases/",
        {
            "document": oman.pk,
            "question": "Q?",
            "evidence_sentence_ids": [],
            "answerable": False,
            "split": "dev",
        },
        format="json",
    )
    assert posted.status_code == 404
    assert client.get("/api/benchmarks/").json()["results"] == []
    mine = client.post("/api/benchmarks/", {"name": "x", "corpus_id": CorpusFactory().pk}, format="json")
    assert mine.status_code == 404


@pytest.mark.django_db
def test_adding_a_case_creates_its_benchmark_only_when_asked_and_leaves_none_behind(analyst, corpus, oman):
    def annotate(name, new, evidence):
        return benchmark_services.gold_case_add(
            benchmark_name=name,
            new=new,
            corpus=corpus,
            split="dev",
            user=analyst,
            annotation=benchmark_services.Annotation(
                document=oman,
                question="Who held Muscat?",
                evidence_sentence_ids=evidence,
                reference_answer="The Portuguese.",
                answerable=True,
            ),
        )

    with pytest.raises(GoldCaseInvalid, match="at least one evidence sentence"):
        annotate("fresh", True, ())
    assert not Benchmark.objects.exists()  # the refused case took its new benchmark with it
    with pytest.raises(BenchmarkNotFound, match="No benchmark named 'fresh'"):
        annotate("fresh", False, (sentence(oman, "S2").pk,))
    case = annotate("fresh", True, (sentence(oman, "S2").pk,))
    assert (case.benchmark.name, case.benchmark.corpus_id, case.case_id) == ("fresh", corpus.pk, "n001")
    with pytest.raises(BenchmarkExists, match="already exists"):
        annotate("fresh", True, (sentence(oman, "S2").pk,))
    assert annotate("fresh", None, (sentence(oman, "S3").pk,)).case_id == "n002"
    assert Benchmark.objects.get().cases.count() == 2
