"""The database announces when a question ends (done or failed), on a channel of its own.

``GET /api/questions/{id}/?wait=N`` listens on it (qa.selectors.question_wait_finished), so a
client waiting for its answer is answered when the answer is stored, instead of polling. A
trigger rather than a call in each service: a question ends in several places (the last stage,
a failed stage, the reaper giving up, a broker refusing the message, a decomposed question's
parts combined) and every one of them is an UPDATE of its status.
"""

from django.db import migrations

CREATE = """
CREATE FUNCTION qa_question_announce_finished() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('qa_question_' || NEW.id, NEW.status);
    RETURN NULL;
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER qa_question_finished
AFTER UPDATE OF status ON qa_question
FOR EACH ROW
WHEN (NEW.status IN ('done', 'failed') AND OLD.status IS DISTINCT FROM NEW.status)
EXECUTE FUNCTION qa_question_announce_finished();
"""

DROP = """
DROP TRIGGER IF EXISTS qa_question_finished ON qa_question;
DROP FUNCTION IF EXISTS qa_question_announce_finished();
"""


class Migration(migrations.Migration):
    dependencies = [("qa", "0010_question_scope_citation_date")]

    operations = [migrations.RunSQL(CREATE, DROP)]
