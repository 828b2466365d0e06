"""Reads only the UI needs, built on the apps' own selectors (which keep team scoping)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.urls import reverse

from documents import permissions
from documents.models import Chunk, Document, Sentence, Team
from documents.selectors import corpora_for_user, document_sentences, documents_for_user
from qa.models import Answer, Conversation, Question
from qa.selectors import question_get_for_user, questions_for_user, with_answer
from review import selectors as review_selectors
from review.models import Benchmark, GoldCase, Review
from review.selectors import AnswerContent


def conversation_get_for_user(user, pk: int) -> Conversation | None:
    """The user's own conversation on a corpus they can still read, or None."""
    return Conversation.objects.filter(pk=pk, user=user, corpus__in=corpora_for_user(user)).first()


def conversation_turns(user, question: Question) -> list[Question]:
    """The question's conversation, oldest turn first, answers prefetched."""
    if question.conversation_id is None:
        return [question]
    turns = with_answer(questions_for_user(user).filter(conversation_id=question.conversation_id))
    return list(turns.order_by("created_at", "pk"))


def teams_for_user(user) -> QuerySet[Team]:
    return permissions.teams_of(user)


def passage_spans(user, corpus, keys) -> dict[str, tuple[int, int, int]]:
    """Keys "chunk:<pk>", "sentence:<pk>" of a corpus the user reads -> (document pk, first, last ordinal)."""

    def pks(kind):
        return [
            int(k.split(":", 1)[1]) for k in keys if k.startswith(f"{kind}:") and k.split(":", 1)[1].isdigit()
        ]

    readable = corpora_for_user(user).filter(pk=corpus.pk)
    spans = {}
    chunk_pks, sentence_pks = pks("chunk"), pks("sentence")
    if chunk_pks:
        rows = Chunk.objects.filter(pk__in=chunk_pks, document__corpus__in=readable).values_list(
            "pk", "document_id", "first_ordinal", "last_ordinal"
        )
        spans.update({f"chunk:{pk}": (doc, first, last) for pk, doc, first, last in rows})
    if sentence_pks:
        rows = Sentence.objects.filter(pk__in=sentence_pks, document__corpus__in=readable).values_list(
            "pk", "document_id", "ordinal"
        )
        spans.update({f"sentence:{pk}": (doc, ordinal, ordinal) for pk, doc, ordinal in rows})
    return spans


def corpus_documents(user, corpus, *, search: str = "", status: str = ""):
    """A corpus's documents with their sentence counts, for the corpus page.

    The count is a correlated subquery, so a page of 50 rows counts 50
    documents' sentences (index-only on (document, ordinal)) instead of
    grouping every sentence of the corpus before the LIMIT.
    """
    qs = documents_for_user(user).filter(corpus=corpus)
    if search:
        matches = Q(external_id__icontains=search) | Q(title__icontains=search)
        matches |= Q(filename__icontains=search)
        qs = qs.filter(matches)
    if status:
        qs = qs.filter(status=status)
    counts = (
        Sentence.objects.filter(document=OuterRef("pk")).order_by().values("document").annotate(n=Count("*"))
    )
    sentence_count = Coalesce(Subquery(counts.values("n")[:1]), Value(0), output_field=IntegerField())
    return (
        qs.defer("text", "pending_text", "pending_sentences", "embedding")
        .annotate(sentence_count=sentence_count)
        .order_by("external_id")
    )


def document_pks(user, corpus, external_ids) -> dict[str, int]:
    """external id -> pk for documents of a corpus the user reads."""
    if not external_ids:
        return {}
    return dict(
        documents_for_user(user)
        .filter(corpus=corpus, external_id__in=set(external_ids))
        .values_list("external_id", "pk")
    )


def gold_cases_from_answer(answer):
    return (
        GoldCase.objects.filter(source_answer=answer).select_related("benchmark").order_by("benchmark__name")
    )


def sentence_ids_by_reference(user, corpus, pairs) -> dict[tuple[str, str], int]:
    """(document external id, label) -> sentence id, for sentences of ``corpus`` the user reads
    (the references a reviewer types, ui.review_forms.sentence_reference)."""
    documents = {document for document, _ in pairs}
    labels = {label for _, label in pairs}
    rows = Sentence.objects.filter(
        document__corpus__in=corpora_for_user(user).filter(pk=corpus.pk),
        document__external_id__in=documents,
        label__in=labels,
    ).values_list("document__external_id", "label", "pk")
    wanted = set(pairs)
    return {(document, label): pk for document, label, pk in rows if (document, label) in wanted}


def sentence_refs(user, corpus, ids) -> dict[int, dict]:
    """Sentence id -> its document and label, for sentences of a corpus the user reads."""
    if not ids:
        return {}
    rows = Sentence.objects.filter(
        pk__in=ids, document__corpus__in=corpora_for_user(user).filter(pk=corpus.pk)
    )
    rows = rows.values_list("pk", "label", "ordinal", "document_id", "document__external_id")
    refs = {}
    for pk, label, ordinal, document_pk, external_id in rows:
        url = (
            reverse("document", args=[document_pk]) + "?" + urlencode({"highlight": label}) + f"#s-{ordinal}"
        )
        refs[pk] = {"label": f"{external_id} {label}", "url": url}
    return refs


@dataclass(frozen=True)
class ReviewPage:
    """Everything the review page shows about one answer, read in one place."""

    question: Question  # with its answer, sentences and citations prefetched
    history: list[Review]  # oldest decision first
    corrections: dict[int, AnswerContent]  # review pk -> the answer as that correction left it
    content: AnswerContent  # the answer as its latest decision left it
    document_pks: dict[str, int]  # external id -> pk, for the cited and retrieved documents
    panel_document: Document | None  # the document shown beside the answer
    panel_sentences: list[Sentence]
    panel_choices: list[tuple[str, int]]  # the cited, then retrieved, documents one can switch to
    cited_sentence_ids: set[int]
    benchmarks: QuerySet[Benchmark]  # of the answer's corpus, for "add to a benchmark"
    gold_cases: QuerySet[GoldCase]  # made from this answer

    @property
    def version(self) -> int:
        return len(self.history)

    @property
    def latest(self) -> Review | None:
        return self.history[-1] if self.history else None


def review_page(user, answer: Answer, *, requested_document: str = "") -> ReviewPage:
    """The review page's data; ``requested_document`` is a document pk the reader picked for the panel."""
    question = question_get_for_user(user, answer.question_id)
    corpus = question.corpus
    history = list(review_selectors.review_history(answer))
    content = review_selectors.answer_current_content(answer)
    cited_ids = [c.document_external_id for s in content.sentences for c in s.citations]
    retrieved = list(answer.retrieved_documents or [])[:10]
    pks = document_pks(user, corpus, cited_ids + retrieved)
    # The panel: the document asked for, else the first cited, else the top retrieved one.
    panel_choices = [(eid, pks[eid]) for eid in dict.fromkeys(cited_ids + retrieved) if eid in pks]
    readable = documents_for_user(user).filter(corpus=corpus)
    panel_document = None
    if requested_document.isdigit():
        panel_document = readable.filter(pk=int(requested_document)).first()
    if panel_document is None and panel_choices:
        panel_document = readable.filter(pk=panel_choices[0][1]).first()
    return ReviewPage(
        question=question,
        history=history,
        corrections={
            r.pk: review_selectors.review_content(r, answer=answer)
            for r in history
            if r.action == Review.Action.CORRECT
        },
        content=content,
        document_pks=pks,
        panel_document=panel_document,
        panel_sentences=list(document_sentences(panel_document)) if panel_document else [],
        panel_choices=panel_choices,
        cited_sentence_ids={c.sentence_id for s in content.sentences for c in s.citations if c.sentence_id},
        benchmarks=review_selectors.benchmarks_for_user(user).filter(corpus=corpus),
        gold_cases=gold_cases_from_answer(answer),
    )


def sentence_document_pks(corpus, sentence_ids) -> dict[int, int]:
    """Sentence pk -> its document's pk, for sentences of ``corpus`` (a cited sentence's viewer link)."""
    rows = Sentence.objects.filter(pk__in=set(sentence_ids), document__corpus=corpus)
    return dict(rows.values_list("pk", "document_id"))
