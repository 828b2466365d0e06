"""The UI's views through Django's test client: permissions, bad input, and what each page shows."""

from __future__ import annotations

import html

import pytest
from django.urls import reverse

from documents.models import Document
from qa.models import Question
from tests.factories import CorpusFactory, TeamFactory, UserFactory
from tests.ui.conftest import PASSWORD, PRESET

pytestmark = pytest.mark.django_db


@pytest.fixture
def client_for(client):
    def login(user):
        assert client.login(username=user.username, password=PASSWORD)
        return client

    return login


# --- signing in -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["/", "/history/", "/corpora/", "/review/", "/annotate/", "/evaluate/", "/questions/1/", "/documents/1/"],
)
def test_every_page_needs_a_signed_in_user(client, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_sign_in_page_is_labelled_and_signs_in(client, analyst):
    page = client.get(reverse("login")).content.decode()
    assert '<label for="id_username">Username</label>' in page
    assert 'href="#main"' in page  # the skip link
    response = client.post(reverse("login"), {"username": analyst.username, "password": PASSWORD})
    assert response.status_code == 302
    assert client.get("/").status_code == 200


def test_wrong_password_shows_an_error_not_a_500(client, analyst):
    response = client.post(reverse("login"), {"username": analyst.username, "password": "nope"})
    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.content.decode()


def test_sign_out_is_a_post_and_ends_the_session(client_for, analyst):
    client = client_for(analyst)
    assert client.post(reverse("logout")).status_code == 302
    assert client.get("/").status_code == 302


# --- asking -----------------------------------------------------------------------------


def test_ask_lists_only_the_users_corpora(client_for, analyst, corpus):
    foreign = CorpusFactory(team=TeamFactory(), name="someone-elses")
    page = client_for(analyst).get("/").content.decode()
    assert corpus.name in page
    assert foreign.name not in page


def test_an_empty_question_is_a_form_error_not_a_500(client_for, analyst, demo_documents, corpus):
    response = client_for(analyst).post("/", {"corpus": corpus.pk, "preset": PRESET, "question": "   "})
    assert response.status_code == 200
    assert "Write a question first." in response.content.decode()
    assert 'aria-invalid="true"' in response.content.decode()
    assert not Question.objects.exists()


@pytest.mark.parametrize(
    "data, message",
    [
        ({"preset": "no-such-preset"}, "Select a valid choice"),
        ({"corpus": "abc"}, "Choose one of your team"),
        ({"conversation": "999999"}, "That conversation is not yours"),
        ({"question": "x" * 2001}, "at most 2000 characters"),
    ],
)
def test_bad_ask_input_is_reported_on_the_form(client_for, analyst, demo_documents, corpus, data, message):
    body = {"corpus": corpus.pk, "preset": PRESET, "question": "How many staff?", **data}
    response = client_for(analyst).post("/", body)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Question.objects.exists()


def test_asking_another_teams_corpus_is_refused(client_for, analyst, demo_documents):
    foreign = CorpusFactory(team=TeamFactory())
    response = client_for(analyst).post(
        "/", {"corpus": foreign.pk, "preset": PRESET, "question": "Anything?"}
    )
    assert "Choose one of your team" in response.content.decode()
    assert not Question.objects.exists()


def test_a_corpus_without_ready_documents_says_so(client_for, analyst, corpus):
    response = client_for(analyst).post("/", {"corpus": corpus.pk, "preset": PRESET, "question": "Anything?"})
    assert response.status_code == 200
    assert "has no ready documents yet" in response.content.decode()


def test_asking_creates_the_job_and_shows_its_progress(client_for, analyst, demo_documents, corpus):
    client = client_for(analyst)
    response = client.post("/", {"corpus": corpus.pk, "preset": PRESET, "question": "How many staff?"})
    question = Question.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/questions/{question.pk}/#q-{question.pk}"
    page = client.get(f"/questions/{question.pk}/").content.decode()
    assert 'data-pending="true"' in page
    assert f'data-status-url="/api/questions/{question.pk}/"' in page
    assert 'aria-live="polite"' in page
    assert "Queued" in page
    # A follow-up form continues this conversation.
    assert f'name="conversation" value="{question.conversation_id}"' in page


def test_a_follow_up_continues_the_conversation(client_for, analyst, answered, corpus):
    client = client_for(analyst)
    client.post(
        "/",
        {
            "corpus": corpus.pk,
            "preset": PRESET,
            "question": "And the staff?",
            "conversation": answered.conversation_id,
        },
    )
    follow_up = Question.objects.exclude(pk=answered.pk).get()
    assert follow_up.conversation_id == answered.conversation_id
    page = client.get(f"/questions/{follow_up.pk}/").content.decode()
    assert page.index(answered.text) < page.index("And the staff?")


def test_the_answer_shows_markers_linking_to_the_highlighted_sentence(client_for, analyst, answered):
    page = client_for(analyst).get(f"/questions/{answered.pk}/").content.decode()
    sentence = answered.answer.sentences.first()
    citation = sentence.citations.first()
    assert citation is not None, "the demo question should be answered with a citation"
    assert f'href="/documents/{citation.document_pk}/?highlight={citation.label}' in page
    assert f'#s-{citation.sentence_ordinal}"' in page
    # The hybrid preset's LLM generator runs as extractive here (no LLM): its sentences are quotes,
    # labelled as such rather than "supported", which quoting makes true by construction.
    assert 'class="badge quote"' in page and 'class="badge supported"' not in page
    assert "Trace: how this answer was made" in page


def test_a_refusal_is_shown_plainly(client_for, analyst, demo_documents, corpus):
    from qa.services import answer_now

    question = answer_now(
        corpus=corpus, text="Who won the 1998 football world cup?", preset="bm25", user=analyst
    )
    page = client_for(analyst).get(f"/questions/{question.pk}/").content.decode()
    assert question.answer.refused
    assert "No answer." in page
    assert "does not support an answer" in page


def test_the_trace_shows_scores_per_stage_and_timings(client_for, analyst, answered):
    page = client_for(analyst).get(f"/questions/{answered.pk}/trace/").content.decode()
    for heading in (
        "Stage timings",
        "Retrieval candidates",
        "BM25",
        "Dense",
        "Fused",
        "Reranked",
        "Answer attempts and verification",
        "Substitutions",
    ):
        assert heading in page, heading
    assert "harbor-authority-report" in page


def test_the_trace_says_which_worker_ran_each_stage_and_for_how_long(client_for, analyst, answered):
    import os

    page = client_for(analyst).get(f"/questions/{answered.pk}/trace/").content.decode()
    table = page[page.index('id="stage-runs"') : page.index("</table>", page.index('id="stage-runs"'))]
    # Answered in this process: every stage names it.
    assert f":{os.getpid()}</td>" in table
    for stage in ("retrieval", "generation", "citation", "verification"):
        assert f"<td>{stage}</td>" in table, stage
    assert " ms</td>" in table or " s</td>" in table


def test_default_answers_show_answerability_relevance_and_confidence(
    client_for, analyst, demo_documents, corpus
):
    from qa.services import answer_now

    question = answer_now(
        corpus=corpus, text="How many containers did the port handle in 2024?", preset="default", user=analyst
    )
    client = client_for(analyst)
    trace = client.get(f"/questions/{question.pk}/trace/").content.decode()
    assert "Answerability and relevance" in trace
    assert "answerable" in trace and "Context relevance of the passages" in trace
    page = client.get(f"/questions/{question.pk}/").content.decode()
    assert f"confidence {round(question.answer.confidence * 100)}%" in page


# --- the document viewer ---------------------------------------------------------------------


def test_the_viewer_highlights_the_given_sentences(client_for, analyst, demo_documents):
    document = demo_documents[0]
    first, second = list(document.sentences.order_by("ordinal"))[:2]
    page = (
        client_for(analyst).get(f"/documents/{document.pk}/?highlight={second.label},nope").content.decode()
    )
    assert (
        f'<li id="s-{second.ordinal}" data-sentence-id="{second.pk}" data-label="{second.label}" '
        f'data-role="{second.role}" class="role-{second.role} highlighted">' in page
    )
    assert (
        f'<li id="s-{first.ordinal}" data-sentence-id="{first.pk}" data-label="{first.label}" '
        f'data-role="{first.role}" class="role-{first.role}">' in page
    )
    # The demo report's first line is its title, and the viewer shows it as one.
    assert first.role == "title"
    assert "Not in the current version of this document: nope" in page


@pytest.mark.parametrize(
    "query", ["?span=zz-1", "?span=5-2", "?highlight=" + ",".join(["x"] * 500), "?span=-"]
)
def test_malformed_highlights_are_ignored_not_a_500(client_for, analyst, demo_documents, query):
    assert client_for(analyst).get(f"/documents/{demo_documents[0].pk}/{query}").status_code == 200


# --- team scoping: other teams' objects are 404 ---------------------------------------------------------


def test_an_outsider_reaches_no_document_answer_or_trace_by_url(
    client_for, outsider, answered, demo_documents
):
    client = client_for(outsider)
    citation = answered.answer.sentences.first().citations.first()
    for url in (
        f"/documents/{demo_documents[0].pk}/",
        f"/documents/{demo_documents[0].pk}/pick/",
        f"/documents/{citation.document_pk}/?highlight={citation.label}",
        f"/questions/{answered.pk}/",
        f"/questions/{answered.pk}/turn/",
        f"/questions/{answered.pk}/trace/",
        f"/review/answers/{answered.answer.pk}/",
        f"/corpora/{answered.corpus_id}/",
        f"/annotate/?document={demo_documents[0].pk}",
        f"/api/questions/{answered.pk}/",
    ):
        assert client.get(url).status_code == 404, url
    assert answered.text not in client.get("/history/").content.decode()
    assert answered.corpus.name not in client.get("/corpora/").content.decode()
    assert answered.text not in client.get("/review/?status=").content.decode()


def test_an_outsider_cannot_ask_follow_ups_in_someone_elses_conversation(client_for, answered, corpus):
    teammate = UserFactory()
    corpus.team.members.add(teammate)
    client = client_for(teammate)
    page = client.get(f"/questions/{answered.pk}/").content.decode()
    assert answered.text in page  # teammates read each other's answers
    assert 'name="conversation"' not in page  # but cannot continue them
    client.post(
        "/",
        {"corpus": corpus.pk, "preset": PRESET, "question": "And?", "conversation": answered.conversation_id},
    )
    assert Question.objects.filter(conversation_id=answered.conversation_id).count() == 1


# --- history ------------------------------------------------------------------------------


def test_history_is_mine_and_searchable(client_for, analyst, answered, corpus):
    from qa.services import answer_now

    answer_now(corpus=corpus, text="What is the capital of Westmere?", preset=PRESET, user=analyst)
    client = client_for(analyst)
    both = client.get("/history/").content.decode()
    assert "capital of Westmere" in both and "containers" in both
    searched = client.get("/history/?q=capital").content.decode()
    assert "capital of Westmere" in searched and "containers" not in searched
    by_answer_text = client.get("/history/?q=Arlen").content.decode()
    assert "capital of Westmere" in by_answer_text
    assert client.get("/history/?corpus=abc").status_code == 200


# --- corpora (staff) -----------------------------------------------------------------------------


def test_analysts_cannot_change_corpora(client_for, analyst, demo_documents, corpus):
    client = client_for(analyst)
    document = demo_documents[0]
    assert client.get(f"/documents/{document.pk}/delete/").status_code == 403
    assert client.post(f"/documents/{document.pk}/delete/").status_code == 403
    assert client.post(f"/corpora/{corpus.pk}/delete/").status_code == 403
    assert client.post("/corpora/", {"name": "new", "team": corpus.team_id}).status_code == 403
    assert Document.objects.filter(pk=document.pk).exists()
    page = client.get(f"/corpora/{corpus.pk}/").content.decode()
    assert "upload-form" not in page


def test_staff_delete_a_document_after_confirming(client_for, staff, demo_documents, corpus):
    client = client_for(staff)
    document = demo_documents[0]
    confirm = client.get(f"/documents/{document.pk}/delete/").content.decode()
    assert "cannot be undone" in confirm
    assert Document.objects.filter(pk=document.pk).exists()
    response = client.post(f"/documents/{document.pk}/delete/")
    assert response.status_code == 302
    assert not Document.objects.filter(pk=document.pk).exists()


def test_staff_create_a_corpus_and_see_the_upload_form(client_for, staff, team):
    client = client_for(staff)
    response = client.post("/corpora/", {"name": "  ", "team": team.pk})
    assert response.status_code == 200 and "This field is required" in response.content.decode()
    response = client.post("/corpora/", {"name": "Harbour reports", "team": team.pk})
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert 'id="upload-form"' in page and "Harbour reports" in page


def test_the_corpus_page_lists_documents_with_status_and_filters(client_for, staff, demo_documents, corpus):
    Document.objects.filter(pk=demo_documents[0].pk).update(status="failed", error="The file is empty.")
    client = client_for(staff)
    page = client.get(f"/corpora/{corpus.pk}/").content.decode()
    assert "The file is empty." in page
    filtered = client.get(f"/corpora/{corpus.pk}/?status=failed").content.decode()
    assert demo_documents[0].external_id in filtered and demo_documents[1].external_id not in filtered
    assert client.get(f"/corpora/{corpus.pk}/?status=bogus&page=x").status_code == 200


def test_source_disagreement_and_an_unverified_answer_are_shown_plainly(client_for, analyst, corpus):
    from qa.models import Answer, AnswerSentence, Citation, Conversation

    question = Question.objects.create(
        user=analyst,
        corpus=corpus,
        conversation=Conversation.objects.create(user=analyst, corpus=corpus),
        text="How many people live in Westmere?",
        preset=PRESET,
        status="done",
    )
    answer = Answer.objects.create(
        question=question,
        text="About 3.1 million. About 2.9 million.",
        disagreement=True,
        verified=False,
        note="The sources disagree: the profile says 3.1 million, the census 2.9 million.",
    )
    supported = AnswerSentence.objects.create(
        answer=answer, ordinal=0, text="About 3.1 million.", support="supported"
    )
    AnswerSentence.objects.create(answer=answer, ordinal=1, text="About 2.9 million.", support="partial")
    Citation.objects.create(
        answer_sentence=supported,
        ordinal=0,
        document_external_id="gone",
        document_title="Gone",
        document_pk=None,
        label="S3",
        sentence_ordinal=2,
        text="3.1 million people",
        start=0,
        end=9,
    )
    page = client_for(analyst).get(f"/questions/{question.pk}/").content.decode()
    assert "The sources disagree." in page and "the census 2.9 million" in page
    assert "Not fully verified." in page
    assert 'class="badge partial"' in page
    assert "(source removed)" in page  # a citation of a deleted document is shown, not linked


def test_a_failed_job_says_why(client_for, analyst, corpus):
    question = Question.objects.create(
        user=analyst,
        corpus=corpus,
        text="Anything?",
        preset=PRESET,
        status="failed",
        error="The llm-only preset needs an LLM.",
    )
    page = client_for(analyst).get(f"/questions/{question.pk}/").content.decode()
    assert 'class="badge failed"' in page and "The llm-only preset needs an LLM." in page
    assert 'data-pending="true"' not in page


# --- traces stored before the typed run (format version 1) ------------------------------------


def test_a_trace_stored_in_the_old_format_still_renders(client_for, analyst, corpus):
    from tests.qa.pipeline.test_run import V1_TRACES

    stored = V1_TRACES["default_answered"]
    question = Question.objects.create(
        user=analyst,
        corpus=corpus,
        text=stored["question"],
        preset="default",
        status="done",
        trace=stored["trace"],
    )
    page = client_for(analyst).get(f"/questions/{question.pk}/trace/").content.decode()
    first = stored["trace"]["retrieval"]["candidates"][0]
    assert first["key"] in page and "reranked by EvidenceReranker" in page
    assert "Attempt 1" in page and "verified" in page
    assert stored["trace"]["answer"]["attempts"][0]["sentences"][0]["text"] in page
    assert "follow-up rewrite" in page  # its stage timings

    substituted = V1_TRACES["verify_substituted"]
    question.trace = substituted["trace"]
    question.save()
    page = client_for(analyst).get(f"/questions/{question.pk}/trace/").content.decode()
    assert "generator: llm -&gt; extractive (no LLM configured)" in page


def test_an_old_failed_question_shows_the_stage_it_failed_in(client_for, analyst, corpus):
    from tests.qa.pipeline.test_run import V1_TRACES

    stored = V1_TRACES["failed_in_generation"]
    question = Question.objects.create(
        user=analyst,
        corpus=corpus,
        text=stored["question"],
        preset="default",
        status="failed",
        error=stored["error"],
        trace=stored["trace"],
    )
    page = client_for(analyst).get(f"/questions/{question.pk}/turn/").content.decode()
    assert "Generation failed: boom" in page
    assert 'class="complete" data-step="retrieval"' in page
    assert 'class="failed" data-step="generation"' in page


def test_the_trace_of_a_vague_follow_up_shows_the_learned_reply_kind(client_for, analyst, answered):
    from qa.services import answer_now

    vague = answer_now(
        corpus=answered.corpus,
        text="How many staff did this organisation employ?",
        preset="default",
        user=analyst,
        conversation=answered.conversation,
    )
    assert vague.answer.kind == "underspecified"
    page = client_for(analyst).get(f"/questions/{vague.pk}/trace/").content.decode()
    assert "Reply kind (learned turn-kind model)" in page and "<strong>underspecified</strong>" in page
    assert "p(underspecified)" in page
    assert "Nothing earlier names “this organisation”" in page


def trace_page(client, user, corpus, text: str, preset: str, run) -> str:
    """The trace page of a question stored as answered by ``run``."""
    question = Question.objects.create(
        user=user, corpus=corpus, text=text, preset=preset, status="done", trace=run.to_json()
    )
    return client.get(f"/questions/{question.pk}/trace/").content.decode()


def test_the_trace_names_the_reply_rule_that_declined_a_draft(client_for, analyst, corpus):
    """A refusal made while composing says on the trace page which rule of the reply table made it,
    and what the draft found; switched off, the trace shows the finding without a rule."""
    from tests.qa.pipeline.test_reply_rules import JOBS_QUESTION, jobs_plan_run

    def page_for(off: tuple[str, ...]) -> str:
        run = jobs_plan_run(off)
        return trace_page(client_for(analyst), analyst, corpus, JOBS_QUESTION, "flow-none", run)

    declined = page_for(())
    assert "Declined by the reply rule" in declined and "amount_stated_nowhere" in declined
    switched_off = page_for(("amount_stated_nowhere",))
    assert "Declined by the reply rule" not in switched_off
    assert "The draft quoted nothing" in switched_off and "amount_stated_nowhere" in switched_off


def test_the_trace_shows_the_llm_judges_p_yes_beside_each_answer_sentences_relation(
    client_for, analyst, corpus
):
    """With the relevance judge asked (``careful`` and an LLM), the trace page shows, per answer
    sentence, the relation on the card, the score it was read from and the judge's P(yes)."""
    from tests.qa.pipeline.test_llm_judge_sentences import MARENIA_QUESTION, judged_marenia_run

    run, _ = judged_marenia_run("no")
    page = html.unescape(trace_page(client_for(analyst), analyst, corpus, MARENIA_QUESTION, "careful", run))
    section = page[page.index("Does each answer sentence answer the question?") :]
    section = section[: section.index("</table>")]
    judged = [s for s in run.answer.sentences if s.relation_judge is not None]
    assert judged and all(s.relation_judge < 0.05 for s in judged)
    for sentence in judged:
        score = "–" if sentence.relation_score is None else f"{sentence.relation_score:.2f}"
        row = section[section.index(sentence.text) :]
        row = row[: row.index("</tr>")]
        assert f'{sentence.relation}">{sentence.relation}</span>' in row
        assert row.endswith(f'<td class="num">{score}</td><td class="num">{sentence.relation_judge:.2f}</td>')
    assert "off_question" in section
