"""Writes of the qa app: asking, running the pipeline's stages, storing answers.

The pipeline itself (qa.pipeline) knows nothing of Django; this module feeds
it the corpus through qa.adapters and stores what it returns. A question is
a persisted job: ``question_ask`` creates it and queues the retrieval task;
the retrieval task hands the run so far (``qa.pipeline.run.PipelineRun``,
ranking included) to the generation task through the Question row as
versioned JSON, so generation can run on its own queue and workers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace

from django.db import transaction
from django.utils import timezone

from documents.models import Corpus, Document, Sentence
from groundedqa_site.api import ClientError
from qa import clients, presets
from qa.adapters import DjangoCorpusIndex
from qa.models import Answer, AnswerSentence, Citation, Conversation, Question
from qa.pipeline import runner
from qa.pipeline.factory import Pipeline, build_pipeline
from qa.pipeline.run import RUN_FORMAT_VERSION, PipelineRun, load_run
from qa.pipeline.types import ScoredPassage

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
    """Run every stage in this process (the `ask` command uses it)."""
    question, _ = answer_now_with_run(
        corpus=corpus, text=text, preset=preset, user=user, conversation=conversation
    )
    return question


def answer_now_with_run(
    *, corpus: Corpus, text: str, preset: str | None = None, user=None, conversation=None
) -> tuple[Question, PipelineRun | None]:
    """``answer_now``, also returning the run (evaluation scores it; None when no stage was claimed).

    The pipeline is built once and the ranking handed straight from retrieval
    to generation: no JSON round trip and one corpus index, unlike two tasks.
    """
    preset = preset or presets.default_preset()
    from django.contrib.auth import get_user_model

    if user is None:
        user, _ = get_user_model().objects.get_or_create(username="groundedqa-cli")
    text = _validate(corpus=corpus, text=text, preset=preset)
    question = _create_question(user=user, corpus=corpus, text=text, preset=preset, conversation=conversation)
    run = None
    retrieved = _retrieve(question.pk)
    if retrieved is not None:
        pipeline, run, ranked = retrieved
        claimed = _claim(question.pk, waiting_stage="generation", stage="generation")
        if claimed is not None:
            _, run = _generate(claimed, pipeline, run, ranked)
    question.refresh_from_db()
    return question, run


def _claim(question_id: int, *, waiting_stage: str, stage: str) -> Question | None:
    """Atomically move a queued question into ``stage``; a second delivery finds nothing to claim."""
    claimed = Question.objects.filter(
        pk=question_id, status=Question.Status.QUEUED, stage=waiting_stage
    ).update(status=Question.Status.RUNNING, stage=stage, started_at=timezone.now())
    if not claimed:
        logger.info("question %s is not waiting for %s: taken, finished or deleted", question_id, stage)
        return None
    return Question.objects.select_related("corpus", "conversation").get(pk=question_id)


def _fail(question: Question, run: PipelineRun) -> None:
    Question.objects.filter(pk=question.pk).update(
        status=Question.Status.FAILED,
        stage="",
        error=run.failure.message if run.failure else "",
        finished_at=timezone.now(),
        trace=run.to_json(),
    )


def _pipeline(question: Question, *, version: int | None = None) -> Pipeline:
    """The question's preset built over the corpus at ``version`` (None: the current one)."""
    return build_pipeline(
        presets.config_from_dict(question.config),
        index=DjangoCorpusIndex(question.corpus, version=version),
        clients=clients.model_clients(),
    )


def question_retrieve(*, question_id: int) -> bool:
    """Stage 1: rewrite a follow-up, retrieve and rerank. Returns whether generation should follow."""
    return _retrieve(question_id) is not None


def _retrieve(question_id: int) -> tuple[Pipeline, PipelineRun, tuple[ScoredPassage, ...]] | None:
    """Stage 1; the pipeline, the run so far and the ranking when generation should follow."""
    question = _claim(question_id, waiting_stage="", stage="retrieval")
    if question is None:
        return None
    run = PipelineRun(question=question.text, preset=question.preset)
    try:
        pipeline = _pipeline(question)
        history = _conversation_history(question)
        started = time.perf_counter()
        standalone = runner.standalone_question(question.text, history, llm=pipeline.llm)
        run = replace(run, standalone=standalone).timed(rewrite=time.perf_counter() - started)
        run, retrieval = runner.retrieve_stage(pipeline, run)
    except (clients.ConfigurationError, runner.PipelineError) as exc:
        _fail(question, run.failed("retrieval", str(exc)))
        return None
    except Exception as exc:  # noqa: BLE001 - the job must end failed with a reason, not hang in running
        logger.exception("retrieval failed for question %s", question_id)
        _fail(question, run.failed("retrieval", f"Retrieval failed: {exc}"))
        return None
    Question.objects.filter(pk=question_id).update(
        standalone_text=standalone,
        corpus_version=pipeline.index.version,
        trace=run.to_json(),
        stage="generation",
        status=Question.Status.QUEUED,
    )
    return pipeline, run, retrieval.ranked


def question_generate(*, question_id: int) -> Answer | None:
    """Stage 2: generate, cite and verify (with retries), then store the answer."""
    question = _claim(question_id, waiting_stage="generation", stage="generation")
    if question is None:
        return None
    try:
        run = load_run(question.trace, question=question.text)
    except ValueError:  # a format this code does not know: written by newer code
        run = PipelineRun(question=question.text, preset=question.preset)
    if run.version != RUN_FORMAT_VERSION or run.retrieval is None:
        # A version 1 run in flight across the upgrade carried its ranking elsewhere; ask again.
        _fail(question, run.failed("generation", "Generation started before retrieval finished."))
        return None
    try:
        # The version retrieval ranked; documents deleted or replaced since drop out of it.
        pipeline = _pipeline(question, version=question.corpus_version)
        ranked = runner.ranking_from_run(run, pipeline.index)
    except clients.ConfigurationError as exc:
        _fail(question, run.failed("generation", str(exc)))
        return None
    except Exception as exc:  # noqa: BLE001 - reported on the job; the traceback goes to the log
        logger.exception("generation failed for question %s", question_id)
        _fail(question, run.failed("generation", f"Generation failed: {exc}"))
        return None
    answer, _ = _generate(question, pipeline, run, ranked)
    return answer


def _generate(
    question: Question, pipeline: Pipeline, run: PipelineRun, ranked: Sequence[ScoredPassage]
) -> tuple[Answer | None, PipelineRun]:
    try:
        run = runner.answer_stage(pipeline, run, ranked)
    except (clients.ConfigurationError, runner.PipelineError) as exc:
        run = run.failed("generation", str(exc))
        _fail(question, run)
        return None, run
    except Exception as exc:  # noqa: BLE001 - reported on the job; the traceback goes to the log
        logger.exception("generation failed for question %s", question.pk)
        run = run.failed("generation", f"Generation failed: {exc}")
        _fail(question, run)
        return None, run
    return _store_answer(question, run), run


def _store_answer(question: Question, run: PipelineRun) -> Answer:
    result = run.answer
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
            status=Question.Status.DONE, stage="", trace=run.to_json(), finished_at=timezone.now()
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
