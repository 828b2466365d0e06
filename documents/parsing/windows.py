"""Chunk windows are a pipeline parameter; ingestion cuts chunks with the pipeline's own function."""

from qa.pipeline.search.chunking import sentence_windows

__all__ = ["sentence_windows"]
