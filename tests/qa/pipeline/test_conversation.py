"""Conversation memory and follow-up rewriting: rule-based, and by an LLM behind a fake HTTP server."""

from __future__ import annotations

from qa.pipeline.core.llm import OpenAICompatibleLLM
from qa.pipeline.dialogue.conversation import llm_rewrite, remember, rewrite
from tests.qa.pipeline.test_llm_clients import RECORDED_COMPLETION, FakeChatServer

ROTH = [("What is a Roth IRA?", "A Roth IRA is a retirement account funded with money already taxed.")]
CLINIC = [
    (
        "Can you summarize the services provided by the Causeway VA Clinic?",
        "The Causeway VA Clinic offers primary care and mental health care.",
    )
]


def test_a_pronoun_becomes_the_conversations_subject():
    result = rewrite("Can I withdraw my contributions from it without penalty?", ROTH)
    assert result.question == "Can I withdraw my contributions from Roth IRA without penalty?"
    assert result.method == "resolved" and result.resolved == (("it", "Roth IRA"),)


def test_a_possessive_pronoun_keeps_its_possessive():
    assert rewrite("What are its opening hours?", CLINIC).question == (
        "What are Causeway VA Clinic's opening hours?"
    )


def test_a_demonstrative_phrase_becomes_the_remembered_name_that_contains_its_noun():
    result = rewrite("Does this clinic offer dental care?", CLINIC)
    assert result.question == "Does the Causeway VA Clinic offer dental care?"
    assert result.unresolved == ()


def test_a_demonstrative_phrase_nothing_earlier_names_is_unresolved_and_left_as_asked():
    result = rewrite("What all facilities does this library provide for the public?", CLINIC)
    assert result.unresolved == ("this library",)
    assert result.question == "What all facilities does this library provide for the public?"


def test_a_first_question_with_a_dangling_demonstrative_is_unresolved_too():
    assert rewrite("Is this California county known for its veterans services?", []).unresolved == (
        "this California county",
    )


def test_a_first_question_whose_demonstrative_points_back_into_itself_is_not_asked_back():
    # Analyst questions about the corpus's own articles: nothing is missing, so no "which ... do you mean?"
    pointing_back = [
        "According to this article, what did the minister announce?",
        "Based solely on this historical overview, what share of Rwanda's population is Hutu?",
        "Who won Mali's presidential elections in 2013 and 2018, and were those elections credible?",
        "How was Russia using its gas exports over Europe, and what risks did this create?",
        "Which powers competed for influence over Korea, and what wars shaped this period?",
    ]
    for question in pointing_back:
        assert rewrite(question, []).unresolved == (), question
    assert rewrite("What all facilities does this library provide?", []).unresolved == ("this library",)


def test_ellipsis_swaps_the_year_or_the_name_into_the_previous_question():
    history = [("What was the population of Ghana in 2010?", "About 24 million.")]
    assert rewrite("and in 2019?", history).question == "What was the population of Ghana in 2019?"
    assert rewrite("What about Togo?", history).question == "What was the population of Togo in 2010?"
    # A question of its own (it was "the fees of Roth IRA?"), its verb agreeing with the noun.
    assert rewrite("What about the fees?", ROTH).question == "What are the fees of Roth IRA?"
    assert rewrite("What about the penalty?", ROTH).question == "What is the penalty of Roth IRA?"
    # The possessive points at the subject named after it (it was "its fees of Roth IRA?").
    assert rewrite("And its fees?", ROTH).question == "What are the fees of Roth IRA?"


def test_a_question_after_and_resolves_its_pronoun_instead_of_taking_a_subject():
    # It was searched as "what are its plans of Roth IRA?".
    assert rewrite("And what are its limits?", ROTH).question == "And what are Roth IRA's limits?"


def test_a_self_contained_question_is_left_alone():
    question = "Why do bond prices fall when interest rates rise?"
    result = rewrite(question, ROTH)
    assert (result.question, result.method) == (question, "unchanged")


def test_memory_prefers_the_users_recent_subject_over_older_ones():
    history = [
        ("Tell me about the Grand Canyon National Park.", "It lies in Arizona."),
        ("Who wrote the song Grenade?", "Bruno Mars wrote Grenade."),
    ]
    assert remember(history).subject.text == "Grenade"
    assert rewrite("When was it released?", history).question == "When was Grenade released?"


def test_an_unnamed_topic_is_carried_as_a_phrase():
    history = [("Do you think facilitated diffusion plays a role in passive transport?", "Yes.")]
    assert rewrite("How does it affect the cell?", history).question == (
        "How does facilitated diffusion affect the cell?"
    )


def completion(text):
    body = dict(RECORDED_COMPLETION)
    body["choices"] = [
        {**RECORDED_COMPLETION["choices"][0], "message": {"role": "assistant", "content": text}}
    ]
    return body


def test_with_an_llm_the_prompted_rewrite_is_searched_and_the_conversation_is_in_the_prompt():
    reply = "Can I withdraw Roth IRA contributions without a penalty?"
    with FakeChatServer([(200, completion(reply))]) as server:
        llm = OpenAICompatibleLLM(base_url=server.url + "/v1", model="m", timeout=5, max_retries=0)
        result = llm_rewrite("Can I take my contributions out of it?", ROTH, llm)
    assert (result.question, result.method) == (reply, "llm")
    prompt = server.requests[0]["body"]["messages"]
    assert "standalone" in prompt[0]["content"] and "What is a Roth IRA?" in prompt[1]["content"]


def test_an_empty_llm_reply_falls_back_to_the_rule_based_rewrite():
    with FakeChatServer([(200, completion("   "))]) as server:
        llm = OpenAICompatibleLLM(base_url=server.url + "/v1", model="m", timeout=5, max_retries=0)
        result = llm_rewrite("Can I take my contributions out of it?", ROTH, llm)
    assert result.method == "resolved" and "Roth IRA" in result.question


def test_a_specific_thing_the_asker_has_not_named_is_unresolved():
    assert rewrite("Can you tell me about a specific city in California?", []).unresolved == ("this city",)


FLOODS = [
    (
        "Tell me about the floods.",
        "Heavy rain caused the Sel river to flood on Tuesday, closing roads in three southern districts.",
    )
]


def test_the_weather_it_is_no_reference_back():
    # Searched as "When will Sel stop raining?".
    result = rewrite("When will it stop raining?", FLOODS)
    assert result.resolved == () and "Sel stop" not in result.question


def test_a_their_whose_owners_the_question_names_is_no_reference_back():
    # Searched as "How many people had to leave Sel's homes?", and refused.
    result = rewrite("How many people had to leave their homes?", FLOODS)
    assert result.resolved == () and "leave their homes" in result.question
    # A "their" with no owner in the question still points back.
    assert rewrite("What did their officials say?", FLOODS).resolved == (("their", "Sel"),)
