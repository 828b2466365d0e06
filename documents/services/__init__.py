"""The writes of the documents app (HackSoft services; reads are in documents.selectors).

- ``uploads``: corpora, files checked and parsed, document versions staged, deletes;
- ``ingestion``: a staged version embedded and swapped in by a worker;
- ``reaping``: embeddings whose worker died re-queued, lost messages sent again;
- ``teams``: memberships and their roles.
"""

from documents.errors import IngestError
from documents.services.ingestion import document_embed, next_corpus_version
from documents.services.reaping import documents_reap
from documents.services.teams import membership_remove, membership_set
from documents.services.uploads import (
    EMBED_DOCUMENT_TASK,
    Refused,
    Submitted,
    UploadOutcome,
    check_upload,
    content_hash,
    corpus_create,
    corpus_delete,
    document_delete,
    document_stage,
    documents_submit,
    documents_upload,
    embed_queue,
    parse_upload,
)

__all__ = [
    "EMBED_DOCUMENT_TASK",
    "IngestError",
    "Refused",
    "Submitted",
    "UploadOutcome",
    "check_upload",
    "content_hash",
    "corpus_create",
    "corpus_delete",
    "document_delete",
    "document_embed",
    "membership_remove",
    "membership_set",
    "document_stage",
    "documents_reap",
    "documents_submit",
    "documents_upload",
    "embed_queue",
    "next_corpus_version",
    "parse_upload",
]
