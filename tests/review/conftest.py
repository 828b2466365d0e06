"""Fixtures of the review tests."""

from __future__ import annotations

import pytest

from review.benchmark_files import CaseSpec, ImportPlan
from review.services.benchmarks import benchmark_import
from tests.review.helpers import GDP, MUSCAT, OMAN, PORT, STAFF, make_document


def case(case_id, question, doc, labels, texts, *, answerable=True, reference=""):
    keys = tuple(f"{doc}#{label}" for label in labels)
    return CaseSpec(
        case_id=case_id,
        split="dev",
        question=question,
        gold_documents=(doc,),
        gold_evidence=keys,
        evidence_texts=dict(zip(keys, texts, strict=True)),
        reference_answer=reference,
        answerable=answerable,
        rubric={"scale": {"1": "wrong", "5": "right"}},
    )


@pytest.fixture
def tiny(corpus):
    """Three cases: one the scripted system gets right, one it cites wrongly, one it should refuse."""
    make_document(corpus, "oman", OMAN)
    make_document(corpus, "port", PORT)
    plan = ImportPlan(
        documents=(),
        cases=(
            case("c1", MUSCAT, "oman", ["S2"], [OMAN[1]], reference="The Portuguese, 1507-1650."),
            case("c2", STAFF, "port", ["S2"], [PORT[1]], reference="1,850 staff."),
            case("c3", GDP, "oman", [], [], answerable=False),
        ),
    )
    return benchmark_import(name="tiny", plan=plan, corpus_name=corpus.name, source_format="jsonl").benchmark
