"""Chunk windows are a pipeline parameter; ingestion cuts chunks with the pipeline's own functions."""

from qa.pipeline.search.chunking import section_windows, sentence_windows

__all__ = ["section_windows", "sentence_windows"]
