"""The LLM judge by probability (qa.pipeline.checks.llm_judge), through an OpenAI-compatible client
against a local fake server that answers with token log-probabilities: never a live call."""

from __future__ import annotations

import pytest

from qa.pipeline.checks.answerability import (
    ANSWERABLE,
    SIGNAL_NAMES,
    UNANSWERABLE,
    LogisticModel,
    SignalAnswerability,
)
from qa.pipeline.checks.llm_judge import JUDGE_NAMES, MAX_WORDS, PassageJudge, judge_messages
from qa.pipeline.checks.trust import TrustConfig, answerability_judge, before_generation
from qa.pipeline.core.types import ScoredPassage
from tests.qa.pipeline.answering_fakes import make_passage
from tests.qa.pipeline.test_llm_clients import RECORDED_COMPLETION, FakeChatServer, openai_client, with_top

HISTORY = make_passage(
    "factbook/dominica",
    [
        "Dominica was the last of the Caribbean islands to be colonised by Europeans.",
        "France ceded possession of Dominica to Great Britain in 1763.",
        "Dominica became a British colony in 1805.",
    ],
    title="Dominica: History",
)
ECONOMY = make_passage(
    "factbook/dominica-economy",
    ["Dominica's economy depends on tourism and agriculture, chiefly bananas."],
    title="Dominica: Economy",
)
QUESTION = "When did Dominica become a British colony?"
YES = with_top([("Yes", -0.02), ("No", -4.0)])  # P(yes) ~0.98
NO = with_top([("No", -0.02), ("Yes", -4.0)])  # P(yes) ~0.02


def hits(*passages):
    return [
        ScoredPassage(p, 1.0 - 0.1 * i, {"sentence_similarity": 0.6, "dense": 0.5})
        for i, p in enumerate(passages)
    ]


def judge_led_model() -> LogisticModel:
    """A model in which only the judge's best P(yes) counts: its decision follows the LLM's answer."""
    names = SIGNAL_NAMES + JUDGE_NAMES
    coef = tuple(1.0 if name == "judge_best" else 0.0 for name in names)
    return LogisticModel(names, (0.0,) * len(names), (1.0,) * len(names), coef, 0.0, threshold=0.5)


def verdict_with(reply, passages=(HISTORY,)):
    with FakeChatServer([(200, reply)]) as server:
        judge = PassageJudge(openai_client(server.url), passages=2)
        verdict = SignalAnswerability(judge_led_model(), llm_judge=judge).judge(QUESTION, hits(*passages))
    return verdict, server.requests


def test_the_llm_saying_yes_or_no_turns_the_same_passages_into_an_answer_or_a_refusal():
    answered, _ = verdict_with(YES)
    refused, _ = verdict_with(NO)
    assert answered.kind == ANSWERABLE and answered.probability > 0.9
    assert refused.kind == UNANSWERABLE and refused.probability < 0.1
    # The trace shows what the LLM said, per passage, and the reason names it.
    trace = answered.to_trace()["llm_judge"]
    assert trace["p_yes"] == pytest.approx(0.98, abs=0.01)
    assert trace["passages"][0]["document_id"] == "factbook/dominica"
    assert "LLM judge P(yes) 0.98" in answered.reason
    assert refused.to_trace()["llm_judge"]["p_yes"] == pytest.approx(0.02, abs=0.01)


def test_the_judge_asks_one_short_yes_no_question_per_passage():
    _, requests = verdict_with(YES, passages=(HISTORY, ECONOMY))
    assert len(requests) == 2
    body = requests[0]["body"]
    assert body["max_tokens"] == 1 and body["logprobs"] is True and body["temperature"] == 0
    user = body["messages"][-1]["content"]
    assert QUESTION in user and "became a British colony in 1805" in user and "yes or no" in user
    assert "bananas" in requests[1]["body"]["messages"][-1]["content"]


def test_each_question_and_passage_is_asked_once_per_client():
    with FakeChatServer([(200, YES)]) as server:
        llm = openai_client(server.url)
        first = PassageJudge(llm, passages=2).judge(QUESTION, hits(HISTORY, ECONOMY))
        # A second answerability call of the same run (another judge, same client) asks nothing new.
        again = PassageJudge(llm, passages=2).judge(QUESTION, hits(HISTORY, ECONOMY))
        PassageJudge(llm, passages=2).judge("What does Dominica's economy depend on?", hits(ECONOMY))
    assert again.to_trace()["p_yes"] == first.to_trace()["p_yes"]
    assert len(server.requests) == 3


def test_a_server_without_logprobs_leaves_the_judge_undecided_and_says_why():
    verdict, _ = verdict_with(RECORDED_COMPLETION)
    trace = verdict.to_trace()["llm_judge"]
    assert trace["p_yes"] is None
    assert "no token log-probabilities" in trace["passages"][0]["error"]
    # Read as P(yes) 0.5: the judge-led model sits on its threshold instead of refusing outright.
    assert verdict.probability == pytest.approx(0.5)


def test_a_model_fitted_without_the_judge_never_calls_the_llm():
    with FakeChatServer([(200, YES)]) as server:
        judge = PassageJudge(openai_client(server.url))
        model = LogisticModel(SIGNAL_NAMES, (0.0,) * 12, (1.0,) * 12, (0.0,) * 12, 1.0, threshold=0.5)
        verdict = SignalAnswerability(model, llm_judge=judge).judge(QUESTION, hits(HISTORY))
    assert server.requests == [] and "llm_judge" not in verdict.to_trace()


def test_long_passages_are_cut_to_keep_the_prompt_short():
    text = " ".join(f"word{i}" for i in range(MAX_WORDS * 3))
    user = judge_messages("Which word comes last?", text)[-1]["content"]
    assert f"word{MAX_WORDS - 1} ..." in user and f"word{MAX_WORDS}" not in user


def test_the_trust_config_asks_the_judge_only_where_an_llm_is_configured():
    with FakeChatServer([(200, YES)]) as server:
        llm = openai_client(server.url)
        on = answerability_judge(TrustConfig(llm_judge=True), llm)
        off = answerability_judge(TrustConfig(), llm)
        without_llm = answerability_judge(TrustConfig(llm_judge=True), None)
    assert isinstance(on, SignalAnswerability) and on.llm_judge is not None
    assert off.llm_judge is None and without_llm.llm_judge is None


def test_the_stored_judged_model_reads_the_llm_and_shows_it_in_the_trace():
    """The fitted model (answerability_model.json, bench/llm_judge.py --write) through the trust stage:
    the same passages are surer answerable when the LLM says yes, and the trace says what it said."""
    config = TrustConfig(llm_judge=True)
    traces = {}
    for name, reply in (("yes", YES), ("no", NO)):
        with FakeChatServer([(200, reply)]) as server:
            before = before_generation(
                QUESTION, hits(HISTORY, ECONOMY), 3, config=config, llm=openai_client(server.url)
            )
        traces[name] = before.to_trace()["answerability"]
        assert len(server.requests) == 2  # the top two passages, once each
    assert traces["yes"]["llm_judge"]["p_yes"] > 0.9 > 0.1 > traces["no"]["llm_judge"]["p_yes"]
    assert traces["yes"]["probability"] > traces["no"]["probability"]
    assert traces["yes"]["llm_judge"]["passages"][1]["document_id"] == "factbook/dominica-economy"


def test_the_careful_preset_without_an_llm_runs_on_the_signals_and_says_so():
    from qa.pipeline.config.presets import get_preset
    from qa.pipeline.flow.factory import ModelClients, build_pipeline
    from qa.pipeline.search.memory_index import InMemoryCorpusIndex
    from tests.qa.pipeline.answering_fakes import BagOfWordsEmbedder

    careful = get_preset("careful")
    assert careful.trust.llm_judge and not get_preset("default").trust.llm_judge
    embedder = BagOfWordsEmbedder()
    index = InMemoryCorpusIndex([], embedder)
    pipeline = build_pipeline(careful, index=index, clients=ModelClients(embedder=embedder))
    assert "answerability: signals + LLM judge -> signals (no LLM configured)" in pipeline.substitutions
