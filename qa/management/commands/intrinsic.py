"""python manage.py intrinsic {cite,answerability,context-relevance,answer-check} --corpus NAME [--json] ...

The intrinsics on their own, as the REST API offers them (/api/corpora/{id}/...), in this process.
"""

from __future__ import annotations

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from documents.errors import DomainError
from documents.models import Corpus
from qa import intrinsics, presets


class Command(BaseCommand):
    help = (
        "Run one intrinsic over a corpus: cite a text written elsewhere, judge a question's answerability "
        "or its passages' relevance, or check an answer against the corpus and the question."
    )

    def add_arguments(self, parser):
        kinds = parser.add_subparsers(dest="kind", required=True)
        cite = kinds.add_parser("cite", help="Per sentence of TEXT: supporting corpus sentences and a label.")
        cite.add_argument("text", help="The text, or - to read it from standard input.")
        for name in ("answerability", "context-relevance", "answer-check"):
            sub = kinds.add_parser(name)
            sub.add_argument("question")
            if name == "answer-check":
                sub.add_argument("answer", help="The answer, or - to read it from standard input.")
            sub.add_argument(
                "--preset",
                help="A built-in preset (" + ", ".join(presets.PRESET_NAMES) + ") or a preset of the "
                "corpus's team. Default: QA_DEFAULT_PRESET.",
            )
        for sub in kinds.choices.values():
            sub.add_argument("--corpus", required=True, help="Corpus name.")
            sub.add_argument("--json", action="store_true", help="Print the result as JSON.")

    def handle(self, *args, **options):
        corpus = Corpus.objects.filter(name=options["corpus"]).first()
        if corpus is None:
            names = ", ".join(Corpus.objects.values_list("name", flat=True)) or "none yet"
            raise CommandError(f"No corpus named {options['corpus']!r} (corpora: {names}).")
        kind = options["kind"]
        try:
            data = self._run(kind, corpus, options)
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(data, indent=2, ensure_ascii=False))
        elif kind == "context-relevance":
            for p in data["passages"]:
                self.stdout.write(f"{p['rank']:>2}. {p['label']:<10} {p['document']}: {p['text'][:100]}")
        else:
            self._write_verdicts(data)

    def _run(self, kind: str, corpus: Corpus, options: dict) -> dict:
        if kind == "cite":
            return intrinsics.cite_data(corpus=corpus, text=self._text(options["text"]))
        question, preset = options["question"], options["preset"]
        if kind == "answer-check":
            answer = self._text(options["answer"])
            return intrinsics.answer_check_data(
                corpus=corpus, question=question, answer=answer, preset=preset
            )
        if kind == "answerability":
            return intrinsics.answerability_data(corpus=corpus, question=question, preset=preset)
        return intrinsics.context_data(corpus=corpus, question=question, preset=preset)

    @staticmethod
    def _text(value: str) -> str:
        return sys.stdin.read() if value == "-" else value

    def _write_verdicts(self, data: dict) -> None:
        if "answerability" in data:
            verdict = data["answerability"]
            self.stdout.write(
                f"answerability: {verdict['kind']} (p {verdict['probability']:.3f}): {verdict['reason']}"
            )
        if "check" in data:
            check = data["check"]
            addresses = (
                "addresses the question" if check["addresses_question"] else "does NOT address the question"
            )
            self.stdout.write(f"answer: {addresses} (p {check['probability']:.3f}): {check['reason']}")
        for sentence in data.get("sentences", ()):
            label = sentence["label"].replace("_", " ")
            self.stdout.write(f"[{label}, risk {sentence['risk']:.2f}] {sentence['text']}")
            for c in sentence["citations"]:
                self.stdout.write(f"    [{c['document_id']} {c['label']}] {c['text']}")
