"""The local LLM as a judge of answer sentences, by probability (qa.pipeline.checks.llm_judge).

Two questions, each one short prompt read as P("yes") (``SentenceJudge``):
  relevance  "Does this sentence answer the question?" on the answer sentences of bench/sentence_relation.py:
             the ``default`` preset's answers over the genre set and CLAPNQ-dev, a sentence gold when it
             cites one of the question's gold evidence sentences. Today's signal: the relation score
             (qa.pipeline.checks.relation.relation_scores).
  support    "Does the passage support the claim?" on pairs built from CLAPNQ-dev's answerable questions:
             the claim is the first sentence of the annotators' answer; supported when paired with the
             passage sentences the annotators selected for it, unsupported when paired with the gold
             passage's other sentences (the same document and subject, the wrong place: a neighbouring
             sentence cited). Built, not annotated: a neighbour that happens to say the same counts as
             unsupported. Today's signal: the lexical verifier with the embedding model, as a score
             (label rank 0/1/2 plus content-word coverage, over 3).

The combinations the product uses (qa.pipeline.checks.relation, qa.pipeline.checks.judged_claims):
  relevance  0.5 * relation score + 0.5 * P(yes), labelled with thresholds refitted on these rows by
             bench/sentence_relation.py's rules (genre and CLAPNQ-dev are its tuning sets);
  support    P(yes) below the veto threshold takes "supported" away; the AUC row uses
             0.5 * lexical score + 0.5 * P(yes).
AUCs with a paired bootstrap (by question) of combination minus today's signal.

    nice -n 15 .venv/bin/python -m bench.llm_judge_sentences rows        # ~5 min: the preset's answers
    QA_LLM_THREADS=1 nice -n 15 .venv/bin/python -m bench.llm_judge_sentences collect --minutes 40 \\
        --model var/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
    .venv/bin/python -m bench.llm_judge_sentences report --json bench/results/llm_judge_sentences.json
    .venv/bin/python -m bench.llm_judge_sentences readers   # the shipped readers on the same relevance rows

``collect`` judges the rows in one fixed random order (seed 28, relevance and support alternating), one
JSON line each appended to var/llm_judge/sentences.jsonl, and stops at ``--minutes``, so a run that is
stopped continues where it was and any prefix is a random sample of both sets.
Never run on analyst-bench dev/test or MTRAG-UN test: they are held out.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from bench.answerability_models import auc  # noqa: E402

CACHE_DIR = REPO / "var" / "llm_judge"
ROWS = CACHE_DIR / "sentence_rows.json"
JUDGED = CACHE_DIR / "sentences.jsonl"
RESULTS = REPO / "bench" / "results" / "llm_judge_sentences.json"
DEFAULT_MODEL = REPO / "var" / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
SEED = 28
LABEL_RANK = {"unsupported": 0, "partial": 1, "supported": 2}


def support_pairs() -> list[dict]:
    from bench.retrieval_quality import DATA
    from documents.parsing.jsonl import jsonl_file
    from qa.pipeline.core.segment import segment

    pairs = []
    for _, _, record in jsonl_file(DATA / "clapnq-dev" / "clapnq_dev_answerable.jsonl"):
        passage, output = record["passages"][0], record["output"][0]
        selected = [s.strip() for s in output.get("selected_sentences") or []]
        claim = (output.get("answer") or "").strip()
        if not selected or not claim:
            continue
        spans = segment(claim)
        claim = claim[spans[0][0] : spans[0][1]] if spans else claim
        others = [s.strip() for s in passage["sentences"] if s.strip() not in selected]
        if not others:
            continue
        common = {"id": record["id"], "question": record["input"], "claim": claim, "title": passage["title"]}
        pairs.append({**common, "cited": " ".join(selected), "gold": True})
        pairs.append({**common, "cited": " ".join(others[: max(len(selected), 2)]), "gold": False})
    return pairs


def lexical_scores(pairs: list[dict]) -> None:
    from bench.retrieval_quality import CACHE, MODEL, MemoEmbedder
    from qa.pipeline.checks.verification import LexicalVerifier
    from qa.pipeline.core.types import SourceSentence
    from qa.pipeline.drafting.generation import DraftSentence
    from qa.pipeline.search.embedding import CachingEmbedder, SentenceTransformerEmbedder

    verifier = LexicalVerifier(MemoEmbedder(CachingEmbedder(SentenceTransformerEmbedder(), CACHE, MODEL)))
    for pair in pairs:
        citation = SourceSentence(0, pair["id"], pair["title"], 0, "1", pair["cited"])
        verdict = verifier.verify(pair["question"], [DraftSentence(pair["claim"], (citation,))]).verdicts[0]
        pair["lexical_label"] = verdict.label
        pair["score"] = round((LABEL_RANK[verdict.label] + (verdict.coverage or 0.0)) / 3, 4)


def make_rows(args) -> None:
    from bench.sentence_relation import clapnq_rows, genre_rows
    from qa.pipeline.config.presets import get_preset

    config = get_preset("default")
    relevance = [{**r, "set": "genre"} for r in genre_rows(config)]
    relevance += [{**r, "set": "clapnq-dev"} for r in clapnq_rows(config)]
    pairs = support_pairs()
    lexical_scores(pairs)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    ROWS.write_text(json.dumps({"relevance": relevance, "support": pairs}, indent=1))
    print(f"{len(relevance)} answer sentences, {len(pairs)} support pairs -> {ROWS}")


def plan() -> list[tuple[str, int, dict]]:
    rows = json.loads(ROWS.read_text())
    order = {}
    for kind in ("relevance", "support"):
        numbered = list(enumerate(rows[kind]))
        random.Random(SEED).shuffle(numbered)
        order[kind] = [(kind, i, row) for i, row in numbered]
    mixed = []
    for a, b in zip(order["relevance"], order["support"], strict=False):
        mixed += [a, b]
    longer = max(order.values(), key=len)
    return mixed + longer[len(mixed) // 2 :]


def collect(args) -> None:
    from qa.pipeline.checks.llm_judge import SentenceJudge
    from qa.pipeline.core.llm import LlamaCppLLM

    threads = int(os.environ.get("QA_LLM_THREADS") or 1)
    judge = SentenceJudge(LlamaCppLLM(args.model, n_ctx=2048, n_threads=threads))
    done = set()
    if JUDGED.exists():
        done = {(r["kind"], r["row"]) for r in map(json.loads, JUDGED.read_text().splitlines()) if r}
    deadline = time.monotonic() + 60 * args.minutes
    with JUDGED.open("a", encoding="utf-8") as out:
        for position, (kind, number, row) in enumerate(plan()):
            if (kind, number) in done:
                continue
            if time.monotonic() > deadline:
                break
            load = os.getloadavg()[0]
            if kind == "relevance":
                reading = judge.relevance(row["question"], row["text"], row["title"])
            else:
                reading = judge.support(row["claim"], row["cited"], row["title"])
            line = {"kind": kind, "row": number, "position": position, **reading.to_trace()}
            out.write(json.dumps({**line, "threads": threads, "load": round(load, 2)}) + "\n")
            out.flush()
            print(
                f"  {position} {kind:>9} gold={row['gold']!s:5} p_yes {line['p_yes']} {line['seconds']}s",
                flush=True,
            )


def _bootstrap(
    ids: list[str], gold: np.ndarray, a: np.ndarray, b: np.ndarray, draws: int = 2000
) -> list[float]:
    """95% interval of AUC(a) - AUC(b), resampling questions (a question's rows together)."""
    groups: dict[str, list[int]] = {}
    for i, qid in enumerate(ids):
        groups.setdefault(qid, []).append(i)
    keys = sorted(groups)
    rng = np.random.default_rng(SEED)
    gains = []
    for _ in range(draws):
        picked = np.concatenate([groups[keys[k]] for k in rng.integers(0, len(keys), len(keys))])
        y = gold[picked]
        if y.all() or not y.any():
            continue
        gains.append(auc(a[picked], y) - auc(b[picked], y))
    if not gains:  # too few rows of one class to resample
        return None
    return [round(float(np.percentile(gains, 2.5)), 4), round(float(np.percentile(gains, 97.5)), 4)]


def _compare(rows: list[dict], combined: np.ndarray) -> dict:
    gold = np.array([r["gold"] for r in rows], dtype=bool)
    today = np.array([r["score"] for r in rows])
    p_yes = np.array([r["p_yes"] for r in rows])
    ids = [r["id"] for r in rows]
    gain = auc(combined, gold) - auc(today, gold)
    return {
        "rows": len(rows),
        "gold": int(gold.sum()),
        "questions": len(set(ids)),
        "auc_today": round(auc(today, gold), 4),
        "auc_p_yes": round(auc(p_yes, gold), 4),
        "auc_combined": round(auc(combined, gold), 4),
        "combined_minus_today": {
            "gain": round(gain, 4),
            "bootstrap_95": _bootstrap(ids, gold, combined, today),
        },
        "p_yes_minus_today": {
            "gain": round(auc(p_yes, gold) - auc(today, gold), 4),
            "bootstrap_95": _bootstrap(ids, gold, p_yes, today),
        },
    }


def report(args) -> dict:
    from bench.sentence_relation import choose_answers, choose_background, cross_fitted, f1_at

    rows = json.loads(ROWS.read_text())
    judged = [json.loads(line) for line in JUDGED.read_text().splitlines() if line.strip()]
    errors = [j for j in judged if j["p_yes"] is None]
    measured = {kind: [] for kind in ("relevance", "support")}
    for j in judged:
        if j["p_yes"] is not None:
            measured[j["kind"]].append({**rows[j["kind"]][j["row"]], "p_yes": j["p_yes"]})
    result: dict = {"model": Path(args.model).name, "seed": SEED, "judge_errors": len(errors)}
    seconds = [j["seconds"] for j in judged]
    for kind, got in measured.items():
        if not got:
            continue
        secs = [j["seconds"] for j in judged if j["kind"] == kind]
        if kind == "relevance":
            combined = np.array([0.5 * r["score"] + 0.5 * r["p_yes"] for r in got])
            entry = {"all": _compare(got, combined)}
            for name in ("genre", "clapnq-dev"):
                part = [r for r in got if r["set"] == name]
                if part:
                    entry[name] = _compare(
                        part, np.array([0.5 * r["score"] + 0.5 * r["p_yes"] for r in part])
                    )
            sets = [
                [{**r, "score": 0.5 * r["score"] + 0.5 * r["p_yes"]} for r in got if r["set"] == name]
                for name in ("genre", "clapnq-dev")
            ]
            answers, background = choose_answers(sets), choose_background(sets)
            today_sets = [[r for r in got if r["set"] == name] for name in ("genre", "clapnq-dev")]
            entry["thresholds_combined"] = {"answers": answers, "background": background}
            # Each CLAPNQ-dev fold labelled at thresholds chosen on the other folds and the genre rows.
            entry["cross_fitted"] = {
                "combined": cross_fitted(sets[1], [sets[0]]).strip(),
                "today": cross_fitted(today_sets[1], [today_sets[0]]).strip(),
            }
            entry["labels"] = {
                "combined": _label_figures(sum(sets, []), answers, background, f1_at),
                "today": _label_figures(sum(today_sets, []), 0.725, 0.375, f1_at),
            }
        else:
            combined = np.array([0.5 * r["score"] + 0.5 * r["p_yes"] for r in got])
            entry = {"all": _compare(got, combined), "veto": _veto_figures(got)}
        entry["seconds_per_judgement"] = {
            "mean": round(float(np.mean(secs)), 3),
            "p50": round(float(np.median(secs)), 3),
            "p90": round(float(np.percentile(secs, 90)), 3),
        }
        result[kind] = entry
    result["threads"] = sorted({j["threads"] for j in judged})
    result["load_average_1min"] = {"mean": round(float(np.mean([j["load"] for j in judged])), 2)}
    result["judged"] = len(judged)
    result["seconds_total"] = round(float(sum(seconds)), 1)
    print(json.dumps(result, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return result


def _label_figures(rows: list[dict], answers: float, background: float, f1_at) -> dict:
    precision, recall, f1 = f1_at(rows, answers)
    gold = [r for r in rows if r["gold"]]
    other = [r for r in rows if not r["gold"]]
    return {
        "answers": {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)},
        "off_question_share_of_gold": round(
            sum(r["score"] < background for r in gold) / max(len(gold), 1), 4
        ),
        "off_question_share_of_other": round(
            sum(r["score"] < background for r in other) / max(len(other), 1), 4
        ),
    }


def _veto_figures(rows: list[dict]) -> dict:
    """How often "supported" is right, today and with the judge's veto at each threshold."""
    out = {}
    for t in (None, 0.1, 0.2, 0.3, 0.5):
        kept = [r for r in rows if r["lexical_label"] == "supported" and (t is None or r["p_yes"] >= t)]
        gold_supported = sum(r["gold"] for r in rows)
        right = sum(r["gold"] for r in kept)
        out["today" if t is None else f"veto<{t}"] = {
            "labelled_supported": len(kept),
            "precision": round(right / len(kept), 4) if kept else None,
            "recall": round(right / gold_supported, 4) if gold_supported else None,
        }
    return out


def readers(args) -> dict:
    """The shipped readers as judges of the same answer sentences, beside today's relation score:
    the passage reader's P(the sentence states the answer), read on the sentence alone under its
    document's title, and the span reader's best span margin over no answer. The passage reader was
    trained on CLAPNQ-dev and SQuAD 2.0 (its ``trained_on``): on the CLAPNQ-dev rows it is not held out."""
    from qa.pipeline.reading.reader import PassageReader, SpanReader

    rows = json.loads(ROWS.read_text())["relevance"]
    passage, span = PassageReader(threads=1), SpanReader(threads=1)
    started = time.perf_counter()
    for r in rows:
        r["reader"] = passage.read(r["question"], [(r["title"], [r["text"]])])[0]
        r["span"] = span.span_scores(r["question"], [r["text"]])[0][2]
    seconds = (time.perf_counter() - started) / max(len(rows), 1)
    result: dict = {"seconds_per_sentence_both": round(seconds, 4)}
    for name in ("genre", "clapnq-dev"):
        part = [r for r in rows if r["set"] == name]
        gold = np.array([r["gold"] for r in part], dtype=bool)
        ids = [r["id"] for r in part]
        today = np.array([r["score"] for r in part])
        scores = {
            "reader": np.array([r["reader"] for r in part]),
            "span": np.array([r["span"] for r in part]),
            "today + reader": np.array([0.5 * r["score"] + 0.5 * r["reader"] for r in part]),
        }
        entry = {"rows": len(part), "gold": int(gold.sum()), "auc_today": round(auc(today, gold), 4)}
        for key, values in scores.items():
            entry[key] = {
                "auc": round(auc(values, gold), 4),
                "minus_today_bootstrap_95": _bootstrap(ids, gold, values, today),
            }
        result[name] = entry
    print(json.dumps(result, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.llm_judge_sentences", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="phase", required=True)
    sub.add_parser("rows")
    c = sub.add_parser("collect")
    c.add_argument("--model", default=str(DEFAULT_MODEL))
    c.add_argument("--minutes", type=float, default=40)
    r = sub.add_parser("report")
    r.add_argument("--model", default=str(DEFAULT_MODEL))
    r.add_argument("--json", default=str(RESULTS))
    d = sub.add_parser("readers")
    d.add_argument("--json", default=str(RESULTS.with_name("sentence_readers.json")))
    args = parser.parse_args(argv)
    {"rows": make_rows, "collect": collect, "report": report, "readers": readers}[args.phase](args)


if __name__ == "__main__":
    main()
