"""LLM pairwise reranking: the tournament's prompt and its reading of replies, against the fake
HTTP server (an OpenAI-compatible client, as in production), and its place in the presets."""

from __future__ import annotations

import json
import re

from qa.pipeline.config.presets import get_preset
from qa.pipeline.core.llm import OpenAICompatibleLLM
from qa.pipeline.core.types import ScoredPassage
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.runner import answer_question
from qa.pipeline.search.embedding import HashingEmbedder
from qa.pipeline.search.pairwise import LLMPairwiseReranker, parse_choice
from tests.qa.pipeline.answering_fakes import make_passage
from tests.qa.pipeline.test_llm_clients import RECORDED_COMPLETION, FakeChatServer
from tests.qa.pipeline.test_run import index  # noqa: F401 - the fixture

QUESTION = "How many staff did the port authority employ?"
PASSAGES = [
    make_passage("weather", ["Westmere has mild winters and wet springs."]),
    make_passage("budget", ["The authority's budget grew by 4 percent."]),
    make_passage("staff", ["The authority employed 1,850 staff at the end of the year."]),
    make_passage("cranes", ["All shore cranes will be electric by 2027."]),
]


def _reply(content: str) -> dict:
    reply = json.loads(json.dumps(RECORDED_COMPLETION))
    reply["choices"][0]["message"]["content"] = content
    return reply


def _blocks(body: dict) -> tuple[str, str]:
    """Passage A's and passage B's text as the prompt shows them."""
    user = body["messages"][1]["content"]
    a, b = re.split(r"\n\nPassage B", user.split("Passage A", 1)[1])
    return a, b


def prefers_staff_figures(body: dict) -> tuple[int, dict]:
    """A judge that knows the answer: the passage stating a staff number wins its match."""
    a, b = _blocks(body)
    return 200, _reply("B" if "1,850" in b else "A")


def test_the_tournament_puts_the_passage_the_llm_prefers_first():
    with FakeChatServer(prefers_staff_figures) as server:
        llm = OpenAICompatibleLLM(base_url=server.url + "/v1", model="judge", max_retries=0, timeout=5)
        candidates = [ScoredPassage(p, 1.0 - n / 10) for n, p in enumerate(PASSAGES)]
        ranked = LLMPairwiseReranker(llm, depth=4).rerank(QUESTION, candidates)
    assert ranked[0].passage.document_id == "staff"
    assert ranked[0].scores["pairwise_wins"] == 3.0
    assert len(server.requests) == 6  # each of the 4 * 3 / 2 pairs judged once
    first = server.requests[0]["body"]
    assert first["temperature"] == 0.0
    assert "one letter" in first["messages"][0]["content"]
    assert QUESTION in first["messages"][1]["content"]
    # The staff passage was shown first in some of its matches and second in others.
    blocks = [_blocks(r["body"]) for r in server.requests]
    positions = {"A" if "1,850" in a else "B" for a, b in blocks if "1,850" in a + b}
    assert positions == {"A", "B"}


def test_a_reply_naming_neither_keeps_the_inner_order():
    with FakeChatServer([(200, _reply("I cannot tell."))]) as server:
        llm = OpenAICompatibleLLM(base_url=server.url + "/v1", model="judge", max_retries=0, timeout=5)
        candidates = [ScoredPassage(p, 1.0 - n / 10) for n, p in enumerate(PASSAGES)]
        ranked = LLMPairwiseReranker(llm, depth=3).rerank(QUESTION, candidates)
    assert [h.passage.document_id for h in ranked] == ["weather", "budget", "staff", "cranes"]
    assert parse_choice("Passage B.") == "B" and parse_choice("a") == "A" and parse_choice("neither") is None


def test_the_pairwise_preset_lists_its_reranker_or_what_stood_in(index):  # noqa: F811
    no_llm = build_pipeline(
        get_preset("pairwise"), index=index, clients=ModelClients(embedder=HashingEmbedder())
    )
    run = answer_question("What did the sultan reform?", pipeline=no_llm)
    assert run.retrieval.reranker == "EvidenceReranker"
    assert "reranker: llm-pairwise -> evidence (no LLM configured)" in run.substitutions
    with FakeChatServer([(200, _reply("A"))]) as server:
        llm = OpenAICompatibleLLM(base_url=server.url + "/v1", model="judge", max_retries=0, timeout=5)
        clients = ModelClients(embedder=HashingEmbedder(), llm=llm)
        with_llm = build_pipeline(get_preset("pairwise"), index=index, clients=clients)
        run = answer_question("What did the sultan reform?", pipeline=with_llm)
    assert run.retrieval.reranker == "LLMPairwiseReranker"
    assert "pairwise_wins" in run.retrieval.reranked[0].scores
    assert not any("llm-pairwise" in note for note in run.substitutions)
