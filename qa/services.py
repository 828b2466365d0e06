"""Writes of the qa app: asking, running the pipeline's stages, storing answers.

The pipeline itself (qa.pipeline) knows nothing of Django; this module feeds
it the corpus through qa.adapters and stores what it returns. A question is
a persisted job: ``question_ask`` creates it and queues the retrieval task;
the retrieval task hands its ranked passages to the generation task through
the Question row (JSON), so generation can run on its own queue and workers.
"""

from __future__ import annotations

import logging
import time

from django.db import transaction
from django.utils import timezone

from documents.models import Corpus, Document, Sentence
from groundedqa_site.api import ClientError
from qa import clients, presets
from qa.adapters import DjangoCorpusIndex
from qa.models import Answer, AnswerSentence, Citation, Conversation, Question
from qa.pipeline import runner
from qa.pipeline.types import Answer as PipelineAnswer

logger = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 2000


def _validate(*, corpus: Corpus, text: str, preset: str) -> str:
    text = (text or "").strip()
    if not text:
        raise ClientError("The question is empty.")
    if len(text) > MAX_QUESTION_CHARS:
        raise ClientError(f"The question is longer than {MAX_QUESTION_CHARS} characters.")
    if preset not in presets.PRESET_NAMES:
        raise ClientError(f"Unknown preset {preset!r}; choose one of {', '.join(presets.PRESET_NAMES)}.")
    if not Document.objects.filter(corpus=corpus, status=Document.Status.READY).exists():
        raise ClientError(f"Corpus {corpus.name!r} has no ready documents yet.", http_status=409)
    return text


def _create_question(*, user, corpus, text, preset, conversation) -> Question:
    if conversation is not None and (conversation.corpus_id != corpus.pk or conversation.user_id != user.pk):
        raise ClientError("That conversation belongs to another corpus or user.")
    if conversation is None:
        conversation = Conversation.objects.create(user=user, corpus=corpus)
    return Question.objects.create(
        user=user,
        corpus=corpus,
        conversation=conversation,
        text=text,
        preset=preset,
        config=presets.get_preset(preset).to_dict(),
    )


def question_ask(
    *, user, corpus: Corpus, text: str, preset: str | None = None, conversation=None
) -> Question:
    """Create the job; queue its retrieval stage once the row is committed. No preset: QA_DEFAULT_PRESET."""
    preset = preset or presets.default_preset()
    text = _validate(corpus=corpus, text=text, preset=preset)
    with transaction.atomic():
        question = _create_question(
            user=user, corpus=corpus, text=text, preset=preset, conversation=conversation
        )
        from qa.tasks import retrieve_question

        question_id = question.pk
        transaction.on_commit(lambda: retrieve_question.delay(question_id))
    return question


def answer_now(
    *, corpus: Corpus, text: str, preset: str | None = None, user=None, conversation=None
) -> Question:
    """Run every stage in this process (the `ask` command and evaluation use it)."""
    preset = preset or presets.default_preset()
    from django.contrib.auth import get_user_model

    if user is None:
        user, _ = get_user_model().objects.get_or_create(username="groundedqa-cli")
    text = _validate(corpus=corpus, text=text, preset=preset)
    question = _create_question(user=user, corpus=corpus, text=text, preset=preset, conversation=conversation)
    if question_retrieve(question_id=question.pk):
        question_generate(question_id=question.pk)
    question.refresh_from_db()
    return question


def _claim(question_id: int, *, waiting_stage: str, stage: str) -> Question | None:
    """Atomically move a queued question into ``stage``; a second delivery finds nothing to claim."""
    claimed = Question.objects.filter(
        pk=question_id, status=Question.Status.QUEUED, stage=waiting_stage
    ).update(status=Question.Status.RUNNING, stage=stage, started_at=timezone.now())
    if not claimed:
        logger.info("question %s is not waiting for %s: taken, finished or deleted", question_id, stage)
        return None
    return Question.objects.select_related("corpus", "conversation").get(pk=question_id)


def _fail(question: Question, message: str) -> None:
    Question.objects.filter(pk=question.pk).update(
        status=Question.Status.FAILED,
        stage="",
        error=message,
        finished_at=timezone.now(),
        trace=question.trace,
    )


def question_retrieve(*, question_id: int) -> bool:
    """Stage 1: rewrite a follow-up, retrieve and rerank. Returns whether generation should follow."""
    question = _claim(question_id, waiting_stage="", stage="retrieval")
    if question is None:
        return False
    config = presets.config_from_dict(question.config)
    trace: dict = {"timings": {}}
    try:
        history = _conversation_history(question)
        started = time.perf_counter()
        standalone = runner.standalone_question(question.text, history, llm=clients.get_llm_or_none())
        trace["timings"]["rewrite"] = time.perf_counter() - started
        index = DjangoCorpusIndex(question.corpus)
        reranker, substitution = clients.get_reranker(config.reranker, index)
        if substitution:
            trace.setdefault("substitutions", []).append(substitution)
        retrieval = runner.retrieve_stage(
            standalone,
            index=index,
            embedder=clients.get_embedder(),
            reranker=reranker,
            config=config,
            trace=trace,
        )
    except (clients.ConfigurationError, runner.PipelineError) as exc:
        question.trace = trace
        _fail(question, str(exc))
        return False
    except Exception as exc:  # noqa: BLE001 - the job must end failed with a reason, not hang in running
        logger.exception("retrieval failed for question %s", question_id)
        question.trace = trace
        _fail(question, f"Retrieval failed: {exc}")
        return False
    Question.objects.filter(pk=question_id).update(
        standalone_text=standalone,
        corpus_version=index.version,
        retrieval=runner.retrieval_to_json(retrieval),
        trace=trace,
        stage="generation",
        status=Question.Status.QUEUED,
    )
    return True


def question_generate(*, question_id: int) -> Answer | None:
    """Stage 2: generate, cite and verify (with retries), then store the answer."""
    question = _claim(question_id, waiting_stage="generation", stage="generation")
    if question is None:
        return None
    if not question.retrieval:
        _fail(question, "Generation started before retrieval finished.")
        return None
    config = presets.config_from_dict(question.config)
    trace = question.trace or {"timings": {}}
    try:
        # The version retrieval ranked; documents deleted or replaced since drop out of it.
        index = DjangoCorpusIndex(question.corpus, version=question.corpus_version)
        retrieval = runner.retrieval_from_json(question.retrieval, index)
        answer = runner.answer_stage(
            question.standalone_text or question.text,
            retrieval,
            config=config,
            embedder=clients.get_embedder(),
            llm=clients.get_llm_or_none(),
            trace=trace,
        )
    except (clients.ConfigurationError, runner.PipelineError) as exc:
        question.trace = trace
        _fail(question, str(exc))
        return None
    except Exception as exc:  # noqa: BLE001 - reported on the job; the traceback goes to the log
        logger.exception("generation failed for question %s", question_id)
        question.trace = trace
        _fail(question, f"Generation failed: {exc}")
        return None
    return _store_answer(question, answer, trace)


def _store_answer(question: Question, result: PipelineAnswer, trace: dict) -> Answer:
    sentence_pks = {c.id for s in result.sentences for c in s.citations}
    live = set(Sentence.objects.filter(pk__in=sentence_pks).values_list("pk", flat=True))
    document_pks = dict(
        Document.objects.filter(
            corpus=question.corpus,
            external_id__in={c.document_id for s in result.sentences for c in s.citations},
        ).values_list("external_id", "pk")
    )
    with transaction.atomic():
        answer = Answer.objects.create(
            question=question,
            text=result.text,
            refused=result.refused,
            disagreement=result.disagreement,
            verified=result.verified,
            note=result.note,
            retrieved_documents=list(result.retrieved_documents),
        )
        for ordinal, sentence in enumerate(result.sentences):
            row = AnswerSentence.objects.create(
                answer=answer, ordinal=ordinal, text=sentence.text, support=sentence.support
            )
            Citation.objects.bulk_create(
                Citation(
                    answer_sentence=row,
                    ordinal=position,
                    sentence_id=cited.id if cited.id in live else None,
                    document_external_id=cited.document_id,
                    document_title=cited.document_title[:500],
                    document_pk=document_pks.get(cited.document_id),
                    label=cited.label,
                    sentence_ordinal=cited.ordinal,
                    text=cited.text,
                    start=cited.start,
                    end=cited.end,
                )
                for position, cited in enumerate(sentence.citations)
            )
        Question.objects.filter(pk=question.pk).update(
            status=Question.Status.DONE, stage="", trace=trace, finished_at=timezone.now()
        )
    return answer


def _conversation_history(question: Question) -> list[tuple[str, str]]:
    """Earlier (question, answer) turns of the same conversation, oldest first."""
    if question.conversation_id is None:
        return []
    earlier = (
        Question.objects.filter(conversation_id=question.conversation_id, created_at__lt=question.created_at)
        .select_related("answer")
        .order_by("created_at")
    )
    return [
        (q.standalone_text or q.text, getattr(q, "answer", None) and q.answer.text or "") for q in earlier
    ][-3:]
