"""The embedder's memory of recent texts: what a question's stages encode twice is encoded once."""

from __future__ import annotations

import numpy as np

from qa.pipeline.config.presets import get_preset
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.runner import answer_question
from qa.pipeline.search.embedding import HashingEmbedder, RecentVectors
from qa.pipeline.search.memory_index import InMemoryCorpusIndex
from tests.qa.pipeline.test_run import DOCS


class CountingEmbedder(HashingEmbedder):
    def __init__(self):
        super().__init__()
        self.texts: list[str] = []

    def encode(self, texts):
        self.texts.extend(texts)
        return super().encode(texts)


def test_each_text_reaches_the_model_once_and_gets_the_models_own_vector():
    inner = CountingEmbedder()
    memory = RecentVectors(inner, size=3)
    first = memory.encode(["a harbour", "a crane", "a harbour"])
    again = memory.encode(["a crane", "a lighthouse"])
    assert inner.texts == ["a harbour", "a crane", "a lighthouse"]
    assert np.array_equal(first[0], first[2]) and np.array_equal(first[1], again[0])
    assert np.array_equal(again, HashingEmbedder().encode(["a crane", "a lighthouse"]))
    memory.encode(["a quay"])  # the fourth text: the least recently used one ("a harbour") goes
    memory.encode(["a harbour"])
    assert inner.texts[-2:] == ["a quay", "a harbour"]


def test_pipelines_built_on_one_embedder_share_its_memory_and_answer_as_without_it():
    inner = CountingEmbedder()
    index = InMemoryCorpusIndex(DOCS, HashingEmbedder())
    question = "What is the population of Oman?"
    plain = answer_question(
        question,
        pipeline=build_pipeline(
            get_preset("default"), index=index, clients=ModelClients(embedder=HashingEmbedder())
        ),
    )
    runs = [
        answer_question(
            question,
            pipeline=build_pipeline(get_preset("default"), index=index, clients=ModelClients(embedder=inner)),
        )
        for _ in range(2)
    ]
    assert len(inner.texts) == len(set(inner.texts))  # the second question encoded nothing anew
    assert RecentVectors.around(inner) is RecentVectors.around(inner)
    assert [run.answer.text for run in runs] == [plain.answer.text] * 2
