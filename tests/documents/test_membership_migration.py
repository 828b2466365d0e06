"""The roles migration keeps what existing members could do: staff members admin, the others review."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("documents", "0007_embedding_spaces")]
AFTER = [("documents", "0008_team_membership_roles")]


@pytest.mark.django_db(transaction=True)
def test_existing_members_get_the_role_that_keeps_their_rights():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    User = old.get_model("auth", "User")
    Team = old.get_model("documents", "Team")
    ops = Team.objects.create(name="Ops before roles")
    other = Team.objects.create(name="Other before roles")
    staff = User.objects.create(username="old-staff", is_staff=True)
    analyst = User.objects.create(username="old-analyst")
    ops.members.add(staff, analyst)
    other.members.add(analyst)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    try:
        _assert_roles(new)
    finally:
        # Leave the schema as every later test expects it: all migrations applied, other apps'
        # and the sentence structure's included.
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())


def _assert_roles(new) -> None:
    Membership = new.get_model("documents", "Membership")
    roles = {
        (m.team.name, m.user.username): m.role for m in Membership.objects.select_related("team", "user")
    }
    assert roles == {
        ("Ops before roles", "old-staff"): "admin",
        ("Ops before roles", "old-analyst"): "reviewer",
        ("Other before roles", "old-analyst"): "reviewer",
    }
