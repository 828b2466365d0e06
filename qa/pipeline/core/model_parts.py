"""The reading models the pipeline is given: built by a factory, passed in, never loaded by a stage.

``PipelineModels`` holds the spaCy taggers, the passage reader, the answerability model, the
answer-check and confidence models and the turn-kind model, each behind its Protocol
(``qa.pipeline.core.protocols``). ``build_models`` builds them from paths and numbers it is given: a
site calls it once per process with its settings (``qa.clients.pipeline_models``), and
``qa.pipeline.flow.factory.build_pipeline`` puts the result on the ``Pipeline`` the stages receive.
Nothing here reads the environment or Django settings.

``default_models`` is the same factory with the shipped files, built once per process, for the
callers that bring no site: benches and tests that call the pure functions directly, and a
``ModelClients`` built without ``models``. The reader and the taggers load on first use, so building
the models costs a few small JSON reads.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from qa.pipeline.core.protocols import (
    ConfidenceModels,
    EntityTagger,
    PartOfSpeechTagger,
    PassageReading,
    ProbabilityModel,
    TurnKindClassifier,
)


@dataclass(frozen=True)
class PipelineModels:
    """``entities`` and ``parts_of_speech`` are None where spaCy's model is not installed (callers
    keep their heuristics); ``reader`` is None where no passage reader is wanted (its signal reads 0)."""

    answerability: ProbabilityModel
    trust: ConfidenceModels
    turn_kind: TurnKindClassifier
    reader: PassageReading | None
    entities: EntityTagger | None
    parts_of_speech: PartOfSpeechTagger | None


def build_models(
    *,
    reader_weights: Path | str | None = None,
    reader_threads: int | None = None,
    answerability_path: Path | str | None = None,
    turn_kind_path: Path | str | None = None,
) -> PipelineModels:
    """The models from these files (None: the file shipped beside the module that reads it).

    ``reader_threads``: torch threads for one read (None: the reader's default, one)."""
    from qa.pipeline.checks.answerability import MODEL_PATH, load_model
    from qa.pipeline.checks.confidence import TrustModels
    from qa.pipeline.dialogue.turn_kind import load_turn_model
    from qa.pipeline.reading.entities import load_entity_tagger, load_part_of_speech_tagger
    from qa.pipeline.reading.reader import DEFAULT_THREADS, DeferredPassageReader

    answerability = answerability_path or MODEL_PATH
    threads = DEFAULT_THREADS if reader_threads is None else reader_threads
    return PipelineModels(
        answerability=load_model(answerability),
        trust=TrustModels(answerability),
        turn_kind=load_turn_model(turn_kind_path),
        reader=DeferredPassageReader(reader_weights, threads=threads),
        entities=load_entity_tagger(),
        parts_of_speech=load_part_of_speech_tagger(),
    )


@functools.cache
def default_models() -> PipelineModels:
    """``build_models()`` with the shipped files, once per process (see the module docstring)."""
    return build_models()
