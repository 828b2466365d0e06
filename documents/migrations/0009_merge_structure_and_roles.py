# Sentence structure and team membership roles were added side by side; this joins the two.
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("documents", "0008_sentence_structure"),
        ("documents", "0008_team_membership_roles"),
    ]

    operations = []
