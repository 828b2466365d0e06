"""Splitting a multi-part question: by rules on hand-written questions, and by an LLM behind a
fake HTTP server (never a live call), falling back to the rules when its reply is unusable."""

from __future__ import annotations

import pytest

from qa.pipeline.core.llm import OpenAICompatibleLLM
from qa.pipeline.dialogue.decompose import MAX_PARTS, llm_plan, parse_plan, plan_question, rule_plan
from tests.qa.pipeline.test_llm_clients import RECORDED_COMPLETION, FakeChatServer


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "How many containers did the Port of Westmere handle in 2024, "
            "and what is the capital of Westmere?",
            (
                "How many containers did the Port of Westmere handle in 2024?",
                "What is the capital of Westmere?",
            ),
        ),
        (  # two questions in one turn; the second's "its" takes the first's subject
            "When did Westmere gain independence? Who wrote its constitution?",
            ("When did Westmere gain independence?", "Who wrote Westmere's constitution?"),
        ),
        (
            "Compare the population of Oman and Yemen.",
            ("What is the population of Oman?", "What is the population of Yemen?"),
        ),
        (
            "What is the difference between primary and archaeological sources?",
            (
                "What do the sources say about primary sources?",
                "What do the sources say about archaeological sources?",
            ),
        ),
        (  # was "... about capital Westmere?"
            "What is the difference between the capital and the currency of Westmere?",
            (
                "What do the sources say about the capital of Westmere?",
                "What do the sources say about the currency of Westmere?",
            ),
        ),
        (  # was "... about port's revenue?" and "... about its staff?"
            "Compare the port's revenue and its staff.",
            (
                "What do the sources say about the port's revenue?",
                "What do the sources say about the port's staff?",
            ),
        ),
        (
            "What are the population, capital and currency of Westmere?",
            (
                "What is the population of Westmere?",
                "What is the capital of Westmere?",
                "What is the currency of Westmere?",
            ),
        ),
        (  # "and how has it changed": the pronoun is resolved from the first part
            "What is the population of Westmere and how has it changed since 2019?",
            ("What is the population of Westmere?", "How has Westmere changed since 2019?"),
        ),
        (  # the framing goes with every part; a part that points back gets the names it points at
            "According to the report, which powers competed for influence over Korea, "
            "and what wars shaped this period?",
            (
                "According to the report, which powers competed for influence over Korea?",
                "According to the report, what wars shaped this period (Korea)?",
            ),
        ),
        (  # "it" becomes the name, not the possessive the first part wrote
            "What was Mali's defense budget in 2020, and how much aid did it receive from ECOWAS?",
            ("What was Mali's defense budget in 2020?", "How much aid did Mali receive from ECOWAS?"),
        ),
    ],
)
def test_rules_split_a_question_that_asks_several_things(question, parts):
    plan = rule_plan(question)
    assert plan.method == "rules" and plan.decomposed
    assert plan.parts == parts


@pytest.mark.parametrize(
    "question",
    [
        "Who were Lewis and Clark?",  # "and" between names
        "What is the research and development budget of Acme?",  # one thing, a compound noun
        "Why did the company and its partners sue the government?",
        "What political reforms did the sultan enact?",
    ],
)
def test_rules_leave_a_question_that_asks_one_thing_whole(question):
    plan = rule_plan(question)
    assert plan.method == "single" and plan.parts == (question,)


def test_rules_keep_at_most_four_parts():
    question = "Who? What is A? What is B? What is C? What is D? What is E?"
    assert len(rule_plan(question).parts) <= MAX_PARTS


def reply(text: str):
    body = {
        **RECORDED_COMPLETION,
        "choices": [{**RECORDED_COMPLETION["choices"][0], "message": {"role": "assistant", "content": text}}],
    }
    return (200, body)


def llm_for(server) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(base_url=server.url + "/v1", model="m", timeout=5, max_retries=0)


def test_the_llm_plan_is_used_when_it_is_a_numbered_list_of_parts_of_the_question():
    question = "Who founded the Harbor Authority, and when did the eastern terminal open?"
    answer = (
        "Here are the sub-questions:\n1. Who founded the Harbor Authority?\n"
        "2. When did the eastern terminal open?"
    )
    with FakeChatServer([reply(answer)]) as server:
        plan = plan_question(question, llm=llm_for(server))
    assert plan.method == "llm"
    assert plan.parts == ("Who founded the Harbor Authority?", "When did the eastern terminal open?")
    # The prompt asks for standalone, numbered sub-questions of this question and nothing else.
    messages = server.requests[0]["body"]["messages"]
    assert question in messages[-1]["content"]
    assert "stand alone" in messages[0]["content"] and "numbered" in messages[0]["content"]


def test_an_llm_part_the_analyst_did_not_ask_falls_back_to_the_rules():
    question = "How many staff did the Harbor Authority employ and what was its revenue?"
    with FakeChatServer(
        [reply("1. How many staff did the Harbor Authority employ?\n2. Who is the mayor of Paris?")]
    ) as server:
        plan = llm_plan(question, llm_for(server))
    assert plan.method == "rules" and "did not ask" in plan.note
    assert plan.parts == (
        "How many staff did the Harbor Authority employ?",
        "What was Harbor Authority's revenue?",
    )


def test_a_failing_llm_falls_back_to_the_rules_and_says_why():
    question = "What are the population and capital of Westmere?"
    with FakeChatServer([(500, {"error": {"message": "overloaded"}})]) as server:
        plan = llm_plan(question, llm_for(server))
    assert plan.parts == ("What is the population of Westmere?", "What is the capital of Westmere?")
    assert plan.method == "rules" and "LLM plan failed" in plan.note


def test_an_llm_that_finds_one_question_leaves_it_whole():
    question = "What political reforms did the sultan enact?"
    with FakeChatServer([reply(question)]) as server:
        plan = llm_plan(question, llm_for(server))
    assert plan.method == "single" and plan.parts == (question,)


def test_parse_plan_reads_numbered_and_bulleted_lines_and_ignores_a_preamble():
    assert parse_plan("Sure:\n1) What is A?\n- What is B?\n") == ("What is A?", "What is B?")
    assert parse_plan("What is A?\nWhat is B?") == ("What is A?", "What is B?")
    assert parse_plan("") == ()
