"""Team membership and staff rights, as documents.permissions decides them."""

from __future__ import annotations

import pytest

from documents import permissions
from documents.errors import Forbidden
from tests.factories import CorpusFactory, TeamFactory, UserFactory


@pytest.mark.django_db
def test_members_read_their_teams_corpora_and_staff_create_corpora_only_for_their_own_teams(
    team, analyst, staff, outsider, corpus
):
    other_team = TeamFactory()
    other_corpus = CorpusFactory(team=other_team)
    root = UserFactory(is_staff=True, is_superuser=True)

    assert list(permissions.readable_corpora(analyst)) == [corpus]
    assert list(permissions.readable_corpora(outsider)) == []
    assert set(permissions.readable_corpora(root)) == {corpus, other_corpus}
    assert list(permissions.teams_of(staff)) == [team]

    assert not permissions.can_manage_corpora(analyst)
    assert permissions.can_create_corpus_for(staff, team)
    assert not permissions.can_create_corpus_for(staff, other_team)
    assert permissions.can_create_corpus_for(root, other_team)
    assert not permissions.can_create_corpus_for(analyst, team)


ROLE_TABLE = [
    # (the member's role, the role asked for, allowed?)
    ("viewer", "viewer", True),
    ("viewer", "annotator", False),
    ("annotator", "annotator", True),
    ("annotator", "reviewer", False),
    ("reviewer", "annotator", True),
    ("reviewer", "admin", False),
    ("admin", "reviewer", True),
    ("admin", "admin", True),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("held", "asked", "allowed"), ROLE_TABLE)
def test_a_role_allows_what_the_roles_below_it_allow(team, member_with_role, held, asked, allowed):
    user = member_with_role(held)
    assert permissions.role_of(user, team) == held
    assert permissions.has_role(user, team, asked) is allowed
    assert (team in permissions.teams_with_role(user, asked)) is allowed


@pytest.mark.django_db
def test_outsiders_have_no_role_and_superusers_every_one(team, outsider):
    root = UserFactory(is_superuser=True)
    assert permissions.role_of(outsider, team) is None and not permissions.has_role(outsider, team, "viewer")
    assert permissions.role_of(root, team) == "admin"
    with pytest.raises(Forbidden, match="you need the admin role or above; yours is not a member"):
        permissions.require_role(outsider, team, "change corpora")
