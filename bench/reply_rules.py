"""Each reply rule's effect: the tuning suite with every rule on, and with each rule switched off.

    .venv/bin/python -m bench reply_rules     # the sample sizes below (~40 min on a shared 2-core machine)
    .venv/bin/python -m bench.reply_rules --sets mtrag --rules-off turn_kind_model  # rules decide follow-ups
    .venv/bin/python -m bench.reply_rules --sets genre,clapnq --clapnq-every 5      # a quick look

The rules are qa.pipeline.checks.reply_rules.RULE_NAMES: every rule of the table, in all its phases
(the composing rules of the "draft" and "composed" phases included, recorded wherever
``reply_rules.decide`` is asked, in the stages or in answering), the verdict rules that set the
answerability verdict (recorded wherever a verdict names one), plus ``turn_kind_model``, the switch
that lets the fitted turn-kind model decide follow-ups. The table is walked first match first, so
switching a rule off can change only the replies of the questions where that rule decided with every
rule on: the bench runs each sample once with all rules on, records which rules decided anything for
each question (a draft rule may decline one window's draft and not the reply, when the preset retries:
recorded all the same, so the rerun set is a superset), and runs again, with the rule off, only the
questions that rule decided. That is exact, not a sample of
the variants, and it keeps the bench within minutes on a shared 2-core machine.

A reply is right when it is the kind the gold asks for: an answer (or an answer in part) to an
answerable question, a refusal of an unanswerable one; on MTRAG-UN train an answer in part or an
answer for a partial turn and a question back for an underspecified one. Each rule's effect is the
change in the share of right replies when it is off (negative: the rule helps), with a paired
bootstrap 95% interval over the sample's questions (the noise). Only train splits and dev sets
the issue names for tuning are read: never analyst-bench dev/test or MTRAG-UN test. The genre set's
held-out part (``heldout``, bench/genre/heldout/) is measured the same way and reported beside: no
rule was kept or deleted on it.

Writes bench/results/reply_rules.json.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from bench.common import REPO
from qa.pipeline.checks import reply_rules
from qa.pipeline.checks.answerability import SignalAnswerability
from qa.pipeline.config.presets import get_preset
from qa.pipeline.flow import stages
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.runner import answer_question

SEED = 13
RESULTS = REPO / "bench" / "results" / "reply_rules.json"


@dataclass(frozen=True)
class Case:
    id: str
    question: str
    expected: str  # answerable, partial, underspecified, unanswerable
    rewrite: object = None  # a conversation.Rewrite for a follow-up


@dataclass
class Sample:
    name: str
    size: str  # what was sampled from what, in words
    cases: list[Case]
    answer: Callable  # (config, case) -> the run's Answer


def reply_of(answer) -> str:
    if answer.kind == "underspecified":
        return "ask_back"
    if answer.refused:
        return "refuse"
    return "partial" if answer.kind == "partial" else "answer"


RIGHT = {
    "answerable": {"answer", "partial"},
    "partial": {"partial", "answer"},
    "underspecified": {"ask_back"},
    "unanswerable": {"refuse"},
}


def _answerer(index, embedder):
    pipelines: dict = {}

    def answer(config, case: Case):
        key = config.answer.rules_off
        if key not in pipelines:
            pipelines[key] = build_pipeline(config, index=index, clients=ModelClients(embedder=embedder))
        return answer_question(case.question, pipeline=pipelines[key], rewrite=case.rewrite).answer

    return answer


def _embedders():
    from bench.retrieval_quality import CACHE, MODEL, MemoEmbedder
    from qa.pipeline.search.embedding import CachingEmbedder, SentenceTransformerEmbedder

    corpus = CachingEmbedder(SentenceTransformerEmbedder(), CACHE, MODEL)
    return corpus, MemoEmbedder(corpus)


def genre_sample(config, part: str = "tuning") -> Sample:
    from bench.genre import genre_pipeline, load_questions

    _, index, embedder = genre_pipeline(config, part=part)
    cases = [
        Case(q.id, q.question, "answerable" if q.answerable else "unanswerable") for q in load_questions(part)
    ]
    name = "genre" if part == "tuning" else "genre held-out"
    return Sample(name, f"all {len(cases)} questions", cases, _answerer(index, embedder))


def clapnq_sample(every: int) -> Sample:
    from bench.answer_quality import clapnq_cases
    from bench.retrieval_quality import build, clapnq

    corpus, embedder = _embedders()
    index, _ = build(clapnq()[0], corpus)
    everything = clapnq_cases()[0]
    cases = [
        Case(c.case_id, c.question, "answerable" if c.answerable else "unanswerable")
        for c in everything[::every]
    ]
    size = f"every {every}th of {len(everything)} cases: {len(cases)}"
    return Sample("CLAPNQ-dev", size, cases, _answerer(index, embedder))


def squad_paragraphs(articles: int):
    """(document id, document, squad2 paragraph) for each paragraph of ``articles`` seeded squad2
    articles: the seeded sample every bench that reads squad2 as a corpus shares."""
    from bench.retrieval_quality import DATA
    from documents.parsing.assemble import document_from_text

    data = json.loads((DATA / "squad2" / "dev-half-v2.0.json").read_text(encoding="utf-8"))["data"]
    for a, article in enumerate(random.Random(SEED).sample(data, min(articles, len(data)))):
        for p, paragraph in enumerate(article["paragraphs"]):
            doc_id = f"squad2/{a}-{p}"
            text, title = paragraph["context"], article["title"]
            document = document_from_text(text, external_id=doc_id, filename=doc_id, title=title)
            yield doc_id, document, paragraph


def squad_sample(articles: int, questions: int) -> Sample:
    from bench.retrieval_quality import build

    documents, cases = [], []
    for _, document, paragraph in squad_paragraphs(articles):
        documents.append(document)
        cases += [
            Case(qa["id"], qa["question"], "unanswerable" if qa["is_impossible"] else "answerable")
            for qa in paragraph["qas"]
        ]
    total = len(cases)
    cases = random.Random(SEED).sample(cases, min(questions, total))
    corpus, embedder = _embedders()
    index, _ = build(documents, corpus)
    size = f"{len(cases)} of the {total} questions on {len(documents)} paragraphs of {articles} articles"
    return Sample("squad2", size, cases, _answerer(index, embedder))


def analyst_sample(distractors: int) -> Sample:
    from bench.answer_quality import with_distractors
    from bench.retrieval_quality import DATA, analyst_bench, build
    from review.evaluation.reference import load_gold_cases

    documents, _ = analyst_bench()
    documents = with_distractors(documents, distractors)
    corpus, embedder = _embedders()
    index, _ = build(documents, corpus)
    gold = load_gold_cases("train", data_dir=DATA)
    cases = [Case(c.case_id, c.question, "answerable" if c.answerable else "unanswerable") for c in gold]
    size = f"all {len(cases)} train questions over their gold documents and {distractors} others"
    return Sample("analyst-bench train", size, cases, _answerer(index, embedder))


def mtrag_sample(per_collection: int) -> Sample:
    from bench.mtrag_un import history_pairs, rewritten
    from bench.retrieval_quality import DATA, build
    from review.benchmark_files import read_mtrag_un

    corpus, embedder = _embedders()
    cases, answerers = [], {}
    for collection, plan in read_mtrag_un(DATA / "mtrag-un").items():
        train = [c for c in plan.cases if c.split == "train"]
        train = random.Random(SEED).sample(train, min(per_collection, len(train)))
        index, _ = build(plan.documents, corpus)
        answerers[collection] = _answerer(index, embedder)
        for c in train:
            searched = rewritten(c.question, history_pairs(c.metadata["conversation"]), "memory")
            cases.append(Case(f"{collection}:{c.case_id}", c.question, c.metadata["answerability"], searched))

    def answer(config, case: Case):
        return answerers[case.id.split(":", 1)[0]](config, case)

    size = (
        f"up to {per_collection} seeded train turns from each of {len(answerers)} collections "
        f"(all of one with fewer): {len(cases)}"
    )
    return Sample("MTRAG-UN train", size, cases, answer)


def decided_by(
    sample: Sample, config, dump: dict | None = None
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Each case's reply with every rule on, and the rules that decided it; ``dump`` gets each
    answer's kind, refusal, text, note and missing parts (to compare two versions' replies)."""
    fired: list[str] = []
    decide, learned, judge = reply_rules.decide, stages._learned_turn, SignalAnswerability.judge

    def recording(phase, evidence, rules_off=()):
        decision = decide(phase, evidence, rules_off)
        if decision is not None:
            fired.append(decision.rule)
        return decision

    def learning(*args, **kwargs):
        fired.append(reply_rules.TURN_KIND_MODEL)
        return learned(*args, **kwargs)

    def judging(self, *args, **kwargs):
        verdict = judge(self, *args, **kwargs)
        if verdict.rule:
            fired.append(verdict.rule)  # a verdict rule: recorded wherever a verdict is asked for
        return verdict

    reply_rules.decide, stages._learned_turn, SignalAnswerability.judge = recording, learning, judging
    replies, rules = {}, {}
    try:
        for case in sample.cases:
            fired.clear()
            answer = sample.answer(config, case)
            replies[case.id] = reply_of(answer)
            rules[case.id] = list(fired)
            if dump is not None:
                dump[f"{sample.name}:{case.id}"] = [
                    answer.kind,
                    answer.refused,
                    answer.text,
                    answer.note,
                    list(answer.missing),
                ]
    finally:
        reply_rules.decide, stages._learned_turn, SignalAnswerability.judge = decide, learned, judge
    return replies, rules


def bootstrap(deltas: list[int], draws: int = 2000) -> tuple[float, float]:
    """95% interval of the mean paired change, resampling questions."""
    rng = random.Random(SEED)
    n = len(deltas)
    means = sorted(sum(rng.choice(deltas) for _ in range(n)) / n for _ in range(draws))
    return means[int(0.025 * draws)], means[int(0.975 * draws) - 1]


def ablate(sample: Sample, config, dump: dict | None = None) -> dict:
    started = time.perf_counter()
    replies, rules = decided_by(sample, config, dump)
    right = {c.id: replies[c.id] in RIGHT[c.expected] for c in sample.cases}
    result = {
        "size": sample.size,
        "questions": len(sample.cases),
        "right_all_on": sum(right.values()) / len(sample.cases),
        "rules": {},
    }
    base_off = tuple(config.answer.rules_off)
    for name in reply_rules.RULE_NAMES:
        if name in base_off:
            continue
        affected = [c for c in sample.cases if name in rules[c.id]]
        off = replace(config, answer=replace(config.answer, rules_off=(*base_off, name)))
        deltas = {c.id: 0 for c in sample.cases}
        changed = []
        for case in affected:
            reply = reply_of(sample.answer(off, case))
            now = reply in RIGHT[case.expected]
            deltas[case.id] = int(now) - int(right[case.id])
            if reply != replies[case.id]:
                changed.append(f"{case.id}: {replies[case.id]} -> {reply} (gold {case.expected})")
        values = list(deltas.values())
        low, high = bootstrap(values)
        result["rules"][name] = {
            "decided": len(affected),
            "changed": len(changed),
            "effect_off": sum(values) / len(values),
            "ci95": [low, high],
            "beyond_noise": low > 0 or high < 0,
            "changes": changed,
        }
    result["seconds"] = time.perf_counter() - started
    return result


def print_table(results: dict) -> None:
    names = list(results)
    print("rule".ljust(22) + "".join(f"{n[:22]:>26}" for n in names))
    for rule in reply_rules.RULE_NAMES:
        if any(rule not in results[n]["rules"] for n in names):
            continue
        cells = []
        for n in names:
            r = results[n]["rules"][rule]
            low, high = r["ci95"]
            mark = "*" if r["beyond_noise"] else " "
            cells.append(f"{r['decided']:>3} {r['effect_off']:+.3f} [{low:+.2f},{high:+.2f}]{mark}")
        print(rule.ljust(22) + "".join(f"{c:>26}" for c in cells))
    print("(decided: questions the rule decided with all rules on; effect: change in the share of right")
    print(" replies with the rule off; [95% paired bootstrap]; *: beyond noise)")


SETS = ("genre", "clapnq", "squad2", "analyst", "mtrag", "heldout")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--preset", default="default")
    parser.add_argument("--sets", default=",".join(SETS), help=f"any of {', '.join(SETS)}")
    parser.add_argument("--clapnq-every", type=int, default=1)
    parser.add_argument("--squad-articles", type=int, default=4)
    parser.add_argument("--squad-questions", type=int, default=200)
    parser.add_argument("--analyst-distractors", type=int, default=30)
    parser.add_argument("--mtrag-per-collection", type=int, default=40)
    parser.add_argument(
        "--rules-off",
        default="",
        help="rules off in every run, the baseline included (comma-separated): e.g. turn_kind_model, "
        "to measure the rules on follow-ups as they decide them where the turn-kind model does not "
        "(an LLM answerability judge, turns.learned off)",
    )
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument("--dump", help="write every reply with all rules on here (JSON)")
    args = parser.parse_args(argv)
    config = get_preset(args.preset)
    base_off = tuple(name for name in args.rules_off.split(",") if name)
    config = replace(config, answer=replace(config.answer, rules_off=base_off))
    builders = {
        "genre": lambda: genre_sample(config),
        "heldout": lambda: genre_sample(config, "heldout"),
        "clapnq": lambda: clapnq_sample(args.clapnq_every),
        "squad2": lambda: squad_sample(args.squad_articles, args.squad_questions),
        "analyst": lambda: analyst_sample(args.analyst_distractors),
        "mtrag": lambda: mtrag_sample(args.mtrag_per_collection),
    }
    out = Path(args.out)
    results: dict = {}
    dump: dict | None = {} if args.dump else None
    report = {
        "preset": args.preset,
        "rules_off": list(config.answer.rules_off),
        "rules": reply_rules.rules_table(),
        "sets": results,
    }
    for name in args.sets.split(","):
        sample = builders[name]()
        results[sample.name] = ablate(sample, config, dump)
        if dump is not None:
            Path(args.dump).write_text(json.dumps(dump, indent=0), encoding="utf-8")
        share = results[sample.name]["right_all_on"]
        print(f"{sample.name}: {sample.size}; right with all rules on {share:.3f}", flush=True)
        out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print_table(results)


def run(args) -> None:
    """``python -m bench reply_rules``: the default samples (--quick: genre and CLAPNQ-dev only)."""
    main(["--sets", "genre,clapnq"] if args.quick else [])


if __name__ == "__main__":
    main()
