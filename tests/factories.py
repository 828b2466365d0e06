import factory
from django.contrib.auth import get_user_model

from documents.models import Corpus, Team


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()

    username = factory.Sequence(lambda n: f"analyst{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")
    password = factory.django.Password("correct horse battery")


class TeamFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Team

    name = factory.Sequence(lambda n: f"Team {n}")


class CorpusFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Corpus

    name = factory.Sequence(lambda n: f"corpus-{n}")
    team = factory.SubFactory(TeamFactory)


def ingest_inline(corpus, embedder, filename: str, data: bytes):
    """Stage and embed one file in this process, and return its ready Document.

    Nothing is sent to the broker: a transactional test commits, and the session's Celery worker
    (started by an earlier test, alive until the session ends) would otherwise claim the document
    and still be embedding it when the test reads it.
    """
    from documents import services
    from documents.models import Document

    [parsed] = services.parse_upload(filename=filename, data=data)
    submitted = services.document_stage(corpus=corpus, parsed=parsed, filename=filename, enqueue=False)
    document = Document.objects.get(pk=submitted.document.pk)
    services.document_embed(document_id=document.pk, expected_hash=document.pending_hash, embedder=embedder)
    return Document.objects.get(pk=document.pk)
