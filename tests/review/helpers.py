"""Builders for the review tests: documents with labelled sentences, answers, API clients, fakes."""

from __future__ import annotations

import numpy as np
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from documents.models import EMBEDDING_DIM, Document, Sentence
from qa.models import Answer, AnswerSentence, Citation, Question
from qa.pipeline.core.types import SUPPORTED, SourceSentence
from qa.pipeline.core.types import Answer as PipelineAnswer
from qa.pipeline.core.types import AnswerSentence as PipelineSentence
from qa.pipeline.flow.run import PipelineRun

OMAN = [
    "Oman was an important trading power in the Indian Ocean.",
    "The Portuguese held Muscat from 1507 to 1650.",
    "Sultan Qaboos came to power in 1970.",
    "He ruled until his death in 2020.",
]
PORT = [
    "The port handled 4.2 million containers in 2024.",
    "The authority employed 1,850 staff.",
]

# The "tiny" benchmark (tests/review/conftest.py) and scripted systems answering it:
# question -> (retrieved external ids, [(answer sentence, [(document, label)])], refused).
MUSCAT = "Who held Muscat?"
STAFF = "How many staff does the port authority employ?"
GDP = "What will Oman's GDP be in 2030?"

PERFECT = {
    MUSCAT: (["oman", "port"], [("The Portuguese held Muscat.", [("oman", "S2")])], False),
    STAFF: (["oman", "port"], [("It employed 4.2 million.", [("port", "S1")])], False),
    GDP: (["oman"], [], True),
}
SHIFTED = {
    MUSCAT: (["port", "oman"], [("Sultan Qaboos.", [("oman", "S3")])], False),
    STAFF: (["port"], [("It employed 1,850 staff.", [("port", "S2")])], False),
    GDP: (["oman"], [], True),
}
PERFECT_PORT = {STAFF: (["port"], [("It handled 4.2 million containers.", [("port", "S1")])], False)}


def client_for(user) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def make_document(corpus, external_id: str, sentences: list[str], *, labels=None) -> Document:
    """A ready document with labelled sentences (S1, S2 ... unless given) and placeholder vectors."""
    text = " ".join(sentences)
    document = Document.objects.create(
        corpus=corpus, external_id=external_id, title=external_id, text=text, status=Document.Status.READY
    )
    position = 0
    vector = np.zeros(EMBEDDING_DIM, dtype=np.float32)
    vector[0] = 1.0
    for ordinal, sentence in enumerate(sentences):
        Sentence.objects.create(
            document=document,
            ordinal=ordinal,
            label=labels[ordinal] if labels else f"S{ordinal + 1}",
            text=sentence,
            start=position,
            end=position + len(sentence),
            embedding=vector,
        )
        position += len(sentence) + 1
    return document


def sentence(document: Document, label: str) -> Sentence:
    return Sentence.objects.get(document=document, label=label)


def make_answer(
    *,
    corpus,
    user,
    question: str = "Who held Muscat, and until when?",
    parts: list[tuple[str, list[Sentence]]] | None = None,
    refused: bool = False,
    preset: str = "default",
    retrieved: list[str] | None = None,
    verified: bool = False,
    confidence: float | None = None,
) -> Answer:
    """A finished question and its answer; ``parts`` are (answer sentence, cited Sentence rows)."""
    parts = parts or []
    q = Question.objects.create(
        user=user,
        corpus=corpus,
        text=question,
        preset=preset,
        status=Question.Status.DONE,
        trace={"timings": {"retrieval": 0.02, "generation": 0.05}},
    )
    answer = Answer.objects.create(
        question=q,
        text=" ".join(text for text, _ in parts) or "Insufficient evidence.",
        refused=refused,
        verified=verified,
        retrieved_documents=retrieved or [],
        confidence=confidence,
    )
    for ordinal, (text, cited) in enumerate(parts):
        row = AnswerSentence.objects.create(
            answer=answer, ordinal=ordinal, text=text, support=AnswerSentence.Support.SUPPORTED
        )
        for position, source in enumerate(cited):
            Citation.objects.create(
                answer_sentence=row,
                ordinal=position,
                sentence=source,
                document_external_id=source.document.external_id,
                document_title=source.document.title,
                document_pk=source.document_id,
                label=source.label,
                sentence_ordinal=source.ordinal,
                text=source.text,
                start=source.start,
                end=source.end,
            )
    return answer


def scripted_run(answer: Answer, parts: list[tuple[str, list[Sentence]]]) -> PipelineRun:
    """The pipeline run that would have produced ``answer`` (what evaluation scores)."""
    sentences = tuple(
        PipelineSentence(
            text,
            tuple(
                SourceSentence(
                    s.pk, s.document.external_id, s.document.title, s.ordinal, s.label, s.text, s.start, s.end
                )
                for s in cited
            ),
            SUPPORTED,
        )
        for text, cited in parts
    )
    result = PipelineAnswer(
        sentences=sentences or (PipelineSentence(answer.text, ()),),
        refused=answer.refused,
        verified=answer.verified,
        retrieved_documents=tuple(answer.retrieved_documents),
    )
    question = answer.question
    return PipelineRun(
        question=question.text,
        preset=question.preset,
        answer=result,
        timings={"retrieval": 0.02, "generation": 0.05},
    )


class ScriptedAnswers:
    """An answer function for evaluation runs: answers each question as scripted, persisting it like qa does.

    ``script`` maps question text to (retrieved external ids, [(answer sentence, [(doc, label)])], refused).
    """

    def __init__(self, script: dict, user):
        self.script = script
        self.user = user
        self.asked: list[tuple[str, str]] = []

    def __call__(self, *, corpus, text, preset, user=None):
        from documents.models import Document

        self.asked.append((text, preset))
        retrieved, parts, refused = self.script[text]
        rows = []
        for answer_text, cited in parts:
            sources = [
                Sentence.objects.get(
                    document=Document.objects.get(corpus=corpus, external_id=doc), label=label
                )
                for doc, label in cited
            ]
            rows.append((answer_text, sources))
        answer = make_answer(
            corpus=corpus,
            user=user or self.user,
            question=text,
            parts=rows,
            refused=refused,
            preset=preset,
            retrieved=retrieved,
        )
        return answer.question, scripted_run(answer, rows)
