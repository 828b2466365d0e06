"""The corpus page's embedding model: what it shows, re-embedding from it, and who may."""

from __future__ import annotations

import pytest

from documents import reembedding
from documents.models import EmbeddingSpace
from tests.ui.conftest import PASSWORD


def signed_in(client, user):
    assert client.login(username=user.username, password=PASSWORD)
    return client


@pytest.mark.django_db
def test_staff_re_embed_a_corpus_from_its_page_and_see_the_job_through(client, staff, demo_documents, corpus):
    client = signed_in(client, staff)
    page = client.get(f"/corpora/{corpus.pk}/").content.decode()
    assert "all-MiniLM-L6-v2</strong> (384 dimensions)" in page and 'id="reembed-model"' in page

    refused = client.post(f"/corpora/{corpus.pk}/reembed/", {"model": "no-such/model-v9"}, follow=True)
    assert "model: &#x27;no-such/model-v9&#x27; is not an embedding model" in refused.content.decode()
    assert not EmbeddingSpace.objects.filter(corpus=corpus).exists()

    queued = client.post(
        f"/corpora/{corpus.pk}/reembed/", {"model": "e5-small"}, follow=True
    ).content.decode()
    assert "Re-embedding " + corpus.name + " with e5-small (384 dimensions)" in queued
    assert 'id="embedding-job-status">queued' in queued and "ui/reembed.js" in queued
    assert "all-MiniLM-L6-v2</strong>" in queued  # questions keep the current model meanwhile

    reembedding.reembedding_run(space_id=EmbeddingSpace.objects.get(corpus=corpus).pk)
    done = client.get(f"/corpora/{corpus.pk}/").content.decode()
    assert "e5-small</strong> (384 dimensions)" in done and 'id="embedding-job-status">active' in done
    assert "ui/reembed.js" not in done
    # The analysis page maps the sentences in the corpus's model's vectors.
    analysis = client.get(f"/corpora/{corpus.pk}/analysis/").content.decode()
    assert "Sentence embeddings, PCA to 2-D" in analysis


@pytest.mark.django_db
def test_analysts_see_the_model_but_cannot_re_embed(client, analyst, demo_documents, corpus):
    client = signed_in(client, analyst)
    page = client.get(f"/corpora/{corpus.pk}/").content.decode()
    assert "all-MiniLM-L6-v2</strong> (384 dimensions)" in page and 'id="reembed-model"' not in page
    assert client.post(f"/corpora/{corpus.pk}/reembed/", {"model": "e5-small"}).status_code == 403
    assert not EmbeddingSpace.objects.filter(corpus=corpus).exists()
