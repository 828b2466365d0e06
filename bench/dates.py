"""analyst-bench's date-sensitive questions: does the answer stay with the article of its date?

The analyst report's most common error was mixing articles from adjacent
dates: the Russia-Ukraine corpus has several articles a day on the same
stories, so an answer may cite the 26 July article for a question about the
21 July one. The date-sensitive questions are the ones whose gold document is
a dated article (its date is in its id); every split is reported, and nothing
was tuned on dev or test.

Two modes, both against the database ``manage.py`` uses (where
``import_benchmark`` put analyst-bench):

    python -m bench.dates summary RUN.json ...   # the slice of `evaluate --json` outputs
    python -m bench.dates ask --user admin --benchmark analyst-bench --days 3 [--json OUT]

``ask`` asks each date-sensitive question as it is and again with the date
range an analyst would give for it (the gold article's date +- ``--days``),
through ``qa.services.answer_now`` with a ``DocumentScope``. Columns: R@1 and
R@5 of the gold document, citation precision and F1 (gold sentence ids), and
"other dates": the share of cited sentences taken from an article of another
date, and the share of answered questions citing one at all.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
from collections.abc import Iterable
from pathlib import Path

from bench.common import print_table

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "analyst-bench"
_DATE = re.compile(r"(\d{4})[-_](\d{2})[-_](\d{2})")


def document_date(document_id: str) -> datetime.date | None:
    match = _DATE.search(document_id)
    return datetime.date(*map(int, match.groups())) if match else None


def gold_questions(root: Path = DATA) -> dict[str, dict]:
    """Question text -> {split, doc_id, evidence ids "doc#S3", date} for the dated gold documents."""
    out = {}
    for split in ("train", "dev", "test"):
        for line in (root / "questions" / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            date = document_date(record["doc_id"])
            if date is None or record.get("edge_case_type") == "unanswerable_from_source":
                continue
            evidence = [f"{record['doc_id']}#{sid}" for sid in record.get("evidence_sentences") or ()]
            out[record["question"].strip()] = {
                "split": split,
                "doc_id": record["doc_id"],
                "evidence": evidence,
                "date": date,
            }
    return out


def case_row(gold: dict, retrieved: list[str], cited: list[str], refused: bool) -> dict:
    from review.evaluation.metrics import citation_prf, recall_at_k

    prf = citation_prf(cited, gold["evidence"]) if not refused else None
    other = [c for c in cited if (d := document_date(c.split("#", 1)[0])) and d != gold["date"]]
    return {
        "r1": recall_at_k(retrieved, {gold["doc_id"]}, 1),
        "r5": recall_at_k(retrieved, {gold["doc_id"]}, 5),
        "precision": prf.precision if prf else 0.0,
        "f1": prf.f1 if prf else 0.0,
        "cited": len(cited),
        "other_dates": len(other),
        "answered": not refused,
    }


def summarise(rows: Iterable[dict]) -> dict:
    rows = list(rows)
    n = len(rows) or 1
    answered = [r for r in rows if r["answered"]]
    cited = sum(r["cited"] for r in rows)
    return {
        "questions": len(rows),
        "R@1": sum(r["r1"] for r in rows) / n,
        "R@5": sum(r["r5"] for r in rows) / n,
        "cite P": sum(r["precision"] for r in rows) / n,
        "cite F1": sum(r["f1"] for r in rows) / n,
        "other-date citations": sum(r["other_dates"] for r in rows) / cited if cited else 0.0,
        "answers citing another date": sum(1 for r in answered if r["other_dates"]) / (len(answered) or 1),
    }


def summary(paths: list[Path]) -> dict:
    gold = gold_questions()
    results = {}
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = []
        for case in data["cases"]:
            known = gold.get(case["question"].strip())
            if known is None or case.get("error"):
                continue
            prediction = case["prediction"]
            rows.append(
                case_row(
                    known,
                    prediction.get("retrieved_documents") or [],
                    prediction.get("cited_evidence") or [],
                    prediction.get("refused", False),
                )
            )
        results[path.name] = summarise(rows)
    return results


def ask(user_name: str, benchmark: str, days: int, splits: list[str], *, as_asked: bool = True) -> dict:
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "groundedqa_site.settings")
    django.setup()
    from django.contrib.auth import get_user_model

    from groundedqa_site.embedded_db import start_configured_server

    start_configured_server()
    from qa import services
    from qa.pipeline.reading.dates import DocumentScope
    from review.models import Benchmark

    user = get_user_model().objects.get(username=user_name)
    corpus = Benchmark.objects.get(name=benchmark).corpus
    gold = {q: g for q, g in gold_questions().items() if g["split"] in splits}
    runs: dict[str, dict[str, list[dict]]] = {"as asked": {}, f"date range +-{days} days": {}}
    if not as_asked:
        del runs["as asked"]
    for question, known in gold.items():
        window = datetime.timedelta(days=days)
        scopes = {
            "as asked": None,
            f"date range +-{days} days": DocumentScope(known["date"] - window, known["date"] + window),
        }
        for label, scope in scopes.items():
            asked = services.answer_now(
                user=user, corpus=corpus, text=question, scope=scope, is_evaluation=True
            )
            answer = getattr(asked, "answer", None)
            refused = answer is None or answer.refused
            cited = (
                []
                if answer is None
                else [
                    f"{c.document_external_id}#{c.label}"
                    for s in answer.sentences.all()
                    for c in s.citations.all()
                ]
            )
            retrieved = list(answer.retrieved_documents) if answer is not None else []
            runs[label].setdefault(known["split"], []).append(case_row(known, retrieved, cited, refused))
    return {
        label: {split: summarise(rows) for split, rows in by_split.items()}
        for label, by_split in runs.items()
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    summary_parser = sub.add_parser("summary")
    summary_parser.add_argument("paths", nargs="+", type=Path)
    ask_parser = sub.add_parser("ask")
    ask_parser.add_argument("--user", required=True)
    ask_parser.add_argument("--benchmark", default="analyst-bench")
    ask_parser.add_argument("--days", type=int, default=3)
    ask_parser.add_argument("--split", action="append", choices=["train", "dev", "test"])
    ask_parser.add_argument(
        "--range-only", action="store_true", help="only with the date range (summary gives the rest)"
    )
    for each in (summary_parser, ask_parser):
        each.add_argument("--json", type=Path, dest="json_out")
    args = parser.parse_args(argv)
    if args.mode == "summary":
        results = summary(args.paths)
    else:
        results = {
            f"{label} / {split}": row
            for label, by_split in ask(
                args.user, args.benchmark, args.days, args.split or ["train", "dev", "test"]
            ).items()
            for split, row in sorted(by_split.items())
        }
    headers = ["run", *next(iter(results.values())).keys()] if results else ["run"]
    rows = [
        [name, *(f"{v:.3f}" if isinstance(v, float) else v for v in row.values())]
        for name, row in results.items()
    ]
    print_table("analyst-bench, date-sensitive questions (gold document is a dated article)", headers, rows)
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
