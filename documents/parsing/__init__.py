"""Files and benchmark corpora to documents with citable sentences.

Pure Python: nothing here imports Django, so ingestion services, management
commands and benchmark importers share it and it is tested without a database.
"""

from qa.pipeline.core.segment import MAX_SENTENCE_CHARS, segment

from .benchmarks import analyst_bench_gold_ids, clapnq_passage_id, iter_analyst_bench_corpus, iter_clapnq
from .formats import SUPPORTED_EXTENSIONS, parse_bytes
from .types import EmptyDocument, ParsedDocument, ParsedSentence, ParseError, UnsupportedFileType
from .windows import section_windows, sentence_windows

__all__ = [
    "MAX_SENTENCE_CHARS",
    "SUPPORTED_EXTENSIONS",
    "EmptyDocument",
    "ParseError",
    "ParsedDocument",
    "ParsedSentence",
    "UnsupportedFileType",
    "analyst_bench_gold_ids",
    "clapnq_passage_id",
    "iter_analyst_bench_corpus",
    "iter_clapnq",
    "parse_bytes",
    "segment",
    "section_windows",
    "sentence_windows",
]
