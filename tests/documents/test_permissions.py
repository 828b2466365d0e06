"""Team membership and staff rights, as documents.permissions decides them."""

from __future__ import annotations

import pytest

from documents import permissions
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
