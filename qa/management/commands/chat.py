"""python manage.py chat --corpus NAME --user NAME [--preset P]: a conversation in the terminal.

Each line is a question; follow-ups ("and in 2019?", "what is its capital?") are
rewritten with the earlier turns before retrieval, and the rewrite is shown.
Citations are printed under each answer. Commands: /preset NAME, /clear, /help, /quit.
"""

from __future__ import annotations

import sys

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from documents.errors import DomainError
from documents.models import Corpus
from qa import presets, services
from qa.selectors import answer_presentation

HELP = """Type a question and press Enter. Follow-ups use the earlier turns.
  /preset NAME   answer with another preset (now: {preset}; /preset alone lists them)
  /clear         start a new conversation (forget the earlier turns)
  /help          this text
  /quit          leave (Ctrl-D too)"""


class Command(BaseCommand):
    help = "Talk to a corpus: questions and follow-ups with sentence citations, in this process."
    stealth_options = ("stdin",)

    def add_arguments(self, parser):
        parser.add_argument("--corpus", required=True)
        parser.add_argument("--user", required=True, help="Username the conversation is recorded under.")
        parser.add_argument(
            "--preset", default=None, choices=presets.PRESET_NAMES, help="Default: QA_DEFAULT_PRESET."
        )

    def handle(self, *args, **options):
        corpus = Corpus.objects.filter(name=options["corpus"]).first()
        if corpus is None:
            names = ", ".join(Corpus.objects.values_list("name", flat=True)) or "none yet"
            raise CommandError(f"No corpus named {options['corpus']!r} (corpora: {names}).")
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"No user named {options['user']!r}; create one or name an existing user.")
        self.session = ChatSession(
            corpus=corpus, user=user, preset=options["preset"] or presets.default_preset()
        )
        stdin = options.get("stdin") or sys.stdin
        self.stdout.write(f"Corpus {corpus.name}, preset {self.session.preset}. /help for commands.")
        while True:
            self.stdout.write("> ", ending="")
            self.stdout.flush()
            line = stdin.readline()
            if not line:  # end of input
                self.stdout.write("")
                return
            if not self.respond(line.strip()):
                return

    def respond(self, line: str) -> bool:
        """Handle one line; False ends the session."""
        if not line:
            return True
        if line.startswith("/"):
            return self.command(line)
        try:
            question = self.session.ask(line)
        except DomainError as exc:  # a refused question (too long, corpus not ready) ends no session
            self.stderr.write(f"Not asked: {exc}")
            return True
        self.stdout.write(format_turn(question))
        return True

    def command(self, line: str) -> bool:
        name, _, argument = line.partition(" ")
        argument = argument.strip()
        if name in ("/quit", "/exit"):
            return False
        if name == "/help":
            self.stdout.write(HELP.format(preset=self.session.preset))
        elif name == "/clear":
            self.session.conversation = None
            self.stdout.write("New conversation: earlier turns are forgotten.")
        elif name == "/preset" and not argument:
            self.stdout.write("Presets: " + ", ".join(presets.PRESET_NAMES))
        elif name == "/preset" and argument in presets.PRESET_NAMES:
            self.session.preset = argument
            self.stdout.write(f"Preset: {argument}.")
        elif name == "/preset":
            self.stderr.write(
                f"Unknown preset {argument!r}; choose one of {', '.join(presets.PRESET_NAMES)}."
            )
        else:
            self.stderr.write(f"Unknown command {name}; /help lists them.")
        return True


class ChatSession:
    """The conversation so far: the first answered turn starts it, /clear forgets it."""

    def __init__(self, *, corpus, user, preset: str):
        self.corpus, self.user, self.preset = corpus, user, preset
        self.conversation = None

    def ask(self, text: str):
        question = services.answer_now(
            corpus=self.corpus, text=text, preset=self.preset, user=self.user, conversation=self.conversation
        )
        self.conversation = question.conversation
        return question


def format_turn(question) -> str:
    lines = []
    if question.standalone_text and question.standalone_text != question.text:
        lines.append(f"(searched as: {question.standalone_text})")
    if question.status != question.Status.DONE:
        lines.append(f"The question failed: {question.error}")
        return "\n".join(lines)
    answer = question.answer
    if answer.kind == "underspecified":
        lines.append(f"(clarifying question) {answer.text}")
        return "\n".join(lines)
    reply = answer_presentation(answer).reply
    if reply.outcome == "refused" and not answer.refused:  # withheld by the preset's withhold_confidence
        lines.append(f"No answer. {reply.reason}")
        return "\n".join(lines)
    if reply.outcome == "low_confidence":
        lines.append(f"(this may not answer your question) {reply.reason}")
    lines.append(answer.text)
    for number, sentence in enumerate(answer.sentences.all(), start=1):
        for citation in sentence.citations.all():
            lines.append(
                f"  [{number}] {citation.document_title or citation.document_external_id}, "
                f"{citation.label}: {citation.text}"
            )
    if answer.note:
        lines.append(f"Note: {answer.note}")
    return "\n".join(lines)
