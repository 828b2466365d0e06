"""Writes of the review app: keyword-only functions, one transaction each, validation first.

- ``reviews``: accept / flag / correct an answer, with the stale-version check.
- ``gold``: gold cases from reviewed answers and annotators; revisions.
- ``benchmarks``: create and import benchmarks.
- ``evaluation``: evaluation runs over a benchmark with a QA preset.
"""
