"""Reads only the UI needs, built on the apps' own selectors (which keep team scoping)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.db.models import QuerySet
from django.urls import reverse

from documents.models import Team
from documents.selectors import corpora_for_user
from qa.models import Conversation, Question
from qa.selectors import questions_for_user, with_answer


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
    if user.is_superuser:
        return Team.objects.all()
    return Team.objects.filter(members=user)


def passage_spans(user, corpus, keys) -> dict[str, tuple[int, int, int]]:
    """Keys "chunk:<pk>", "sentence:<pk>" of a corpus the user reads -> (document pk, first, last ordinal)."""
    from documents.models import Chunk, Sentence

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
    from django.db.models import Count, IntegerField, OuterRef, Q, Subquery, Value
    from django.db.models.functions import Coalesce

    from documents.models import Sentence
    from documents.selectors import documents_for_user

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
    from documents.selectors import documents_for_user

    if not external_ids:
        return {}
    return dict(
        documents_for_user(user)
        .filter(corpus=corpus, external_id__in=set(external_ids))
        .values_list("external_id", "pk")
    )


def gold_cases_from_answer(answer):
    from review.models import GoldCase

    return (
        GoldCase.objects.filter(source_answer=answer).select_related("benchmark").order_by("benchmark__name")
    )


def sentence_refs(user, corpus, ids) -> dict[int, dict]:
    """Sentence id -> its document and label, for sentences of a corpus the user reads."""
    from documents.models import Sentence

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
