from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("qa", "0011_question_finished_notification"),
    ]

    operations = [
        migrations.AddField(
            model_name="answersentence",
            name="mismatch",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.AddField(
            model_name="answersentence",
            name="contradicted",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="answersentence",
            name="relation",
            field=models.CharField(blank=True, default="", max_length=16),
        ),
    ]
