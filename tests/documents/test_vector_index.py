"""Rebuilding the HNSW indexes with other parameters, on the real PostgreSQL + pgvector."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from documents.models import Sentence
from documents.vector_index import hnsw_rebuild, index_parameters
from qa.adapters import DjangoCorpusIndex
from tests.factories import ingest_inline

REPORT = b"""Harbor report

The port handled 4.2 million containers in 2024. The authority employed 1,850 staff.
"""


@pytest.mark.django_db(transaction=True)
def test_rebuilt_sentence_index_has_the_new_parameters_and_still_answers(corpus, embedder):
    ingest_inline(corpus, embedder, "report.txt", REPORT)
    out = StringIO()
    try:
        call_command("hnsw_index", "--unit", "sentence", "--m", "32", "--ef-construction", "256", stdout=out)
        assert "sentence: m=32, ef_construction=256" in out.getvalue()
        assert index_parameters("chunk") == (16, 64)  # only the unit asked for
        corpus.refresh_from_db()
        query = embedder.encode(["How many people work for the port authority?"])[0]
        [(key, _)] = DjangoCorpusIndex(corpus).dense_search(query, unit="sentence", k=1)
        assert Sentence.objects.get(pk=key.rsplit(":", 1)[1]).text == "The authority employed 1,850 staff."
    finally:
        hnsw_rebuild(unit="sentence", m=16, ef_construction=64)  # the migration's, for the other tests
    shown = StringIO()
    call_command("hnsw_index", stdout=shown)
    assert shown.getvalue().splitlines() == [
        "sentence: m=16, ef_construction=64",
        "chunk: m=16, ef_construction=64",
    ]


@pytest.mark.django_db
def test_parameters_pgvector_would_refuse_are_refused_before_building():
    with pytest.raises(CommandError, match="ef_construction must be between 2 \\* m"):
        call_command("hnsw_index", "--m", "32", "--ef-construction", "40", stdout=StringIO())
    with pytest.raises(CommandError, match="both --m and --ef-construction"):
        call_command("hnsw_index", "--m", "32", stdout=StringIO())
    assert index_parameters("sentence") == (16, 64)
