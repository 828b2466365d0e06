"""Reads of the documents app; who reads what is documents.permissions's to say."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet
from django.http import Http404

from documents import permissions
from documents.models import Corpus, Document, EmbeddingSpace, Sentence, Team


def corpora_for_user(user) -> QuerySet[Corpus]:
    """Corpora the user may read (documents.permissions decides which)."""
    return permissions.readable_corpora(user)


def corpus_get_for_user(user, *, pk=None, name=None) -> Corpus:
    """The corpus, or Http404 when it does not exist or the user may not see it."""
    qs = corpora_for_user(user)
    lookup = {"pk": pk} if pk is not None else {"name": name}
    corpus = qs.filter(**lookup).first()
    if corpus is None:
        raise Http404("No such corpus.")
    return corpus


def team_get_for_user(user, ref: str) -> Team:
    """One of the user's teams by id or name, or Http404."""
    teams = permissions.teams_of(user)
    team = (teams.filter(pk=int(ref)) if ref.isdigit() else teams.filter(name=ref)).first()
    if team is None:
        raise Http404("No such team among yours.")
    return team


def corpora_with_counts(user) -> QuerySet[Corpus]:
    # Ordered, so that pages of the API's list are stable.
    return (
        corpora_for_user(user)
        .select_related("embedding_space")
        .annotate(
            document_count=Count("documents", distinct=True),
            ready_count=Count("documents", filter=Q(documents__status=Document.Status.READY), distinct=True),
        )
        .order_by("name")
    )


def documents_in_progress_for_user(user) -> bool:
    """Whether a document of the user's corpora is still being read (queued, parsing, embedding)."""
    finished = (Document.Status.READY, Document.Status.FAILED)
    return Document.objects.filter(corpus__in=corpora_for_user(user)).exclude(status__in=finished).exists()


def documents_for_user(user) -> QuerySet[Document]:
    return Document.objects.filter(corpus__in=corpora_for_user(user)).select_related("corpus")


def document_get_for_user(user, pk) -> Document:
    document = documents_for_user(user).filter(pk=pk).first()
    if document is None:
        raise Http404("No such document.")
    return document


def document_sentences(document: Document) -> QuerySet[Sentence]:
    return Sentence.objects.filter(document=document).only(
        "id", "ordinal", "label", "text", "start", "end", "role", "section", "page"
    )


def corpus_progress(corpus: Corpus) -> dict[str, int]:
    counts = dict(
        Document.objects.filter(corpus=corpus)
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    return {status: counts.get(status, 0) for status in Document.Status.values}


def corpus_embedding_jobs(corpus: Corpus, limit: int = 20) -> list[EmbeddingSpace]:
    """The corpus's re-embeddings, newest first."""
    return list(EmbeddingSpace.objects.filter(corpus=corpus).order_by("-created_at", "-pk")[:limit])
