from django.db import migrations, models


def mark_evaluation_questions(apps, schema_editor):
    """Questions an evaluation run already asked are evaluation questions too."""
    Question = apps.get_model("qa", "Question")
    EvaluationCaseResult = apps.get_model("review", "EvaluationCaseResult")
    asked = EvaluationCaseResult.objects.exclude(question=None).values("question_id")
    Question.objects.filter(pk__in=asked).update(is_evaluation=True)


class Migration(migrations.Migration):
    dependencies = [
        ("qa", "0005_question_retrieval_in_the_run"),
        ("review", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="question",
            name="is_evaluation",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(mark_evaluation_questions, migrations.RunPython.noop),
    ]
