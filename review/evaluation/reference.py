"""The analyst-bench data and the report's own outputs, as evaluation values.

Reads files only (``shared/data/analyst-bench``, beside the repository), so
the report's answers and ours can be scored by the same code in the same run.

How the report's files line up with ours (checked against its evaluation files
for every split and configuration):

- Question ids are ``q001``, ``q002`` ... in each split's JSONL file order; each
  output's ``question`` text equals that line's ``question``.
- ``evidence_sentences`` in an output are bare labels ("S9"). The report scored
  them as labels of the gold document, whichever document the answer came
  from. ``evidence_document="gold"`` (default) keys them the same way, which
  reproduces its citation numbers; ``"answer"`` keys them to the document the
  answer was drawn from (``answer_doc_index`` where the output records it,
  else the top retrieved document: an assumption for the BM25 and extension
  1-5 outputs, which do not say), a stricter reading that gives no credit for
  an "S9" cited from another document.
- The outputs carry no refusal flag; :func:`looks_like_refusal` decides from the
  answer's first sentence.
- The outputs carry no support scores, so JAFS is None for every reference
  configuration. Extension 6's whole-answer verification status is not a
  share of supported sentences and is not turned into one.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from documents.parsing.benchmarks import iter_analyst_bench_gold
from documents.parsing.jsonl import jsonl_file
from review.evaluation.evaluate import Convention, evaluate
from review.evaluation.types import EvaluationResult, GoldCase, Prediction, evidence_key

SPLITS = ("train", "dev", "test")
UNANSWERABLE = "unanswerable_from_source"

# The report's configurations in the order of its results table.
CONFIGURATIONS = (
    "simple",
    "strong",
    "extension1",
    "extension2",
    "extension3",
    "extension4",
    "extension5",
    "extension6",
)

CONFIGURATION_LABELS = {
    "simple": "BM25 baseline",
    "strong": "LLM only",
    "extension1": "Ext 1 RAG",
    "extension2": "Ext 2 cross-encoder rerank",
    "extension3": "Ext 3 LLM citations",
    "extension4": "Ext 4 hybrid",
    "extension5": "Ext 5 chunking",
    "extension6": "Ext 6 verification",
}

# Our pipeline presets and the report configuration each one reproduces.
PRESET_CONFIGURATIONS = {
    "bm25": "simple",
    "llm-only": "strong",
    "rag": "extension1",
    "rerank": "extension2",
    "llm-cite": "extension3",
    "hybrid": "extension4",
    "chunk": "extension5",
    "verify": "extension6",
}


@dataclass(frozen=True)
class ReportedResult:
    """One row of the report's table (train split, 24 questions), as published.

    Recall values are fractions (54.2% -> 0.542) rounded as printed; None is
    the table's "-".
    """

    recall_at_1: float
    recall_at_5: float
    citation_f1: float
    answer_score: float | None
    combined: float | None


REPORTED_RESULTS: dict[str, ReportedResult] = {
    "simple": ReportedResult(0.542, 0.625, 0.241, None, None),
    "strong": ReportedResult(0.0, 0.0, 0.0, 2.58, 0.30),
    "extension1": ReportedResult(0.542, 0.625, 0.241, 3.12, 0.48),
    "extension2": ReportedResult(0.792, 0.917, 0.291, 3.75, 0.58),
    "extension3": ReportedResult(0.792, 0.917, 0.576, 3.83, 0.70),
    "extension4": ReportedResult(0.833, 0.958, 0.528, 3.79, 0.65),
    "extension5": ReportedResult(0.750, 1.0, 0.616, 3.67, 0.69),
    "extension6": ReportedResult(0.750, 1.0, 0.632, 3.88, 0.71),
}

# Evaluation files name their single configuration differently from the outputs.
_EVALUATION_KEYS = {
    "simple": ("", "simple"),
    "strong": ("", "strong"),
    "extension1": ("extension1_", "rag"),
}


def repository_root() -> Path:
    return Path(__file__).resolve().parents[2]


def default_data_dir() -> Path:
    """GROUNDEDQA_SHARED_DATA, else ``shared/data`` beside the checkout (``../shared/data`` from its root)."""
    return Path(os.environ.get("GROUNDEDQA_SHARED_DATA") or repository_root().parent / "shared" / "data")


def analyst_bench_dir(data_dir: Path | str | None = None) -> Path:
    return Path(data_dir or default_data_dir()) / "analyst-bench"


def _check(split: str, configuration: str | None = None) -> None:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
    if configuration is not None and configuration not in CONFIGURATIONS:
        raise ValueError(f"unknown configuration {configuration!r}; expected one of {CONFIGURATIONS}")


def _read_questions(split: str, data_dir: Path | str | None) -> list[dict]:
    path = analyst_bench_dir(data_dir) / "questions" / f"{split}.jsonl"
    return [record for _, _, record in jsonl_file(path)]


def case_id_for(index: int) -> str:
    """The report's id for the question on 0-based line ``index`` of a split file."""
    return f"q{index + 1:03d}"


def load_gold_cases(split: str, *, data_dir: Path | str | None = None) -> list[GoldCase]:
    """The split's questions as GoldCases, ids q001.. in file order, evidence as keys."""
    _check(split)
    cases = []
    for index, row in enumerate(_read_questions(split, data_dir)):
        document_id = row["doc_id"]
        cases.append(
            GoldCase(
                case_id=case_id_for(index),
                question=row["question"],
                gold_documents=(document_id,),
                gold_evidence=tuple(
                    evidence_key(document_id, label) for label in row.get("evidence_sentences", [])
                ),
                reference_answer=row.get("answer", ""),
                answerable=row.get("edge_case_type") != UNANSWERABLE,
                rubric=row.get("rubric"),
            )
        )
    return cases


def load_gold_sentence_texts(*, data_dir: Path | str | None = None) -> dict[str, str]:
    """Text of every gold-document sentence, keyed ``"<doc_id>#<sid>"`` like the evidence."""
    return {
        evidence_key(document.external_id, sentence.label): sentence.text
        for document in iter_analyst_bench_gold(analyst_bench_dir(data_dir))
        for sentence in document.sentences
    }


# A refusal says, in its first sentence, that the source or the model lacks
# the answer. Matching the first sentence only keeps answers that give facts
# and then note a missing detail ("... The document does not provide the
# number of stations") from counting as refusals.
_REFUSAL = re.compile(
    r"does not provide (?:sufficient |specific |enough |any )?information"
    r"|not enough information"
    r"|insufficient (?:evidence|information)"
    r"|(?:can ?not|can't|unable to) (?:verify|provide|answer|determine)"
    r"|(?:do not|don't|does not) have (?:any |the |enough )?(?:information|access)"
    r"|(?:didn't|did not) provide"
    r"|(?:don't|do not) see any",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def looks_like_refusal(answer: str) -> bool:
    """Heuristic refusal test for the report's outputs, which record none."""
    first_sentence = _SENTENCE_END.split(answer.strip().replace("’", "'"), maxsplit=1)[0]
    return bool(_REFUSAL.search(first_sentence))


def _read_reference(split: str, name: str, data_dir: Path | str | None) -> dict:
    path = analyst_bench_dir(data_dir) / "reference-outputs" / f"{split}_{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def load_reference_evaluation(split: str, configuration: str, *, data_dir: Path | str | None = None) -> dict:
    """The report's own evaluation of one configuration (its ``*_evaluation.json`` entry)."""
    _check(split, configuration)
    prefix, key = _EVALUATION_KEYS.get(configuration, (f"{configuration}_", f"rag_{configuration}"))
    return _read_reference(split, f"{prefix}evaluation", data_dir)[key]


def load_reference_answer_scores(
    split: str, configuration: str, *, data_dir: Path | str | None = None
) -> dict[str, float]:
    """The report's LLM-judge scores (1-5) per case id; empty where it ran no judge."""
    judge = load_reference_evaluation(split, configuration, data_dir=data_dir).get("llm_judge")
    if not judge:
        return {}
    return {row["question_id"]: float(row["answer_score_raw"]) for row in judge["per_question"]}


def load_reference_predictions(
    split: str,
    configuration: str,
    *,
    data_dir: Path | str | None = None,
    evidence_document: Literal["gold", "answer"] = "gold",
    with_judge_scores: bool = True,
) -> list[Prediction]:
    """The report's outputs for a split and configuration, as Predictions in case order.

    ``with_judge_scores`` attaches the report's own judge scores so that
    answer_score and combined can be re-scored; the BM25 baseline has none.
    """
    _check(split, configuration)
    if evidence_document not in ("gold", "answer"):
        raise ValueError(f"unknown evidence_document {evidence_document!r}")
    outputs = _read_reference(split, f"{configuration}_output", data_dir)
    cases = load_gold_cases(split, data_dir=data_dir)
    scores = (
        load_reference_answer_scores(split, configuration, data_dir=data_dir) if with_judge_scores else {}
    )
    predictions = []
    for case in cases:
        output = outputs.get(case.case_id)
        if output is None:
            continue
        if output.get("question") not in (None, case.question):
            raise ValueError(f"{split} {configuration} {case.case_id}: question text differs")
        retrieved = tuple(row["doc_id"] for row in output.get("retrieved_docs", []))
        if evidence_document == "gold" or not retrieved:
            source_document = case.gold_documents[0]
        else:
            index = output.get("answer_doc_index") or 0
            source_document = retrieved[min(index, len(retrieved) - 1)]
        predictions.append(
            Prediction(
                case_id=case.case_id,
                answer=output.get("answer", ""),
                refused=looks_like_refusal(output.get("answer", "")),
                retrieved_documents=retrieved,
                cited_evidence=tuple(
                    evidence_key(source_document, label) for label in output.get("evidence_sentences", [])
                ),
                answer_score=scores.get(case.case_id),
            )
        )
    return predictions


def rescore_reference(
    split: str = "train",
    *,
    configurations: tuple[str, ...] = CONFIGURATIONS,
    data_dir: Path | str | None = None,
    evidence_document: Literal["gold", "answer"] = "gold",
    convention: Convention = "report",
) -> dict[str, EvaluationResult]:
    """Score the report's outputs with this package's metrics, per configuration."""
    cases = load_gold_cases(split, data_dir=data_dir)
    texts = load_gold_sentence_texts(data_dir=data_dir)
    return {
        configuration: evaluate(
            cases,
            load_reference_predictions(
                split, configuration, data_dir=data_dir, evidence_document=evidence_document
            ),
            texts,
            convention=convention,
        )
        for configuration in configurations
    }


def published_metrics(configuration: str) -> Mapping[str, float | None]:
    """A REPORTED_RESULTS row under this package's metric names."""
    row = REPORTED_RESULTS[configuration]
    return {
        "recall_at_1": row.recall_at_1,
        "recall_at_5": row.recall_at_5,
        "citation_f1": row.citation_f1,
        "answer_score": row.answer_score,
        "combined": row.combined,
    }
