"""Domain errors: what a caller asked for that the domain refuses, and why.

They carry no HTTP. Each error belongs to one of a few kinds below; the REST
API (``groundedqa_site.api``) turns a kind into a status code and the UI
views into a form error, a message or a page. The other apps (qa, review)
define their own errors on the same kinds, so this module is the bottom of
the error hierarchy as documents is the bottom app layer.
"""

from __future__ import annotations


class DomainError(Exception):
    """A request the domain refuses; the message says what is wrong and how to fix it."""


class Invalid(DomainError):
    """The request itself is malformed or incomplete."""


class NotFound(DomainError):
    """What the request names does not exist (any more)."""


class Forbidden(DomainError):
    """The user may see what the request names but their role in its team does not allow this."""


class Conflict(DomainError):
    """The request is well formed but disagrees with the stored state (a name taken, a stale version)."""


class TooLarge(DomainError):
    """The request is over a configured size limit."""


class Unsupported(DomainError):
    """The request's content is of a kind we cannot handle."""


class Unavailable(DomainError):
    """A service the request needs (the job queue, say) is not answering; the operator can fix it."""


class CorpusInvalid(Invalid):
    """A corpus with no name."""


class CorpusExists(Conflict):
    """A corpus of that name exists already."""


class IngestError(Invalid):
    """A file we refuse; the message names the file and the problem."""


class UploadTooLarge(IngestError, TooLarge):
    """A file over UPLOAD_MAX_BYTES."""


class UploadUnsupported(IngestError, Unsupported):
    """A file whose type no parser reads."""


class MembershipInvalid(Invalid):
    """A membership change naming no user, an unknown user or an unknown role."""


class LastAdmin(Conflict):
    """A change that would leave a team with no admin."""
