"""The documents REST API: uploads, statuses, team scoping and every bad input."""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from documents.models import Document, Sentence


def client_for(user) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def upload(client, corpus, *files):
    return client.post(f"/api/corpora/{corpus.pk}/documents/", {"files": list(files)}, format="multipart")


def text_file(
    name="report.txt", content=b"The port handled 4.2 million containers. It employed 1,850 staff."
):
    return SimpleUploadedFile(name, content)


def minimal_pdf_without_text() -> bytes:
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    pdf.rect(100, 100, 200, 200)  # a drawing, no text layer
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


@pytest.mark.django_db
def test_upload_returns_202_with_a_status_url_and_queues_the_document(staff, corpus):
    client = client_for(staff)
    response = upload(client, corpus, text_file())
    assert response.status_code == 202, response.content
    [document] = response.json()["documents"]
    assert document["status"] == "queued"
    status = client.get(document["status_url"])
    assert status.status_code == 200
    assert status.json()["external_id"] == "report"
    assert Document.objects.filter(corpus=corpus, external_id="report").exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "content", "status", "phrase"),
    [
        ("empty.txt", b"", 400, "empty"),
        ("blank.txt", b"   \n\n  ", 400, "empty"),
        ("slides.pptx", b"PK\x03\x04 not for us", 415, "unsupported"),
        ("garbage.txt", bytes(range(256)) * 20, 400, "binary"),
        ("latin1.txt", "Caf\xe9 au lait. Tr\xe8s bien.".encode("latin-1"), 400, "utf-8"),
        ("broken.json", b'{"sentences": [', 400, "json"),
        ("broken.jsonl", b'{"id": "a", "sentences": ["One."]}\n{oops\n', 400, "line 2"),
    ],
)
def test_bad_uploads_get_a_clear_error_and_write_nothing(staff, corpus, name, content, status, phrase):
    response = upload(client_for(staff), corpus, SimpleUploadedFile(name, content))
    assert response.status_code == status, response.content
    assert phrase in response.json()["detail"].lower()
    assert name in response.json()["detail"]
    assert not Document.objects.filter(corpus=corpus).exists()


@pytest.mark.django_db
def test_pdf_without_a_text_layer_is_refused(staff, corpus):
    response = upload(client_for(staff), corpus, SimpleUploadedFile("scan.pdf", minimal_pdf_without_text()))
    assert response.status_code == 400
    assert "text layer" in response.json()["detail"].lower()
    assert not Document.objects.exists()


@pytest.mark.django_db
def test_file_over_the_size_limit_gets_413(staff, corpus, settings):
    settings.UPLOAD_MAX_BYTES = 100
    response = upload(client_for(staff), corpus, text_file(content=b"A sentence. " * 20))
    assert response.status_code == 413
    assert "UPLOAD_MAX_BYTES" in response.json()["detail"]
    assert not Document.objects.exists()


@pytest.mark.django_db
def test_one_bad_file_does_not_stop_the_others(staff, corpus):
    response = upload(client_for(staff), corpus, text_file("good.txt"), SimpleUploadedFile("bad.txt", b""))
    assert response.status_code == 202
    body = response.json()
    assert [d["external_id"] for d in body["documents"]] == ["good"]
    assert body["errors"][0]["file"] == "bad.txt"
    assert list(Document.objects.values_list("external_id", flat=True)) == ["good"]


@pytest.mark.django_db
def test_presegmented_json_keeps_its_sentence_ids(staff, corpus):
    payload = {
        "doc_id": "memo-7",
        "title": "Memo",
        "sentences": [{"sid": "S1", "text": "Alpha."}, {"sid": "S2", "text": "Beta."}],
    }
    response = upload(
        client_for(staff), corpus, SimpleUploadedFile("memo.json", json.dumps(payload).encode())
    )
    assert response.status_code == 202
    document = Document.objects.get(corpus=corpus)
    assert document.external_id == "memo-7"
    assert [s[2] for s in document.pending_sentences["sentences"]] == ["S1", "S2"]


@pytest.mark.django_db
def test_presegmented_json_named_txt_keeps_its_sentence_ids_too(staff, corpus):
    payload = {
        "doc_id": "gold/memo",
        "sentences": [{"sid": "S1", "text": "Alpha."}, {"sid": "S2", "text": "Beta."}],
    }
    response = upload(client_for(staff), corpus, SimpleUploadedFile("memo.txt", json.dumps(payload).encode()))
    assert response.status_code == 202
    document = Document.objects.get(corpus=corpus)
    assert document.external_id == "gold/memo"
    assert [s[2] for s in document.pending_sentences["sentences"]] == ["S1", "S2"]


@pytest.mark.django_db
def test_admin_upload_stages_good_files_and_names_the_refused_one(staff, corpus):
    from django.test import Client

    staff.is_superuser = True
    staff.save()
    client = Client()
    client.force_login(staff)
    payload = {
        "doc_id": "gold/memo",
        "sentences": [{"sid": "S1", "text": "Alpha."}, {"sid": "S2", "text": "Beta."}],
    }
    files = [
        SimpleUploadedFile("memo.txt", json.dumps(payload).encode()),
        text_file(),
        SimpleUploadedFile("slides.pptx", b"x"),
    ]
    response = client.post(f"/admin/documents/corpus/{corpus.pk}/upload/", {"files": files}, follow=True)
    shown = [str(message) for message in response.context["messages"]]
    assert any("slides.pptx" in message and "unsupported" in message for message in shown)
    assert "2 document(s) queued for embedding." in shown
    memo = Document.objects.get(corpus=corpus, external_id="gold/memo")
    assert [s[2] for s in memo.pending_sentences["sentences"]] == ["S1", "S2"]


@pytest.mark.django_db
def test_only_team_admins_upload(analyst, corpus):
    response = upload(client_for(analyst), corpus, text_file())
    assert response.status_code == 403
    assert not Document.objects.exists()


@pytest.mark.django_db
def test_users_outside_the_team_get_404_for_corpus_and_documents(outsider, staff, corpus):
    upload(client_for(staff), corpus, text_file())
    document = Document.objects.get()
    client = client_for(outsider)
    assert client.get(f"/api/corpora/{corpus.pk}/").status_code == 404
    assert client.get(f"/api/corpora/{corpus.pk}/documents/").status_code == 404
    assert client.get(f"/api/documents/{document.pk}/").status_code == 404
    assert client.get("/api/corpora/").json()["results"] == []


@pytest.mark.django_db
def test_anonymous_users_see_nothing(corpus):
    response = APIClient().get("/api/corpora/")
    assert response.status_code in (401, 403)


@pytest.mark.django_db
def test_staff_create_a_corpus_for_their_team(staff, team):
    response = client_for(staff).post("/api/corpora/", {"name": "reports", "team": team.name}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["name"] == "reports"
    again = client_for(staff).post("/api/corpora/", {"name": "reports", "team": team.name}, format="json")
    assert again.status_code in (400, 409)


@pytest.mark.django_db
def test_openapi_schema_describes_the_upload_endpoint(analyst):
    response = client_for(analyst).get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    assert "/api/corpora/{id}/documents/" in response.json()["paths"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_upload_through_the_api_is_embedded_by_a_real_worker(celery_worker_process, staff, corpus, embedder):
    from pgvector.django import CosineDistance

    from tests.conftest import wait_for

    client = client_for(staff)
    response = upload(client, corpus, text_file())
    assert response.status_code == 202
    status_url = response.json()["documents"][0]["status_url"]
    body = wait_for(
        lambda: (b := client.get(status_url).json())["status"] in ("ready", "failed") and b,
        message="the worker to embed the uploaded document",
    )
    assert body["status"] == "ready", body["error"]
    assert body["sentence_count"] == 2
    query = embedder.encode(["How many staff work there?"])[0]
    best = (
        Sentence.objects.filter(document__corpus=corpus)
        .annotate(d=CosineDistance("embedding", query))
        .order_by("d")
        .first()
    )
    assert best.text == "It employed 1,850 staff."


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_an_upload_whose_message_was_lost_is_sent_again_and_embedded(
    celery_worker_process, staff, corpus, tmp_path
):
    from datetime import timedelta

    from django.utils import timezone

    from bench.cluster import use_broker
    from documents.services import documents_reap
    from groundedqa_site.broker import folder_options
    from tests.conftest import wait_for

    client = client_for(staff)
    # The message goes to a broker folder no worker reads: as if the broker, or a worker's main
    # process that had prefetched it, lost it before any worker claimed the document.
    with use_broker("filesystem://", folder_options(tmp_path / "lost"), "groundedqa_site.broker:Transport"):
        response = upload(client, corpus, text_file())
    status_url = response.json()["documents"][0]["status_url"]
    assert client.get(status_url).json()["status"] == "queued"
    # While its lease has not run out the reaper leaves it waiting its turn ...
    assert documents_reap() == 0
    # ... and once it has, with nothing being embedded, the reaper sends it again.
    assert documents_reap(now=timezone.now() + timedelta(seconds=60)) == 1

    body = wait_for(
        lambda: (b := client.get(status_url).json())["status"] in ("ready", "failed") and b,
        message="the resent document to be embedded",
    )
    assert body["status"] == "ready", body["error"]
    assert body["sentence_count"] == 2
    assert Document.objects.filter(corpus=corpus).count() == 1


@pytest.mark.django_db
def test_documents_waiting_behind_a_busy_lane_are_not_resent(staff, corpus, tmp_path):
    """A bulk import's queued documents are waiting their turn, not lost: no copies flood the queue."""
    from datetime import timedelta

    from django.utils import timezone

    from bench.cluster import use_broker
    from documents import services
    from documents.parsing.types import ParsedDocument, ParsedSentence
    from groundedqa_site import jobs
    from groundedqa_site.broker import folder_options

    def parsed(n: int) -> ParsedDocument:
        text = f"Report {n} says things."
        return ParsedDocument(f"report-{n}", f"Report {n}", text, (ParsedSentence(text, 0, len(text)),))

    with use_broker("filesystem://", folder_options(tmp_path / "lane"), "groundedqa_site.broker:Transport"):
        for n in range(3):
            services.document_stage(corpus=corpus, parsed=parsed(n), bulk=True)
        later = timezone.now() + timedelta(seconds=60)
        working = Document.objects.get(external_id="report-0")
        Document.objects.filter(pk=working.pk).update(
            status=Document.Status.EMBEDDING, lease_owner="w:1:x", lease_expires_at=jobs.lease_until(later)
        )
        assert services.documents_reap(now=later) == 0
        # Between two documents (one just ready, the next not claimed yet) the lane is still at work ...
        Document.objects.filter(pk=working.pk).update(
            status=Document.Status.READY, updated_at=later, **jobs.RELEASED
        )
        assert services.documents_reap(now=later) == 0
        # ... and once nothing has moved in it for a lease, the documents still queued are sent again.
        assert services.documents_reap(now=later + timedelta(seconds=60)) == 2
