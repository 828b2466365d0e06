"""python manage.py ask --corpus NAME --user NAME [--preset P] [--json] "QUESTION" (runs in this process)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from documents.errors import DomainError
from documents.management.users import command_user
from documents.models import Corpus
from qa import presets, services
from qa.pipeline.checks.reply import sentence_label, sentence_relation
from qa.selectors import answer_presentation


class Command(BaseCommand):
    help = "Answer a question from a corpus in this process, with sentence citations."

    def add_arguments(self, parser):
        parser.add_argument("question")
        parser.add_argument("--corpus", required=True)
        parser.add_argument(
            "--user",
            help="Username the question is asked as; it shows in that user's history. Required.",
        )
        parser.add_argument(
            "--preset", default=None, choices=presets.PRESET_NAMES, help="Default: QA_DEFAULT_PRESET."
        )
        parser.add_argument("--json", action="store_true", help="Print the answer as JSON.")

    def handle(self, *args, **options):
        user = command_user(options["user"], acts="the question is asked as that user")
        corpus = Corpus.objects.filter(name=options["corpus"]).first()
        if corpus is None:
            names = ", ".join(Corpus.objects.values_list("name", flat=True)) or "none yet"
            raise CommandError(f"No corpus named {options['corpus']!r} (corpora: {names}).")
        try:
            question = services.answer_now(
                user=user, corpus=corpus, text=options["question"], preset=options["preset"]
            )
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        if question.status != question.Status.DONE:
            raise CommandError(f"The question failed: {question.error}")
        answer = question.answer
        if options["json"]:
            self.stdout.write(json.dumps(as_json(question), indent=2, ensure_ascii=False, default=str))
            return
        reply = answer_presentation(answer).reply
        if reply.outcome == "low_confidence":
            self.stdout.write(f"This may not answer your question. {reply.reason}")
        self.stdout.write(answer.text)
        for sentence in answer.sentences.all():
            for citation in sentence.citations.all():
                self.stdout.write(f"  [{citation.document_external_id} {citation.label}] {citation.text}")
        if answer.disagreement:
            self.stdout.write(f"Note: {answer.note}")


def as_json(question) -> dict:
    answer = question.answer
    shown = answer_presentation(answer)
    return {
        "answer": answer.text,
        "outcome": shown.reply.outcome,
        "outcome_reason": shown.reply.reason,
        "refused": answer.refused,
        "disagreement": answer.disagreement,
        "verified": answer.verified,
        "confidence": answer.confidence,
        "note": answer.note,
        "sentences": [
            {
                "text": sentence.text,
                "support": sentence.support,
                "label": sentence_label(
                    sentence.support,
                    generator=shown.generator,
                    cited=bool(sentence.citations.all()),
                    outcome=shown.reply.outcome,
                    contradicted=sentence.contradicted,
                ),
                "relation": sentence_relation(sentence.relation, outcome=shown.reply.outcome),
                "mismatch": sentence.mismatch,
                "citations": [
                    {"document": c.document_external_id, "sentence": c.label, "text": c.text}
                    for c in sentence.citations.all()
                ],
            }
            for sentence in answer.sentences.all()
        ],
        "retrieved_documents": answer.retrieved_documents,
        "preset": question.config,
        "trace": question.trace,
    }
