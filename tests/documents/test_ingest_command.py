"""python manage.py ingest: files and directories, progress, and clear errors."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from documents.models import Corpus, Document, Sentence


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "port.txt").write_text(
        "The port handled 4.2 million containers. It employed 1,850 staff."
    )
    (tmp_path / "profile.md").write_text(
        "# Westmere\n\nWestmere has about 3.1 million people. Its capital is Arlen."
    )
    return tmp_path


@pytest.mark.django_db
def test_ingest_a_directory_in_process_makes_every_document_ready(folder):
    out = io.StringIO()
    call_command(
        "ingest", str(folder), "--corpus", "westmere", "--in-process", stdout=out, stderr=io.StringIO()
    )
    corpus = Corpus.objects.get(name="westmere")
    documents = Document.objects.filter(corpus=corpus)
    # A directory's document ids are paths under it, without the extension.
    assert set(documents.values_list("external_id", flat=True)) == {"reports/port", "profile"}
    assert set(documents.values_list("status", flat=True)) == {"ready"}
    assert Sentence.objects.filter(document__corpus=corpus, text="Its capital is Arlen.").exists()
    assert "2 document(s) read, 2 new or changed" in out.getvalue()


@pytest.mark.django_db
def test_ingesting_the_same_directory_twice_changes_nothing(folder):
    call_command(
        "ingest",
        str(folder),
        "--corpus",
        "westmere",
        "--in-process",
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    out = io.StringIO()
    call_command(
        "ingest", str(folder), "--corpus", "westmere", "--in-process", stdout=out, stderr=io.StringIO()
    )
    assert "0 new or changed" in out.getvalue()


@pytest.mark.django_db
def test_a_missing_path_is_named_in_the_error(tmp_path):
    with pytest.raises(CommandError, match="nope.txt: no such file"):
        call_command("ingest", str(tmp_path / "nope.txt"), "--corpus", "x", stdout=io.StringIO())
    assert not Corpus.objects.exists()


@pytest.mark.django_db
def test_a_bad_file_is_reported_and_the_good_ones_are_still_ingested(folder):
    (folder / "empty.txt").write_bytes(b"")
    err = io.StringIO()
    with pytest.raises(CommandError, match="1 file"):
        call_command(
            "ingest", str(folder), "--corpus", "westmere", "--in-process", stdout=io.StringIO(), stderr=err
        )
    assert "empty.txt" in err.getvalue()
    assert Document.objects.filter(status="ready").count() == 2


@pytest.mark.django_db
def test_ingest_reads_presegmented_json_files_as_their_own_sentences(tmp_path):
    # The shape of ../shared/data/analyst-bench/corpus/gold: JSON in files named .txt.
    gold = tmp_path / "gold"
    gold.mkdir()
    record = {
        "doc_id": "gold/port-report",
        "source_dataset": "cnn_dailymail",
        "sentences": [
            {"sid": "S1", "text": "The port grew by 6 percent."},
            {"sid": "S2", "text": "It employs 1,850."},
        ],
    }
    (gold / "port-report.txt").write_text(json.dumps(record, indent=2))
    call_command(
        "ingest", str(gold), "--corpus", "bench", "--in-process", stdout=io.StringIO(), stderr=io.StringIO()
    )
    document = Document.objects.get(corpus__name="bench")
    assert document.external_id == "gold/port-report"
    assert list(document.sentences.order_by("ordinal").values_list("label", "text")) == [
        ("S1", "The port grew by 6 percent."),
        ("S2", "It employs 1,850."),
    ]
