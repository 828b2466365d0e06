"""Team membership gets a role: Team.members goes through Membership, on the table it already had.

The auto-created table ``documents_team_members`` (id, team_id, user_id, unique (team_id, user_id))
becomes Membership's table with no copying; only the role column is added.

Existing members get the role that keeps what they could do before roles existed:
- staff members (``is_staff``) become **admin** of each team they were in: they alone changed
  corpora, uploaded and deleted, and now do so as their teams' admins;
- every other member becomes **reviewer**: members reviewed answers and created and edited gold
  cases, which the reviewer role keeps (a team admin can lower a role afterwards).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def roles_from_staff_flag(apps, schema_editor):
    Membership = apps.get_model("documents", "Membership")
    Membership.objects.filter(user__is_staff=True).update(role="admin")
    Membership.objects.filter(user__is_staff=False).update(role="reviewer")


class Migration(migrations.Migration):
    dependencies = [
        ("documents", "0007_embedding_spaces"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Membership",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        (
                            "team",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="memberships",
                                to="documents.team",
                            ),
                        ),
                        (
                            "user",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="memberships",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "documents_team_members",
                        "ordering": ["team_id", "user_id"],
                        "unique_together": {("team", "user")},
                    },
                ),
                migrations.AlterField(
                    model_name="team",
                    name="members",
                    field=models.ManyToManyField(
                        blank=True,
                        related_name="teams",
                        through="documents.Membership",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            database_operations=[],
        ),
        migrations.AddField(
            model_name="membership",
            name="role",
            field=models.CharField(
                choices=[
                    ("viewer", "Viewer"),
                    ("annotator", "Annotator"),
                    ("reviewer", "Reviewer"),
                    ("admin", "Admin"),
                ],
                default="annotator",
                max_length=16,
            ),
        ),
        migrations.RunPython(roles_from_staff_flag, migrations.RunPython.noop),
    ]
