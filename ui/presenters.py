"""Shape loaded rows and pipeline runs for templates. No queries here: callers prefetch."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.urls import reverse
from django.utils.dateparse import parse_datetime

from qa.models import Question
from qa.pipeline.checks.answerability import ANSWER_KINDS
from qa.pipeline.checks.reply import RELATION_WORDS, label_words, sentence_label, sentence_relation
from qa.pipeline.config import preset_guide
from qa.pipeline.config.presets import PRESETS
from qa.pipeline.dialogue.turn_kind import TurnKindVerdict
from qa.pipeline.flow.combine import DecompositionStep
from qa.pipeline.flow.run import Attempt, Candidate, PipelineRun, RetrievalStep, StageRun
from qa.selectors import answer_presentation, question_run

STEPS = ("queued", "retrieval", "generation", "citation", "verification", "done")


def document_link(
    document_pk: int | None,
    labels: list[str],
    focus_ordinal: int | None = None,
    *,
    from_question: int | None = None,
) -> str | None:
    """The viewer URL: ``labels`` highlighted, ``focus_ordinal`` in view, a way back to the question."""
    if document_pk is None:
        return None
    url = reverse("document", args=[document_pk])
    params = {}
    if labels:
        params["highlight"] = ",".join(dict.fromkeys(labels))
    if from_question is not None:
        params["from"] = from_question
    if params:
        url += "?" + urlencode(params)
    if focus_ordinal is not None:
        url += f"#s-{focus_ordinal}"
    return url


@dataclass
class Marker:
    number: int
    label: str
    document_title: str
    document_external_id: str
    url: str | None
    text: str


@dataclass
class SentenceView:
    text: str
    support: str
    markers: list[Marker] = field(default_factory=list)
    # The badge (qa.pipeline.checks.reply.sentence_label): "quote", or verification's label for generated
    # text; None when the reply is not shown as an answer.
    label: str | None = None
    # Beside it, how the sentence bears on the question (qa.pipeline.checks.reply.sentence_relation).
    relation: str | None = None
    mismatch: str = ""
    # The sentence cut around the reader's exact answer span (before, span, after) for the card's
    # highlight; None without a span.
    span_parts: tuple[str, str, str] | None = None
    # The span is the reader's guess at where the answer is, not its judgement that there is one.
    span_guess: bool = False

    @property
    def label_words(self) -> str:
        return label_words(self.label, self.mismatch)

    @property
    def relation_words(self) -> str:
        return RELATION_WORDS.get(self.relation or "", "")


@dataclass
class Source:
    number: int
    document_title: str
    document_external_id: str
    label: str
    text: str
    url: str | None
    published: datetime.date | None = None  # the cited document's date, as stored when answered


@dataclass
class AnswerView:
    sentences: list[SentenceView]
    sources: list[Source]
    refused: bool
    disagreement: bool
    verified: bool
    note: str
    support_counts: dict[str, int]
    confidence_percent: int | None = None  # calibrated probability the answer is right, in percent
    kind: str = "answerable"  # or partial, underspecified (a clarifying question), unanswerable
    missing: tuple[str, ...] = ()  # what a partial answer's sources do not cover
    outcome: str = "answer"  # qa.pipeline.checks.reply's outcome: what the card shows
    outcome_reason: str = ""

    @property
    def quoted(self) -> int:
        return sum(1 for sentence in self.sentences if sentence.label == "quote")


def answer_view(answer) -> AnswerView:
    """Number each distinct cited sentence once (footnote style) and link every marker to the viewer."""
    numbers: dict[tuple, int] = {}
    sources: list[Source] = []
    sentences: list[SentenceView] = []
    back = answer.question_id
    counts = {"supported": 0, "partial": 0, "unsupported": 0}
    shown = answer_presentation(answer)
    for sentence in answer.sentences.all():
        citations = list(sentence.citations.all())
        label = sentence_label(
            sentence.support,
            generator=shown.generator,
            cited=bool(citations),
            outcome=shown.reply.outcome,
            contradicted=sentence.contradicted,
        )
        if label in counts or label == "contradicted":
            counts["unsupported" if label == "contradicted" else label] += 1
        span, shown_as_answer = shown.spans.get(sentence.text), shown.reply.outcome in ("answer", "partial")
        view = SentenceView(
            text=sentence.text,
            support=sentence.support,
            label=label,
            relation=sentence_relation(sentence.relation, outcome=shown.reply.outcome),
            mismatch=sentence.mismatch,
            span_parts=_span_parts(sentence.text, span) if shown_as_answer else None,
            span_guess=bool(shown_as_answer and span is not None and span.guess),
        )
        for citation in citations:
            key = (citation.document_external_id, citation.label)
            siblings = [c.label for c in citations if c.document_external_id == citation.document_external_id]
            url = document_link(citation.document_pk, siblings, citation.sentence_ordinal, from_question=back)
            if key not in numbers:
                numbers[key] = len(numbers) + 1
                sources.append(
                    Source(
                        number=numbers[key],
                        document_title=citation.document_title or citation.document_external_id,
                        document_external_id=citation.document_external_id,
                        label=citation.label,
                        text=citation.text,
                        published=citation.document_published,
                        url=document_link(
                            citation.document_pk,
                            [citation.label],
                            citation.sentence_ordinal,
                            from_question=back,
                        ),
                    )
                )
            view.markers.append(
                Marker(
                    number=numbers[key],
                    label=citation.label,
                    document_title=citation.document_title or citation.document_external_id,
                    document_external_id=citation.document_external_id,
                    url=url,
                    text=citation.text,
                )
            )
        sentences.append(view)
    return AnswerView(
        sentences=sentences,
        sources=sources,
        refused=answer.refused,
        disagreement=answer.disagreement,
        verified=answer.verified,
        note=answer.note,
        support_counts=counts,
        confidence_percent=round(answer.confidence * 100) if answer.confidence is not None else None,
        kind=answer.kind,
        missing=tuple(answer.missing or ()),
        outcome=shown.reply.outcome,
        outcome_reason=shown.reply.reason,
    )


def job_step(question: Question) -> str:
    """The user-facing step of a question job: queued, a stage (running, or waiting for a worker
    after the one before it), done or failed."""
    if question.status == Question.Status.DONE:
        return "done"
    if question.status == Question.Status.FAILED:
        return "failed"
    if question.stage in STEPS:
        return question.stage
    return "queued"


def steps_view(step: str, failed_stage: str = "") -> list[dict]:
    """Each step with its state (complete/current/pending/failed) for the progress indicator."""
    current = failed_stage or step
    if current not in STEPS:
        current = "queued"
    position = STEPS.index(current)
    rows = []
    for index, name in enumerate(STEPS):
        if step == "failed" and index == position:
            state = "failed"
        elif index < position or step == "done":
            state = "complete"
        elif index == position:
            state = "current"
        else:
            state = "pending"
        rows.append({"name": name, "state": state})
    return rows


# --- trace -------------------------------------------------------------------------

# The candidate table's score columns: the retrievers that ran, then fusion and the reranker.
SCORE_COLUMNS = ("bm25", "dense", "fused", "rerank")  # runs stored before retrievers were recorded
COLUMN_LABELS = {"bm25": "BM25", "dense": "Dense", "fused": "Fused", "rerank": "Reranked"}
# Pipeline order; "answer" is the whole answering stage (generation .. disagreement together).
STAGE_ORDER = (
    "rewrite",
    "retrieval",
    "rerank",
    "generation",
    "citations",
    "verification",
    "disagreement",
    "answer",
)
STAGE_NAMES = {"answer": "answering, in all", "rewrite": "follow-up rewrite"}


def score_columns(retrieval: RetrievalStep) -> tuple[str, ...]:
    """The retrievers that ran (recorded with the run since per-retriever traces), fusion, reranker."""
    if not retrieval.retrievers:
        return SCORE_COLUMNS
    names = tuple(c.retriever for c in retrieval.retrievers)
    return (*names, "fused", "rerank") if len(names) > 1 else (*names, "rerank")


def _candidates(rows: tuple[Candidate, ...], columns: tuple[str, ...] = SCORE_COLUMNS) -> list[dict]:
    return [
        {
            "rank": rank,
            "key": row.key,
            "document": row.document,
            "title": row.title,
            "score": row.score,
            "scores": [row.scores.get(name) for name in columns],
            "extra_scores": {k: v for k, v in row.scores.items() if k not in columns},
            "text": row.text,
        }
        for rank, row in enumerate(rows, start=1)
    ]


def _candidate_table(retrieval: RetrievalStep) -> tuple[list[dict], list[dict]]:
    """One table: first-stage scores, plus the reranker's score and new rank where it ran."""
    columns = score_columns(retrieval)
    first = _candidates(retrieval.candidates, columns)
    reranked = _candidates(retrieval.reranked, columns)
    rerank_by_key = {row["key"]: row for row in reranked}
    last = len(columns) - 1  # "rerank"
    for row in first:
        after = rerank_by_key.get(row["key"])
        row["rerank_rank"] = after["rank"] if after else None
        if after:
            reranked_score = after["scores"][last]
            row["scores"][last] = reranked_score if reranked_score is not None else after["score"]
            row["extra_scores"] = {**row["extra_scores"], **after["extra_scores"]}
    return first, reranked


def _span_parts(text: str, verdict) -> tuple[str, str, str] | None:
    """The sentence cut around the reader's answer span (a verdict's, or the span itself), for
    highlighting; None without a span or when the span no longer fits the text."""
    span = getattr(verdict, "span", verdict)
    if (
        span is None
        or not 0 <= span.start < span.end <= len(text)
        or text[span.start : span.end] != span.text
    ):
        return None
    return text[: span.start], span.text, text[span.end :]


def _attempt_view(attempt: Attempt, passages: dict[str, dict]) -> dict:
    verdicts = attempt.verification.verdicts if attempt.verification else ()
    sentences = [
        {
            "text": sentence.text,
            "citations": list(sentence.citations),
            "support": sentence.support or "",
            "verdict": verdicts[index] if index < len(verdicts) else None,
            "span_parts": _span_parts(sentence.text, verdicts[index] if index < len(verdicts) else None),
        }
        for index, sentence in enumerate(attempt.sentences or attempt.generation.sentences)
    ]
    return {
        "number": attempt.number,
        "outcome": attempt.outcome,
        "verified": attempt.verified,
        "passages": [
            {
                "key": key,
                "text": passages.get(key, {}).get("text", ""),
                "title": passages.get(key, {}).get("title", ""),
            }
            for key in attempt.passages
        ],
        "timings": attempt.timings,
        "generation": attempt.generation,
        "citations": attempt.citations,
        "sentences": sentences,
        "dropped": list(attempt.dropped_citation_ids),
    }


def _timing_bars(recorded: dict[str, float]) -> list[dict]:
    order = [s for s in STAGE_ORDER if s in recorded] + sorted(set(recorded) - set(STAGE_ORDER))
    longest = max((recorded[stage] for stage in order), default=0) or 1
    return [
        {
            "stage": STAGE_NAMES.get(stage, stage),
            "seconds": recorded[stage],
            "width": max(1, round(100 * recorded[stage] / longest)),
        }
        for stage in order
    ]


def trace_view(run: PipelineRun) -> dict:
    """The run, reorganised for the trace page. Stages that did not run show as empty."""
    retrieval = run.retrieval or RetrievalStep(question=run.question)
    first, reranked = _candidate_table(retrieval)
    passages = {row["key"]: row for row in first + reranked}
    answering = run.answering
    return {
        "unit": retrieval.unit,
        "skipped": retrieval.skipped,
        "score_columns": [COLUMN_LABELS.get(name, name) for name in score_columns(retrieval)],
        "retrievers": list(retrieval.retrievers),
        "candidates": first,
        "reranker": retrieval.reranker,
        "period": retrieval.period,
        "reranked": reranked,
        "documents": list(retrieval.documents),
        "attempts": [_attempt_view(a, passages) for a in answering.attempts] if answering else [],
        "outcome": answering.outcome if answering else "",
        "note": answering.note if answering else "",
        "retrieval_confidence": answering.retrieval_confidence if answering else None,
        "answer_config": answering.config if answering else None,
        "conflicts": list(answering.conflicts) if answering else [],
        "substitutions": list(run.substitutions),
        "timings": _timing_bars(run.timings),
        "raw_output": answering.raw_output if answering else "",
        "failure": run.failure,
        "stage_runs": [_stage_run_view(r) for r in run.stage_runs],
        "trust": run.trust,  # answerability, context relevance, answer check, confidence (or None)
        "conversation": run.conversation,  # how a follow-up was rewritten (None: first turn, older run)
        "decomposition": plan_view(run.decomposition),  # the plan and each part's answer (agentic)
        "turn_kind": turn_kind_view(run.turn_kind),  # a follow-up's learned reply kind (None: the rules)
        "relations": relation_rows(run.answer),
    }


def relation_rows(answer) -> list[dict]:
    """How each final answer sentence bears on the question, with the signal it was read from and,
    where the LLM judge was asked, its P(yes) or why it gave none; empty before relations were judged."""
    sentences = answer.sentences if answer is not None else ()
    return [
        {
            "text": sentence.text,
            "relation": sentence.relation,
            "score": sentence.relation_score,
            "judge": sentence.relation_judge,
            "note": sentence.relation_note,
        }
        for sentence in sentences
        if sentence.relation
    ]


def turn_kind_view(verdict: TurnKindVerdict | None) -> dict | None:
    """The learned decision on a follow-up: the reply kind, why, and p(kind) for each answer kind
    (traces stored before the four kinds have none)."""
    if verdict is None:
        return None
    return {
        "kind": verdict.kind,
        "reason": verdict.reason,
        "probabilities": list(zip(ANSWER_KINDS, verdict.probabilities, strict=False)),
    }


def plan_view(step: DecompositionStep | None) -> dict | None:
    """A split question's plan, each part beside its outcome and answer (parts still running: none)."""
    if step is None:
        return None
    records = {record.question: record for record in step.parts}
    rows = []
    for text in step.plan.parts:
        record = records.get(text)
        rows.append(
            {
                "text": text,
                "outcome": record.outcome if record else "",
                "reason": record.reason if record else "",
                "answer": record.answer.text if record and record.answer else "",
                "question_id": record.question_id if record else 0,
            }
        )
    how = {"llm": "by the LLM", "rules": "by rules, no LLM"}.get(
        step.plan.method, "not split: it asks one thing"
    )
    return {"how": how, "note": step.plan.note, "count": len(rows), "rows": rows}


def _stage_run_view(record: StageRun) -> dict:
    return {
        "stage": record.stage,
        "worker": record.worker,
        "started_at": parse_datetime(record.started_at),
        "seconds": record.seconds,
        "attempt": record.attempt,
    }


def turn_view(question: Question) -> dict:
    """One question with its job step and, when done, its answer: what _turn.html shows."""
    step = job_step(question)
    failed_stage = ""
    if step == "failed":
        failure = question_run(question).failure
        failed_stage = failure.stage if failure else "retrieval"
    answer = getattr(question, "answer", None) if step == "done" else None
    return {
        "question": question,
        "step": step,
        "steps": steps_view(step, failed_stage),
        "answer": answer_view(answer) if answer is not None else None,
        "answer_row": answer,
        "pending": step not in ("done", "failed"),
        # The plan and each part's answer, for a question that was split (the agentic preset).
        "decomposition": plan_view(question_run(question).decomposition)
        if question.config.get("decompose")
        else None,
    }


@dataclass
class Highlight:
    ordinals: set[int]
    missing: list[str]
    first: int | None


MAX_HIGHLIGHT_TOKENS = 200


def parse_highlight(labels: str, span: str, sentences) -> Highlight:
    """Which sentences to mark. Unknown labels are reported, malformed input is ignored, never a 500."""
    by_label = {}
    for sentence in sentences:
        by_label.setdefault(sentence.label, sentence.ordinal)
    ordinals: set[int] = set()
    missing = []
    for token in [t.strip() for t in labels.split(",") if t.strip()][:MAX_HIGHLIGHT_TOKENS]:
        if token in by_label:
            ordinals.add(by_label[token])
        else:
            missing.append(token)
    first_text, _, last_text = span.partition("-")
    if first_text.strip().isdigit():
        first = int(first_text)
        last = int(last_text) if last_text.strip().isdigit() else first
        known = {s.ordinal for s in sentences}
        ordinals |= {o for o in range(first, min(last, first + 5000) + 1) if o in known}
    return Highlight(ordinals=ordinals, missing=missing, first=min(ordinals) if ordinals else None)


def cited_sentence_ids(trace: dict) -> set[int]:
    """Every sentence id the attempts cite (the pipeline names sentences by their database id)."""
    return {
        cited
        for attempt in trace["attempts"]
        for sentence in attempt["sentences"]
        for cited in sentence["citations"]
    }


def attach_sentence_refs(trace: dict, refs: dict[int, dict]) -> None:
    """Give each attempt sentence's citations a label and a viewer link (ids gone since are kept bare)."""
    for attempt in trace["attempts"]:
        for sentence in attempt["sentences"]:
            sentence["cites"] = [
                {"id": cited, **refs[cited]}
                if cited in refs
                else {"id": cited, "label": f"#{cited}", "url": None}
                for cited in sentence["citations"]
            ]


def passage_url(key: str, spans: dict, document_pks: dict) -> str | None:
    """Where a traced passage lies: a chunk's sentences highlighted, or a whole document."""
    if key in spans:
        document_pk, first, last = spans[key]
        return reverse("document", args=[document_pk]) + f"?span={first}-{last}#s-{first}"
    kind, _, ident = key.partition(":")
    if kind == "document" and ident in document_pks:
        return reverse("document", args=[document_pks[ident]])
    return None


@dataclass
class ContentView:
    """A corrected answer (review.selectors.AnswerContent) shaped like AnswerView's sentences."""

    text: str
    refused: bool
    sentences: list[SentenceView]
    sources: list[Source]
    version: int | None


def content_view(content, document_pks: dict[str, int]) -> ContentView:
    numbers: dict[str, int] = {}
    sources: list[Source] = []
    sentences = []
    for sentence in content.sentences:
        view = SentenceView(text=sentence.text, support="")
        for cited in sentence.citations:
            pk = document_pks.get(cited.document_external_id)
            siblings = [
                c.label for c in sentence.citations if c.document_external_id == cited.document_external_id
            ]
            if cited.key not in numbers:
                numbers[cited.key] = len(numbers) + 1
                sources.append(
                    Source(
                        numbers[cited.key],
                        cited.document_title or cited.document_external_id,
                        cited.document_external_id,
                        cited.label,
                        cited.text,
                        document_link(pk, [cited.label]),
                    )
                )
            view.markers.append(
                Marker(
                    numbers[cited.key],
                    cited.label,
                    cited.document_title or cited.document_external_id,
                    cited.document_external_id,
                    document_link(pk, siblings),
                    cited.text,
                )
            )
        sentences.append(view)
    return ContentView(
        text=content.text,
        refused=content.refused,
        sentences=sentences,
        sources=sources,
        version=content.correction_version,
    )


def preset_groups_view() -> list[dict]:
    """The built-in presets as the ask form and the presets page explain them: grouped, recommended
    first, each with what it is for, what it needs and costs, and its full description."""
    return [
        {
            "title": group.title,
            "blurb": group.blurb,
            "presets": [
                {
                    "name": s.name,
                    "use": s.use,
                    "cost": s.cost,
                    "needs_llm": s.needs_llm,
                    "description": PRESETS[s.name].description,
                }
                for s in group.presets
            ],
        }
        for group in preset_guide.groups()
    ]
