"""Domain errors of the review app (kinds and HTTP mapping: documents.errors, groundedqa_site.api)."""

from __future__ import annotations

from documents.errors import Conflict, Invalid, NotFound


class ReviewInvalid(Invalid):
    """A review decision that is incomplete or contradicts itself."""


class AnswerGone(NotFound):
    """The answer under review was deleted meanwhile."""


class ReviewConflict(Conflict):
    """The answer changed since the reviewer loaded it; ``newer`` holds what they missed."""

    def __init__(self, *, base_version: int, current_version: int, newer: list):
        super().__init__(
            f"This answer has {current_version} decision(s) but yours was made on version {base_version}: "
            "someone reviewed it meanwhile. Read their decision and decide again on the current version."
        )
        self.base_version = base_version
        self.current_version = current_version
        self.newer = newer


class GoldCaseInvalid(Invalid):
    """A gold case that cannot be written as asked (bad split, rubric, evidence, state of the answer)."""


class BenchmarkInvalid(Invalid):
    """A benchmark with no name."""


class BenchmarkNotFound(NotFound):
    """No benchmark of that name on the user's teams' corpora."""


class BenchmarkExists(Conflict):
    """A benchmark of that name exists already."""


class BenchmarkCorpusMismatch(Conflict):
    """An import names a benchmark that lives on another corpus."""


class EvaluationInvalid(Invalid):
    """An evaluation run asked for with a bad split, limit or convention, or over no cases."""


class AnnotationInvalid(Invalid):
    """An annotation task, annotation, skip or adjudication that cannot be written as asked."""


class AssignmentConflict(Conflict):
    """The assignment is not in a state that allows this (skipping one already annotated, say)."""
