"""The audit trail: uploads, deletions and review decisions are recorded with who and when,
and staff read them in the browser; analysts and other teams' staff cannot."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from audit.models import AuditEvent
from review.services.reviews import answer_accept, answer_flag
from tests.factories import CorpusFactory, TeamFactory, UserFactory

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_api_upload_and_a_browser_delete_are_recorded_with_who_did_them(staff, corpus):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=staff).key}")
    response = api.post(
        f"/api/corpora/{corpus.pk}/documents/",
        {"files": [SimpleUploadedFile("port.txt", b"The port employed 1,850 staff.")]},
        format="multipart",
    )
    assert response.status_code == 202
    upload = AuditEvent.objects.get(action=AuditEvent.Action.DOCUMENT_UPLOAD)
    assert upload.actor == staff and upload.detail["filename"] == "port.txt"
    document_id = response.json()["documents"][0]["id"]
    assert signed_in(staff).post(f"/documents/{document_id}/delete/").status_code == 302
    deleted = AuditEvent.objects.get(action=AuditEvent.Action.DOCUMENT_DELETE)
    assert deleted.actor_name == staff.username and deleted.target_id == document_id
    assert "port" in deleted.target_label  # the name survives the document


def test_review_decisions_are_recorded(answered, analyst):
    answer = answered.answer
    answer_accept(answer=answer, reviewer=analyst, base_version=0)
    answer_flag(answer=answer, reviewer=analyst, base_version=1, reason="wrong", comment="old figure")
    actions = list(AuditEvent.objects.order_by("id").values_list("action", flat=True))
    assert actions[-2:] == ["answer.accept", "answer.flag"]
    flag = AuditEvent.objects.get(action="answer.flag")
    assert flag.detail["comment"] == "old figure" and flag.team_id == answer.question.corpus.team_id


def test_staff_read_their_teams_events_in_the_browser_and_nobody_else_does(staff, analyst, corpus):
    other_team = TeamFactory()
    other_staff = UserFactory(is_staff=True)
    other_team.members.add(other_staff, through_defaults={"role": "admin"})
    signed_in(staff).post(f"/corpora/{CorpusFactory(team=staff.teams.first()).pk}/delete/")
    signed_in(other_staff).post(f"/corpora/{CorpusFactory(team=other_team, name='secret-x').pk}/delete/")

    page = signed_in(staff).get("/audit/")
    text = page.content.decode()
    assert page.status_code == 200
    assert "deleted a corpus" in text and staff.username in text
    assert "secret-x" not in text
    filtered = signed_in(staff).get("/audit/?action=answer.accept").content.decode()
    assert "0 events" in filtered
    assert signed_in(analyst).get("/audit/").status_code == 403
    assert 'href="/audit/"' not in signed_in(analyst).get("/history/").content.decode()
