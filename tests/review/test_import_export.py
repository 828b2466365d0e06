"""import_benchmark on the real analyst-bench and CLAPNQ data, malformed input, and the JSONL round trip."""

from __future__ import annotations

import json
import shutil
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from documents.models import Corpus, Document, Sentence
from review.models import Benchmark, GoldCase
from tests.conftest import shared_data


def run(*args, **options) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO(), **options)
    return out.getvalue()


def evidence_sentence(corpus, key: str) -> Sentence:
    doc_id, label = key.rsplit("#", 1)
    return Sentence.objects.get(document__corpus=corpus, document__external_id=doc_id, label=label)


@pytest.mark.django_db
def test_analyst_bench_imports_three_splits_with_gold_evidence_on_ingested_gold_documents():
    root = shared_data("analyst-bench")
    output = run(
        "import_benchmark",
        str(root),
        name="analyst-bench",
        format="analyst-bench",
        documents="gold",
        in_process=True,
    )
    assert "30 case(s) read, 30 new" in output

    benchmark = Benchmark.objects.get(name="analyst-bench")
    assert (benchmark.version, benchmark.source_format, benchmark.corpus.name) == (
        1,
        "analyst-bench",
        "analyst-bench",
    )
    counts = {split: benchmark.cases.filter(split=split).count() for split in ("train", "dev", "test")}
    assert counts == {"train": 24, "dev": 3, "test": 3}
    documents = Document.objects.filter(corpus=benchmark.corpus)
    assert documents.count() == 13
    assert set(documents.values_list("status", flat=True)) == {"ready"}

    oman = benchmark.cases.get(split="train", case_id="q011")  # unanswerable, yet lists evidence (the quirk)
    assert oman.answerable is False and oman.gold_evidence
    first = benchmark.cases.get(split="train", case_id="q001")
    assert first.answerable and first.rubric["scale"]["5"]
    assert first.gold_documents == [first.gold_evidence[0].split("#")[0]]
    for key in first.gold_evidence:
        assert evidence_sentence(benchmark.corpus, key).text == first.evidence_texts[key]
    unanswerable = benchmark.cases.filter(answerable=False).values_list("split", "case_id")
    assert sorted(unanswerable) == [("dev", "q003"), ("train", "q004"), ("train", "q010"), ("train", "q011")]

    again = run(
        "import_benchmark",
        str(root),
        name="analyst-bench",
        format="analyst-bench",
        documents="gold",
        in_process=True,
    )
    assert "0 new, 0 revised, 30 unchanged" in again and "0 to embed" in again
    assert Benchmark.objects.get(pk=benchmark.pk).version == 1


def staged_sentence_text(corpus, key: str) -> str:
    """The text a staged (not yet embedded) document will store under the key's label."""
    doc_id, label = key.rsplit("#", 1)
    document = Document.objects.get(corpus=corpus, external_id=doc_id)
    for ordinal, (start, end, own_label) in enumerate(document.pending_sentences["sentences"]):
        if (own_label or str(ordinal + 1)) == label:
            return document.pending_text[start:end]
    raise AssertionError(f"{key}: no such staged sentence")


@pytest.mark.django_db
def test_clapnq_pools_the_passages_into_a_corpus_and_imports_every_question():
    # --no-wait: the 199 passages stay queued for the workers (embedding them all here
    # takes minutes); the labels the evidence uses are checked against the staged sentences.
    folder = shared_data("clapnq-dev")
    output = run("import_benchmark", str(folder), name="clapnq", format="clapnq", no_wait=True)
    assert "200 case(s) read, 200 new" in output and "199 to embed" in output

    benchmark = Benchmark.objects.get(name="clapnq")
    assert benchmark.cases.count() == 200
    assert benchmark.cases.filter(answerable=False).count() == 100
    assert set(benchmark.cases.values_list("split", flat=True)) == {"dev"}
    documents = Document.objects.filter(corpus=benchmark.corpus)
    assert documents.count() == 199  # two questions share a passage
    assert set(documents.values_list("status", flat=True)) == {"queued"}

    first = json.loads((folder / "clapnq_dev_answerable.jsonl").read_text().splitlines()[0])
    case = benchmark.cases.get(case_id=first["id"])
    assert case.question == first["input"]
    assert case.reference_answer == first["output"][0]["answer"]
    assert [staged_sentence_text(benchmark.corpus, key) for key in case.gold_evidence] == first["output"][0][
        "selected_sentences"
    ]
    for answerable in benchmark.cases.filter(answerable=True):
        for key in answerable.gold_evidence:
            assert staged_sentence_text(benchmark.corpus, key) == answerable.evidence_texts[key]
    refused = benchmark.cases.filter(answerable=False).first()
    assert refused.gold_evidence == [] and refused.reference_answer == ""
    assert documents.filter(external_id=refused.gold_documents[0]).exists()


@pytest.mark.django_db
def test_clapnq_passages_embedded_in_process_hold_the_gold_sentences(tmp_path):
    source = shared_data("clapnq-dev", "clapnq_dev_answerable.jsonl")
    few = tmp_path / "few.jsonl"
    few.write_text("\n".join(source.read_text().splitlines()[:3]) + "\n")
    run("import_benchmark", str(few), name="clapnq-few", format="clapnq", in_process=True)
    benchmark = Benchmark.objects.get(name="clapnq-few")
    assert set(Document.objects.filter(corpus=benchmark.corpus).values_list("status", flat=True)) == {"ready"}
    for case in benchmark.cases.all():
        assert case.gold_evidence
        for key in case.gold_evidence:
            assert evidence_sentence(benchmark.corpus, key).text == case.evidence_texts[key]


@pytest.mark.django_db
def test_a_malformed_clapnq_line_names_file_and_line_and_imports_nothing(tmp_path):
    source = shared_data("clapnq-dev", "clapnq_dev_answerable.jsonl")
    lines = source.read_text().splitlines()[:5]
    lines[2] = lines[2][:-40]  # truncated JSON on line 3
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    shutil.copy(shared_data("clapnq-dev", "clapnq_dev_unanswerable.jsonl"), tmp_path / "good.jsonl")

    with pytest.raises(CommandError, match=r"bad\.jsonl, line 3: not valid JSON.*Nothing was imported"):
        run("import_benchmark", str(tmp_path), name="broken", format="clapnq", in_process=True)
    assert not Benchmark.objects.exists()
    assert not Corpus.objects.filter(name="broken").exists()
    assert not Document.objects.exists()


@pytest.mark.django_db
def test_an_analyst_bench_question_with_an_unknown_evidence_sentence_imports_nothing(tmp_path):
    root = shared_data("analyst-bench")
    (tmp_path / "questions").mkdir()
    (tmp_path / "corpus").symlink_to(root / "corpus")
    for split in ("train", "dev", "test"):
        shutil.copy(root / "questions" / f"{split}.jsonl", tmp_path / "questions" / f"{split}.jsonl")
    dev = (tmp_path / "questions" / "dev.jsonl").read_text().splitlines()
    record = json.loads(dev[1])
    record["evidence_sentences"] = ["S999"]
    dev[1] = json.dumps(record)
    (tmp_path / "questions" / "dev.jsonl").write_text("\n".join(dev) + "\n")

    with pytest.raises(CommandError, match=r"dev\.jsonl, line 2: .* has no sentence\(s\) S999"):
        run(
            "import_benchmark",
            str(tmp_path),
            name="ab",
            format="analyst-bench",
            documents="gold",
            in_process=True,
        )
    assert not Benchmark.objects.exists() and not GoldCase.objects.exists() and not Document.objects.exists()


@pytest.mark.django_db
def test_export_then_import_as_jsonl_reproduces_the_cases(tmp_path):
    folder = shared_data("clapnq-dev")
    run(
        "import_benchmark",
        str(folder / "clapnq_dev_unanswerable.jsonl"),
        name="cq",
        format="clapnq",
        split="test",
        no_wait=True,
    )
    out = tmp_path / "cq.jsonl"
    assert "Wrote 100 case(s) of 'cq' v1" in run("export_benchmark", "cq", str(out))
    record = json.loads(out.read_text().splitlines()[0])
    assert {
        "case_id",
        "question",
        "gold_documents",
        "gold_evidence",
        "reference_answer",
        "answerable",
    } <= set(record)

    run("import_benchmark", str(out), name="cq-copy", format="jsonl", corpus="cq")
    copy = Benchmark.objects.get(name="cq-copy")
    assert copy.corpus.name == "cq"

    def fields(name):
        return sorted(
            GoldCase.objects.filter(benchmark__name=name).values_list(
                "case_id", "split", "question", "gold_documents", "gold_evidence", "answerable"
            )
        )

    assert fields("cq-copy") == fields("cq")


@pytest.mark.django_db
def test_jsonl_import_needs_an_existing_corpus(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text(
        json.dumps({"case_id": "a", "split": "dev", "question": "Q?", "gold_documents": []}) + "\n"
    )
    with pytest.raises(CommandError, match="does not exist"):
        run("import_benchmark", str(path), name="x", format="jsonl", corpus="nowhere")
    assert not Benchmark.objects.exists()
