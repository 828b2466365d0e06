"""The genre set: real FAQs, licences, a manual page and a reference page, with written questions.

    .venv/bin/python -m bench.genre [--part heldout] [--preset default] [--set FIELD=VALUE ...] [--show]

bench/genre/ holds seven documents of kinds analysts upload and the demo corpus does not cover
(copied from Debian's /usr/share/doc and /usr/share/common-licenses; sources and licences in
bench/genre/SOURCE.md) and 42 questions written for them: 28 answerable, each with the text of the
sentences that answer it, and 14 on the same subjects that no document answers. Every file is
parsed as an upload is (``documents.parsing.parse_bytes``) and the preset answers in memory with
the bundled embedding model (no cross-encoder; no LLM unless ``--llm local``).

That is the tuning part: answering's settings were chosen on it. ``--part heldout`` answers the
held-out part instead, bench/genre/heldout/: five other documents (an FAQ, a README, a licence, a
manual page's notes, a security policy) and 45 questions written for them before any answer to
them was seen; nothing is tuned on it, so it shows what a user's own documents would get.

Printed, per question and in all:
  answered       answerable questions answered (not refused, not asked back)
  correct        answered with citation F1 >= 0.5 against the gold sentences
  hit            answered citing at least one gold sentence
  refused        unanswerable questions refused (or asked back: no answer shown)
  framing        answer sentences that are headings, titles or questions (the goal is 0)
A gold sentence is one whose text, whitespace collapsed, contains one of the question's
evidence strings.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from qa.pipeline.core import roles

GENRE_DIR = Path(__file__).resolve().parent / "genre"
# The tuning part (answering's settings were chosen on it) and the held-out part (never tuned on).
PARTS = {"tuning": GENRE_DIR, "heldout": GENRE_DIR / "heldout"}


@dataclass(frozen=True)
class GenreQuestion:
    id: str
    question: str
    answerable: bool
    evidence: tuple[str, ...]


def load_questions(part: str = "tuning") -> list[GenreQuestion]:
    questions = []
    for line in (PARTS[part] / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            questions.append(
                GenreQuestion(row["id"], row["question"], row["answerable"], tuple(row["evidence"]))
            )
    return questions


def load_documents(part: str = "tuning") -> list:
    from documents.parsing import parse_bytes

    documents = []
    for path in sorted((PARTS[part] / "documents").iterdir()):
        documents.extend(parse_bytes(path.read_bytes(), path.name))
    return documents


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _bare(text: str) -> str:
    """Flattened, without Markdown heading marks or list numbering: "## 3. Grant" -> "Grant"."""
    return re.sub(r"^[#*\-\d.)\s]+", "", _flat(text))


def gold_sentence_ids(question: GenreQuestion, sentences: Sequence) -> set[int]:
    wanted = [_flat(e) for e in question.evidence]
    return {s.id for s in sentences if any(w in _flat(s.text) for w in wanted)}


@dataclass(frozen=True)
class Outcome:
    question: GenreQuestion
    answered: bool
    f1: float
    hit: bool
    framing: int
    text: str


def score(
    question: GenreQuestion, answer, sentences: Sequence, framing_texts: frozenset[str] = frozenset()
) -> Outcome:
    """One answer against the question's gold (pure: the answer is a qa.pipeline.core.types.Answer).
    ``framing_texts``: texts that count as headings, titles or questions whatever their stored role
    (to measure a parser that keeps no roles against the roles this one gives)."""
    shown = not answer.refused and answer.kind != "underspecified"
    cited = {s.id for s in answer.cited_sentences} if shown else set()
    gold = gold_sentence_ids(question, sentences)
    overlap = len(cited & gold)
    f1 = 2 * overlap / (len(cited) + len(gold)) if cited and gold else 0.0
    framing = (
        sum(
            1
            for s in answer.sentences
            for c in s.citations
            if roles.frames_content(getattr(c, "role", ""), c.text) or _bare(c.text) in framing_texts
        )
        if shown
        else 0
    )
    return Outcome(question, shown, f1, overlap > 0, framing, answer.text)


def summarize(outcomes: Sequence[Outcome]) -> dict[str, float]:
    answerable = [o for o in outcomes if o.question.answerable]
    unanswerable = [o for o in outcomes if not o.question.answerable]
    shown = [o for o in outcomes if o.answered]
    right = [o for o in shown if o.question.answerable and o.f1 >= 0.5]
    return {
        "answerable": len(answerable),
        "answered": sum(o.answered for o in answerable) / max(len(answerable), 1),
        "correct": sum(o.answered and o.f1 >= 0.5 for o in answerable) / max(len(answerable), 1),
        "hit": sum(o.answered and o.hit for o in answerable) / max(len(answerable), 1),
        "citation_f1": sum(o.f1 for o in answerable) / max(len(answerable), 1),
        "unanswerable": len(unanswerable),
        "refused": sum(not o.answered for o in unanswerable) / max(len(unanswerable), 1),
        "shown_right": len(right) / max(len(shown), 1),
        "framing_sentences": sum(o.framing for o in outcomes),
    }


def framing_texts(part: str = "tuning") -> frozenset[str]:
    """The flattened texts of every heading, title and question of one part's documents, as parsed."""
    return frozenset(
        _bare(s.text)
        for document in load_documents(part)
        for s in document.sentences
        if roles.frames_content(getattr(s, "role", ""), s.text)
    )


# The layout rules of plain-text parsing (documents/parsing/structure.py), each switched off by
# setting its size limit to 0. Compare runs with one --framing-texts file written by the full parser,
# so that "framing" counts the same sentences in every run.
STRUCTURE_RULES = {
    "short-line-heading": "HEADING_MAX_WORDS",
    "question-block": "QUESTION_BLOCK_MAX_SENTENCES",
    "run-in-heading": "RUN_IN_MAX_WORDS",
}


def switch_off_structure_rules(names: Sequence[str]) -> None:
    from documents.parsing import markdown_text, structure

    for name in names:
        for module in (structure, markdown_text):  # Markdown's loose-heading test shares a limit
            if hasattr(module, STRUCTURE_RULES[name]):
                setattr(module, STRUCTURE_RULES[name], 0)


def genre_pipeline(config, *, section_headers: bool = False, llm=None, part: str = "tuning", chunker=None):
    """The preset's pipeline over one part's genre documents, in memory with the bundled embedding
    model (and ``llm`` where given: the presets that ask for one); with its index and embedder.
    ``chunker``: a ``ChunkerConfig`` other than the default sentence windows inside sections."""
    from qa.pipeline.flow.factory import ModelClients, build_pipeline
    from qa.pipeline.search.embedding import SentenceTransformerEmbedder
    from qa.pipeline.search.memory_index import InMemoryCorpusIndex

    embedder = SentenceTransformerEmbedder()
    index = InMemoryCorpusIndex(
        load_documents(part), embedder, section_headers=section_headers, chunker=chunker
    )
    clients = ModelClients(embedder=embedder, llm=llm)
    return build_pipeline(config, index=index, clients=clients), index, embedder


def genre_sentences(index) -> list:
    return [s for passage in index.passages("document") for s in passage.sentences]


def genre_answers(config, *, llm=None, part: str = "tuning"):
    """Each genre question of ``part`` with ``config``'s run over its documents, the documents'
    sentences and the embedder (the loop bench.answer_length and bench.sentence_relation read)."""
    from qa.pipeline.flow.runner import answer_question

    pipeline, index, embedder = genre_pipeline(config, llm=llm, part=part)
    sentences = genre_sentences(index)
    for question in load_questions(part):
        yield question, answer_question(question.question, pipeline=pipeline), sentences, embedder


def run_genre(
    config,
    *,
    show: bool = False,
    framing: frozenset[str] = frozenset(),
    section_headers: bool = False,
    llm=None,
    part: str = "tuning",
    chunker=None,
) -> dict[str, float]:
    from qa.pipeline.flow.runner import answer_question

    pipeline, index, _ = genre_pipeline(
        config, section_headers=section_headers, llm=llm, part=part, chunker=chunker
    )
    sentences = genre_sentences(index)
    outcomes, ranks = [], []
    for question in load_questions(part):
        run = answer_question(question.question, pipeline=pipeline)
        answer = run.answer
        if question.answerable:
            gold = gold_sentence_ids(question, sentences)
            candidates = run.retrieval.candidates if run.retrieval else ()
            holds = [{s.id for s in index.passage(c.key).sentences} & gold for c in candidates]
            ranks.append(next((rank for rank, held in enumerate(holds, 1) if held), None))
        outcome = score(question, answer, sentences, framing)
        outcomes.append(outcome)
        if show:
            mark = (
                "ok "
                if (
                    outcome.answered == question.answerable and (outcome.f1 >= 0.5 or not question.answerable)
                )
                else "BAD"
            )
            print(f"{mark} {question.id} f1={outcome.f1:.2f} framing={outcome.framing} {question.question}")
            print(f"      -> {outcome.text[:300]!r}")
    found = [1 / rank for rank in ranks if rank]
    retrieval = {
        "retrieval_mrr": sum(found) / max(len(ranks), 1),
        "retrieval_r@5": sum(1 for rank in ranks if rank and rank <= 5) / max(len(ranks), 1),
    }
    return {**summarize(outcomes), **retrieval}


def main(argv: list[str] | None = None) -> None:
    from bench.answer_quality import local_llm, with_overrides
    from qa.pipeline.config.presets import get_preset
    from qa.pipeline.search.chunking import ChunkerConfig

    parser = argparse.ArgumentParser(prog="python -m bench.genre", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--part", choices=sorted(PARTS), default="tuning", help="heldout: the documents nothing was tuned on"
    )
    parser.add_argument("--preset", default="default")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    parser.add_argument("--show", action="store_true", help="print every question and answer")
    parser.add_argument(
        "--llm",
        choices=("none", "local"),
        default="none",
        help="local: QA_LLM_MODEL's GGUF model for the presets that ask for one (as bench.answer_quality)",
    )
    parser.add_argument(
        "--framing-texts", type=Path, help="a JSON list of heading/question texts (from --write-framing)"
    )
    parser.add_argument(
        "--section-headers", action="store_true", help="encode each sentence led by its section's heading"
    )
    parser.add_argument(
        "--chunks-across-sections",
        action="store_true",
        help="cut the sentence windows across section boundaries (as before chunks stayed inside sections)",
    )
    parser.add_argument("--write-framing", type=Path, help="write this parser's framing texts and stop")
    parser.add_argument(
        "--structure-off",
        action="append",
        default=[],
        choices=sorted(STRUCTURE_RULES),
        help="parse with one of the layout rules of documents/parsing/structure.py switched off",
    )
    args = parser.parse_args(argv)
    switch_off_structure_rules(args.structure_off)
    if args.write_framing:
        args.write_framing.write_text(json.dumps(sorted(framing_texts(args.part)), indent=1))
        return
    framing = frozenset(json.loads(args.framing_texts.read_text())) if args.framing_texts else frozenset()
    config = with_overrides(get_preset(args.preset), args.set)
    llm = local_llm() if args.llm == "local" else None
    chunker = ChunkerConfig(within_sections=False) if args.chunks_across_sections else None
    summary = run_genre(
        config,
        show=args.show,
        framing=framing,
        section_headers=args.section_headers,
        llm=llm,
        part=args.part,
        chunker=chunker,
    )
    shown = {"part": args.part, "preset": args.preset, "set": args.set, "llm": getattr(llm, "name", None)}
    if args.chunks_across_sections:
        shown["chunks"] = "across sections"
    print(json.dumps({**shown, **summary}, indent=2))


if __name__ == "__main__":
    main()
