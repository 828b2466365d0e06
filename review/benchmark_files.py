"""Benchmark files to gold cases and documents, validated before anything is written.

Pure Python like documents.parsing: every reader returns an ImportPlan or
raises a ParseError (BenchmarkFileError for what only a benchmark requires)
whose message names the file and the line, so an import either has
everything it needs or writes nothing.

Formats:
- ``analyst-bench``: the directory (corpus/ and questions/{train,dev,test}.jsonl);
  case ids q001.. per split in file order, as review.evaluation.reference uses.
- ``clapnq``: CLAPNQ JSONL files; the pooled passages become the corpus and
  each question's gold evidence is its ``selected_sentences``, labelled like
  the stored sentences (their 1-based position in the passage).
- ``mtrag-un``: MTRAG-UN's reference.jsonl; one plan per collection (govt,
  clapnq, ibmcloud, fiqa) whose pooled reference passages are the corpus.
  Each task is a gold case on its last user turn, the earlier turns in
  ``metadata["conversation"]`` and its class (answerable, partial,
  underspecified, unanswerable) in ``metadata["answerability"]``. Every
  sentence of a reference passage is gold evidence (MTRAG marks passages, not
  sentences). Tasks are split train/test by their conversation id's sha1, so
  tuning on train never sees a test conversation.
- ``jsonl``: this app's own export (one gold case a line).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from documents.parsing import (
    ParsedDocument,
    ParseError,
    analyst_bench_gold_ids,
    clapnq_passage_id,
    iter_analyst_bench_corpus,
    iter_clapnq,
)
from documents.parsing.assemble import document_from_text
from documents.parsing.jsonl import jsonl_file
from review.evaluation import evidence_key
from review.evaluation.reference import SPLITS, UNANSWERABLE, case_id_for


class BenchmarkFileError(ParseError):
    """A benchmark file we refuse; the message names the file and line (as every ParseError does)."""


@dataclass(frozen=True)
class CaseSpec:
    case_id: str
    split: str
    question: str
    gold_documents: tuple[str, ...]
    gold_evidence: tuple[str, ...]
    evidence_texts: dict[str, str] = field(hash=False)
    reference_answer: str
    answerable: bool
    rubric: dict | None = field(default=None, hash=False)
    metadata: dict = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class ImportPlan:
    documents: tuple[ParsedDocument, ...]
    cases: tuple[CaseSpec, ...]


def rubric_problem(rubric) -> str | None:
    """Why a rubric is unusable, or None: it must be None or an object scoring 1-5."""
    if rubric is None:
        return None
    if not isinstance(rubric, dict):
        return "the rubric must be a JSON object with a 1-5 scale"
    scale = rubric.get("scale", {k: v for k, v in rubric.items() if str(k).isdigit()})
    if not isinstance(scale, dict) or not scale:
        return 'the rubric needs a "scale" object scoring 1 to 5'
    bad = [str(key) for key in scale if str(key) not in {"1", "2", "3", "4", "5"}]
    if bad:
        return f"the rubric scores {', '.join(bad)}; a scale runs from 1 to 5"
    return None


def _string(record: dict, key: str, where: str, *, required: bool = True) -> str:
    value = record.get(key, None if required else "")
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise BenchmarkFileError(
            f'{where}: "{key}" must be a non-empty string.'
            if required
            else f'{where}: "{key}" must be a string.'
        )
    return value.strip()


def _string_list(record: dict, key: str, where: str) -> list[str]:
    value = record.get(key) or []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise BenchmarkFileError(f'{where}: "{key}" must be a list of strings.')
    return value


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _rubric(record: dict, where: str) -> dict | None:
    rubric = record.get("rubric")
    problem = rubric_problem(rubric)
    if problem:
        raise BenchmarkFileError(f"{where}: {problem}.")
    return rubric


def read_analyst_bench(root: Path, *, documents: str = "all") -> ImportPlan:
    """The corpus (all of it, or only the documents questions ask about) and all three splits."""
    root = Path(root)
    if documents not in ("all", "gold"):
        raise BenchmarkFileError(f"unknown document selection {documents!r}; use all or gold.")
    for split in SPLITS:
        if not (root / "questions" / f"{split}.jsonl").is_file():
            raise BenchmarkFileError(f"{root}: no questions/{split}.jsonl; pass the analyst-bench directory.")
    parsed = list(iter_analyst_bench_corpus(root))
    asked = set(analyst_bench_gold_ids(root))
    by_id = {document.external_id: document for document in parsed}
    labels = {
        doc_id: {s.label or str(i + 1): s.text for i, s in enumerate(document.sentences)}
        for doc_id, document in by_id.items()
        if doc_id in asked
    }
    cases = []
    for split in SPLITS:
        records = jsonl_file(root / "questions" / f"{split}.jsonl")
        for index, (_, where, record) in enumerate(records):
            doc_id = _string(record, "doc_id", where)
            if doc_id not in by_id:
                raise BenchmarkFileError(f"{where}: doc_id {doc_id!r} is not a document under corpus/.")
            evidence = _string_list(record, "evidence_sentences", where)
            unknown = [label for label in evidence if label not in labels[doc_id]]
            if unknown:
                raise BenchmarkFileError(f"{where}: {doc_id} has no sentence(s) {', '.join(unknown)}.")
            keys = tuple(evidence_key(doc_id, label) for label in evidence)
            cases.append(
                CaseSpec(
                    case_id=case_id_for(index),
                    split=split,
                    question=_string(record, "question", where),
                    gold_documents=(doc_id,),
                    gold_evidence=keys,
                    evidence_texts={
                        key: labels[doc_id][label] for key, label in zip(keys, evidence, strict=True)
                    },
                    reference_answer=_string(record, "answer", where, required=False),
                    answerable=record.get("edge_case_type") != UNANSWERABLE,
                    rubric=_rubric(record, where),
                    metadata={
                        "question_type": record.get("question_type"),
                        "edge_case_type": record.get("edge_case_type"),
                        "source": where,
                    },
                )
            )
    kept = parsed if documents == "all" else [d for d in parsed if d.external_id in asked]
    # Documents the questions ask about go first, so they are ready while the rest embeds.
    kept.sort(key=lambda d: d.external_id not in asked)
    return ImportPlan(documents=tuple(kept), cases=tuple(cases))


def clapnq_files(path: Path) -> list[Path]:
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.jsonl"))
        if not files:
            raise BenchmarkFileError(f"{path}: no .jsonl files in this directory.")
        return files
    if not path.is_file():
        raise BenchmarkFileError(f"{path}: no such file or directory.")
    return [path]


def read_clapnq(paths: Sequence[Path], *, split: str = "dev") -> ImportPlan:
    """Every passage of every file as one document; every line as a question on the pool."""
    files = [file for path in paths for file in clapnq_files(path)]
    documents = {d.external_id: d for d in iter_clapnq(files)}
    cases, first_seen = [], {}
    for file in files:
        for _, where, record in jsonl_file(file):
            case_id = str(record.get("id") or "").strip()
            if not case_id:
                raise BenchmarkFileError(f'{where}: the question has no "id".')
            if case_id in first_seen:
                raise BenchmarkFileError(
                    f"{where}: question id {case_id} is already used by {first_seen[case_id]}."
                )
            first_seen[case_id] = where
            outputs = record.get("output")
            if not isinstance(outputs, list) or not outputs or not isinstance(outputs[0], dict):
                raise BenchmarkFileError(f'{where}: expected an "output" list with at least one object.')
            passage = record["passages"][0] if record.get("passages") else None
            if not isinstance(passage, dict):
                raise BenchmarkFileError(f'{where}: expected a "passages" list with the gold passage first.')
            doc_id = clapnq_passage_id(passage.get("title", ""), passage.get("text", ""))
            sentences: dict[str, str] = {}
            for i, sentence in enumerate(documents[doc_id].sentences):
                sentences.setdefault(sentence.text, sentence.label or str(i + 1))
            selected = _string_list(outputs[0], "selected_sentences", where)
            missing = [text for text in selected if text not in sentences]
            if missing:
                raise BenchmarkFileError(
                    f"{where}: a selected sentence is not in the passage: {missing[0][:80]!r}."
                )
            keys = tuple(dict.fromkeys(evidence_key(doc_id, sentences[text]) for text in selected))
            answer = _string(outputs[0], "answer", where, required=False)
            cases.append(
                CaseSpec(
                    case_id=case_id,
                    split=split,
                    question=_string(record, "input", where),
                    gold_documents=(doc_id,),
                    gold_evidence=keys,
                    evidence_texts={evidence_key(doc_id, sentences[text]): text for text in selected},
                    reference_answer=answer,
                    answerable=bool(answer),
                    metadata={"source": where},
                )
            )
    return ImportPlan(documents=tuple(documents.values()), cases=tuple(cases))


def read_cases_jsonl(path: Path) -> ImportPlan:
    """This app's export: one case a line, evidence as [{"key", "text"}]."""
    cases, first_seen = [], {}
    for _, where, record in jsonl_file(path):
        split = _string(record, "split", where)
        if split not in SPLITS:
            raise BenchmarkFileError(f"{where}: unknown split {split!r}; use one of {', '.join(SPLITS)}.")
        case_id = _string(record, "case_id", where)
        if (split, case_id) in first_seen:
            raise BenchmarkFileError(
                f"{where}: case {split}/{case_id} is already used by {first_seen[split, case_id]}."
            )
        first_seen[split, case_id] = where
        evidence = record.get("gold_evidence") or []
        if not isinstance(evidence, list) or not all(
            isinstance(item, dict)
            and isinstance(item.get("key"), str)
            and isinstance(item.get("text", ""), str)
            for item in evidence
        ):
            raise BenchmarkFileError(f'{where}: "gold_evidence" must be a list of {{"key", "text"}} objects.')
        if not isinstance(record.get("answerable", True), bool):
            raise BenchmarkFileError(f'{where}: "answerable" must be true or false.')
        cases.append(
            CaseSpec(
                case_id=case_id,
                split=split,
                question=_string(record, "question", where),
                gold_documents=tuple(_string_list(record, "gold_documents", where)),
                gold_evidence=tuple(item["key"] for item in evidence),
                evidence_texts={item["key"]: item.get("text", "") for item in evidence},
                reference_answer=_string(record, "reference_answer", where, required=False),
                answerable=record.get("answerable", True),
                rubric=_rubric(record, where),
                metadata={**_dict(record.get("metadata")), "source": where},
            )
        )
    if not cases:
        raise BenchmarkFileError(f"{Path(path).name} contains no cases.")
    return ImportPlan(documents=(), cases=tuple(cases))


MTRAG_CLASSES = ("answerable", "partial", "underspecified", "unanswerable")


def mtrag_split(conversation_id: str) -> str:
    """A fixed half: "train" (tune on it) or "test" (report on it), by the conversation's sha1."""
    return "train" if int(hashlib.sha1(conversation_id.encode()).hexdigest()[-1], 16) % 2 == 0 else "test"


def mtrag_document_id(collection: str, document_id: str) -> str:
    return f"mtrag-un/{collection}/{document_id}"


def _mtrag_turns(record: dict, where: str) -> list[dict]:
    turns = record.get("input")
    if (
        not isinstance(turns, list)
        or not turns
        or not all(isinstance(t, dict) and isinstance(t.get("text"), str) for t in turns)
        or turns[-1].get("speaker") != "user"
    ):
        raise BenchmarkFileError(f'{where}: "input" must be a list of turns ending with the user\'s.')
    return [{"speaker": str(t.get("speaker", "")), "text": t["text"].strip()} for t in turns]


def _first(record: dict, key: str, where: str) -> str:
    value = record.get(key)
    value = value[0] if isinstance(value, list) and value else value
    if not isinstance(value, str) or not value.strip():
        raise BenchmarkFileError(f'{where}: "{key}" must name one value.')
    return value.strip()


def read_mtrag_un(path: Path) -> dict[str, ImportPlan]:
    """MTRAG-UN's reference.jsonl (or its directory) as one import plan per collection."""
    path = Path(path)
    file = path / "reference.jsonl" if path.is_dir() else path
    if not file.is_file():
        raise BenchmarkFileError(f"{path}: no reference.jsonl; pass the mtrag-un directory or its file.")
    documents: dict[str, dict[str, ParsedDocument]] = {}
    cases: dict[str, list[CaseSpec]] = {}
    for _, where, record in jsonl_file(file):
        collection = _first(record, "Collection", where)
        kind = _first(record, "answerability", where).lower()
        if kind not in MTRAG_CLASSES:
            raise BenchmarkFileError(f"{where}: unknown answerability {kind!r}.")
        conversation_id = _string(record, "conversation_id", where)
        turns = _mtrag_turns(record, where)
        pool = documents.setdefault(collection, {})
        evidence: dict[str, str] = {}
        gold: list[str] = []
        for context in record.get("contexts") or []:
            doc_id = mtrag_document_id(collection, _string(context, "document_id", where))
            if doc_id not in pool:
                pool[doc_id] = document_from_text(
                    _string(context, "text", where), external_id=doc_id, filename=where, source="mtrag-un"
                )
            gold.append(doc_id)
            for i, sentence in enumerate(pool[doc_id].sentences):
                evidence[evidence_key(doc_id, sentence.label or str(i + 1))] = sentence.text
        targets = record.get("targets") or [{}]
        cases.setdefault(collection, []).append(
            CaseSpec(
                case_id=f"{conversation_id}-{_string(record, 'turn', where)}",
                split=mtrag_split(conversation_id),
                question=turns[-1]["text"],
                gold_documents=tuple(dict.fromkeys(gold)),
                gold_evidence=tuple(evidence),
                evidence_texts=evidence,
                reference_answer=_string(_dict(targets[0]), "text", where, required=False),
                answerable=kind != "unanswerable",
                metadata={
                    "answerability": kind,
                    "conversation": turns[:-1],
                    "collection": collection,
                    "multi_turn": _first(record, "Multi-Turn", where),
                    "question_type": record.get("Question Type"),
                    "source": where,
                },
            )
        )
    if not cases:
        raise BenchmarkFileError(f"{file.name} contains no tasks.")
    return {
        collection: ImportPlan(
            documents=tuple(documents[collection].values()), cases=tuple(cases[collection])
        )
        for collection in sorted(cases)
    }
