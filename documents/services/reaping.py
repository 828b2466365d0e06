"""The reaper's side of ingestion: embeddings whose worker died, and messages that were lost."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from documents.models import Document
from documents.services.ingestion import fail_version
from documents.services.uploads import send_embed
from groundedqa_site import jobs


def documents_reap(*, now=None) -> int:
    """Re-queue embeddings whose worker died (lease expired), fail those that died too often, resend."""
    now = now or timezone.now()
    lease = timedelta(seconds=settings.JOB_LEASE_SECONDS)
    expired = Document.objects.filter(
        Q(lease_expires_at__lt=now) | Q(lease_expires_at__isnull=True, updated_at__lt=now - lease),
        status__in=[Document.Status.PARSING, Document.Status.EMBEDDING],
    )
    touched = 0
    rows = expired.values_list("pk", "pending_hash", "attempts", "lease_owner", "bulk")
    for pk, digest, attempts, owner, bulk in rows:
        if jobs.attempts_exhausted(attempts):
            reason = (
                f"Embedding stopped its worker {attempts} times (killed, out of memory or restarted), "
                "so it was given up; upload the file again to retry."
            )
            touched += fail_version(pk, digest, reason, owner=owner) is not None
            continue
        requeued = Document.objects.filter(
            pk=pk,
            pending_hash=digest,
            lease_owner=owner,
            status__in=[Document.Status.PARSING, Document.Status.EMBEDDING],
        ).update(
            status=Document.Status.QUEUED,
            progress=0,
            resend_at=jobs.lease_until(now),
            updated_at=now,
            **jobs.RELEASED,
        )
        if requeued:
            # Its message went with the worker: send it now, not behind the lane's waiting work.
            send_embed(pk, digest, bulk=bulk)
            touched += 1
    return touched + _resend_lost(now)


def _resend_lost(now) -> int:
    """Send again the queued documents whose message seems lost: never claimed, and their lane
    (uploads, or bulk imports) has no document being embedded and none finished within a lease.

    A lane at work is consuming its queue, so a document waiting there is only
    waiting its turn: resending every queued document of a 787-document import
    each lease would flood the queue with copies. A lane is at work, too, in the
    moment between one document ending and its worker claiming the next: taken
    for idle there, most of an import was sent again four times in seven minutes
    (bench busy). Once nothing in the lane has moved for a lease and a document
    is still queued, its message is gone. The pause before the next resend grows
    with the time it has waited, for a lane whose worker is down.
    """
    lease = timedelta(seconds=settings.JOB_LEASE_SECONDS)
    busy = set(
        Document.objects.filter(
            Q(status__in=[Document.Status.PARSING, Document.Status.EMBEDDING], lease_expires_at__gte=now)
            | Q(status__in=[Document.Status.READY, Document.Status.FAILED], updated_at__gte=now - lease)
        ).values_list("bulk", flat=True)
    )
    due = (
        Document.objects.filter(status=Document.Status.QUEUED, resend_at__lte=now)
        .exclude(pending_hash="")
        .exclude(bulk__in=busy)
    )
    sent = 0
    for pk, digest, bulk, queued_at in due.values_list("pk", "pending_hash", "bulk", "updated_at"):
        pause = max(lease, now - queued_at)
        if Document.objects.filter(pk=pk, pending_hash=digest, status=Document.Status.QUEUED).update(
            resend_at=now + pause
        ):
            send_embed(pk, digest, bulk=bulk)
            sent += 1
    return sent
