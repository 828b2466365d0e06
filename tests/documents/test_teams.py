"""Team admins manage members and roles on the team page; a team always keeps an admin."""

from __future__ import annotations

import pytest
from django.test import Client

from audit.models import AuditEvent
from documents.models import Membership
from tests.factories import UserFactory


def _browser(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


@pytest.mark.django_db
def test_an_admin_adds_a_member_changes_the_role_and_removes_them(team, member_with_role):
    admin = member_with_role("admin")
    newcomer = UserFactory()
    added = _browser(admin).post(f"/teams/{team.pk}/", {"username": newcomer.username, "role": "viewer"})
    assert added.status_code == 302
    assert Membership.objects.get(team=team, user=newcomer).role == "viewer"
    # The newcomer now reads the team's page, and sees no controls.
    page = _browser(newcomer).get(f"/teams/{team.pk}/").content.decode()
    assert "Your role: viewer." in page and 'id="add-member-form"' not in page

    _browser(admin).post(f"/teams/{team.pk}/", {"username": newcomer.username, "role": "reviewer"})
    assert Membership.objects.get(team=team, user=newcomer).role == "reviewer"
    _browser(admin).post(f"/teams/{team.pk}/", {"action": "remove", "user": newcomer.pk})
    assert not Membership.objects.filter(team=team, user=newcomer).exists()

    events = list(AuditEvent.objects.filter(team_id=team.pk).order_by("id").values_list("action", "detail"))
    assert [a for a, _ in events] == ["member.role", "member.role", "member.remove"]
    assert events[1][1] == {"user": newcomer.username, "role": "reviewer", "previous": "viewer"}


@pytest.mark.django_db
def test_the_last_admin_cannot_step_down_or_be_removed(team, member_with_role):
    admin = member_with_role("admin")
    refused = _browser(admin).post(f"/teams/{team.pk}/", {"username": admin.username, "role": "reviewer"})
    assert refused.status_code == 400 and "only admin" in refused.content.decode()
    refused = _browser(admin).post(f"/teams/{team.pk}/", {"action": "remove", "user": admin.pk})
    assert refused.status_code == 400
    assert Membership.objects.get(team=team, user=admin).role == "admin"


ROLE_CASES = [("viewer", 403), ("annotator", 403), ("reviewer", 403), ("admin", 302)]


@pytest.mark.django_db
@pytest.mark.parametrize(("role", "status"), ROLE_CASES)
def test_only_admins_change_members(team, member_with_role, role, status):
    caller = member_with_role(role)
    target = UserFactory()
    response = _browser(caller).post(f"/teams/{team.pk}/", {"username": target.username, "role": "admin"})
    assert response.status_code == status
    assert Membership.objects.filter(team=team, user=target).exists() is (status == 302)


@pytest.mark.django_db
def test_an_unknown_user_or_role_is_refused_and_outsiders_see_no_team(team, member_with_role):
    admin = member_with_role("admin")
    assert (
        _browser(admin).post(f"/teams/{team.pk}/", {"username": "nobody", "role": "viewer"}).status_code
        == 400
    )
    other = UserFactory()
    assert (
        _browser(admin).post(f"/teams/{team.pk}/", {"username": other.username, "role": "boss"}).status_code
        == 400
    )
    assert _browser(UserFactory()).get(f"/teams/{team.pk}/").status_code == 404
