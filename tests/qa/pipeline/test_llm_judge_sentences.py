"""The LLM judge of answer sentences (qa.pipeline.checks.llm_judge.SentenceJudge): does the sentence
answer the question (its answers / background / off-the-question label), does its cited text support
it (its support label). Through an OpenAI-compatible client against a local fake server that answers
with token log-probabilities: never a live call."""

from __future__ import annotations

import dataclasses

import pytest

from documents.parsing.assemble import document_from_text
from qa.pipeline.checks.judged_claims import JudgedVerifier
from qa.pipeline.checks.llm_judge import RELEVANCE_SYSTEM, SUPPORT_SYSTEM, SYSTEM, SentenceJudge
from qa.pipeline.checks.relation import OFF_QUESTION, with_relations
from qa.pipeline.checks.trust import TrustConfig, sentence_judge
from qa.pipeline.checks.verification import LexicalVerifier
from qa.pipeline.config.presets import get_preset
from qa.pipeline.core.types import SUPPORTED, UNSUPPORTED, Answer, AnswerSentence
from qa.pipeline.drafting.generation import DraftSentence
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.runner import answer_question
from qa.pipeline.search.embedding import SentenceTransformerEmbedder
from qa.pipeline.search.memory_index import InMemoryCorpusIndex
from tests.qa.pipeline.answering_fakes import BagOfWordsEmbedder, make_passage
from tests.qa.pipeline.test_llm_clients import RECORDED_COMPLETION, FakeChatServer, openai_client, with_top

YES = with_top([("Yes", -0.02), ("No", -4.0)])  # P(yes) ~0.98
NO = with_top([("No", -0.02), ("Yes", -4.0)])  # P(yes) ~0.02

HISTORY = make_passage(
    "factbook/dominica",
    [
        "Dominica became a British colony in 1805.",
        "The island's volcanic soil supports banana plantations on the western slopes.",
    ],
    title="Dominica: History",
)
COLONY, BANANAS = HISTORY.sentences
QUESTION = "When did Dominica become a British colony?"


def replying(by_system: dict[str, dict]):
    """A fake server's reply chosen by the judge's system prompt (which question it asks)."""

    def reply(body):
        system = body["messages"][0]["content"]
        return 200, by_system.get(system, YES)

    return reply


def answer_of(*sources) -> Answer:
    return Answer(tuple(AnswerSentence(s.text, (s,), SUPPORTED) for s in sources))


def related(reply, answer: Answer):
    with FakeChatServer([(200, reply)]) as server:
        judge = SentenceJudge(openai_client(server.url))
        labelled = with_relations(QUESTION, answer, BagOfWordsEmbedder(), judge=judge)
    return labelled, server.requests


# --- relevance ----------------------------------------------------------------------------------


def test_a_sentence_the_judge_says_does_not_answer_is_labelled_off_the_question():
    answer = answer_of(COLONY)
    today = with_relations(QUESTION, answer, BagOfWordsEmbedder()).sentences[0]
    said_yes, _ = related(YES, answer)
    said_no, requests = related(NO, answer)
    yes, no = said_yes.sentences[0], said_no.sentences[0]
    assert today.relation != OFF_QUESTION and yes.relation != OFF_QUESTION
    assert no.relation == OFF_QUESTION
    # What the judge said is kept with the sentence (the run's trace stores the answer).
    assert yes.relation_judge == pytest.approx(0.98, abs=0.01)
    assert no.relation_judge == pytest.approx(0.02, abs=0.01)
    assert yes.relation_score > no.relation_score
    # One short yes/no question per sentence: the question, the sentence and its source's title.
    [request] = requests
    body = request["body"]
    assert body["max_tokens"] == 1 and body["logprobs"] is True
    assert body["messages"][0]["content"] == RELEVANCE_SYSTEM
    user = body["messages"][1]["content"]
    assert QUESTION in user and COLONY.text in user and "Dominica: History" in user


def test_the_judge_saying_yes_lifts_a_sentence_the_score_alone_calls_background():
    answer = answer_of(BANANAS)
    today = with_relations(QUESTION, answer, BagOfWordsEmbedder()).sentences[0]
    said_yes, _ = related(YES, answer)
    said_no, _ = related(NO, answer)
    assert said_yes.sentences[0].relation_score > today.relation_score > said_no.sentences[0].relation_score
    assert said_no.sentences[0].relation == OFF_QUESTION


def test_a_failed_relevance_judgement_keeps_the_score_alone_and_says_why():
    answer = answer_of(COLONY, BANANAS)
    today = with_relations(QUESTION, answer, BagOfWordsEmbedder())
    failed, requests = related(RECORDED_COMPLETION, answer)
    assert [s.relation for s in failed.sentences] == [s.relation for s in today.sentences]
    assert [s.relation_score for s in failed.sentences] == [s.relation_score for s in today.sentences]
    assert all(s.relation_judge is None for s in failed.sentences)
    assert all("no token log-probabilities" in s.relation_note for s in failed.sentences)
    assert len(requests) == 2


def test_each_sentence_is_asked_once_per_client():
    answer = answer_of(COLONY, BANANAS)
    with FakeChatServer([(200, NO)]) as server:
        llm = openai_client(server.url)
        first = with_relations(QUESTION, answer, BagOfWordsEmbedder(), judge=SentenceJudge(llm))
        again = with_relations(QUESTION, answer, BagOfWordsEmbedder(), judge=SentenceJudge(llm))
    assert [s.relation for s in again.sentences] == [s.relation for s in first.sentences]
    assert len(server.requests) == 2


# --- claim support --------------------------------------------------------------------------------

# A paraphrase the lexical verifier finds supported (its words are the cited sentence's).
PARAPHRASE = DraftSentence("In 1805 Dominica became a colony of the British.", (COLONY,))


def verified(reply, sentences=(PARAPHRASE,)):
    with FakeChatServer([(200, reply)]) as server:
        verifier = JudgedVerifier(LexicalVerifier(), SentenceJudge(openai_client(server.url)))
        result = verifier.verify(QUESTION, list(sentences))
    return result.verdicts, server.requests


def test_a_claim_the_judge_says_is_unsupported_is_not_labelled_supported():
    assert LexicalVerifier().verify(QUESTION, [PARAPHRASE]).verdicts[0].label == SUPPORTED
    [kept], _ = verified(YES)
    [vetoed], requests = verified(NO)
    assert kept.label == SUPPORTED and kept.judge == pytest.approx(0.98, abs=0.01)
    assert vetoed.label == UNSUPPORTED and vetoed.judge == pytest.approx(0.02, abs=0.01)
    assert "P(supported) = 0.02" in vetoed.reason
    [request] = requests
    messages = request["body"]["messages"]
    assert messages[0]["content"] == SUPPORT_SYSTEM
    assert PARAPHRASE.text in messages[1]["content"] and COLONY.text in messages[1]["content"]


def test_the_judge_never_makes_a_claim_supported_that_the_verifier_did_not():
    wrong_year = DraftSentence("Dominica became a British colony in 1815.", (COLONY,))
    [verdict], _ = verified(YES, (wrong_year,))
    assert verdict.label == UNSUPPORTED and "1815" in verdict.reason


def test_a_sentence_quoting_its_citation_is_not_asked():
    quoted = DraftSentence(COLONY.text, (COLONY,))
    [verdict], requests = verified(NO, (quoted,))
    assert verdict.label == SUPPORTED and verdict.judge is None and requests == []


def test_a_failed_support_judgement_keeps_the_label_and_says_why():
    [verdict], requests = verified(RECORDED_COMPLETION)
    assert verdict.label == SUPPORTED and verdict.judge is None
    assert "failed" in verdict.reason and "no token log-probabilities" in verdict.reason
    assert len(requests) == 1


# --- the switches ---------------------------------------------------------------------------------


def test_no_judge_without_an_llm_or_with_the_switch_off():
    on = TrustConfig(llm_judge_relevance=True, llm_judge_claims=True)
    with FakeChatServer([(200, YES)]) as server:
        llm = openai_client(server.url)
        assert sentence_judge(on, llm, "relevance") is not None
        assert sentence_judge(on, llm, "claims") is not None
        assert sentence_judge(TrustConfig(), llm, "relevance") is None
        assert sentence_judge(TrustConfig(), llm, "claims") is None
    assert sentence_judge(on, None, "relevance") is None and sentence_judge(on, None, "claims") is None
    assert server.requests == []


def test_a_preset_asking_for_the_judges_without_an_llm_says_so():
    config = get_preset("careful")
    config = dataclasses.replace(
        config, trust=dataclasses.replace(config.trust, llm_judge_relevance=True, llm_judge_claims=True)
    )
    embedder = BagOfWordsEmbedder()
    pipeline = build_pipeline(config, index=InMemoryCorpusIndex([], embedder), clients=ModelClients(embedder))
    assert "sentence relation: score + LLM judge -> score (no LLM configured)" in pipeline.substitutions
    assert "claim support: verifier + LLM judge -> verifier (no LLM configured)" in pipeline.substitutions
    assert not isinstance(pipeline.answer_parts.verifier, JudgedVerifier)


MARENIA = """Marenia: History

In 1970, Prince Tavor deposed his father and ruled Marenia as its sovereign for the next five decades. \
In 2011, protests that swept the region reached Marenia, where crowds demanded jobs \
and an end to corruption. \
In response, Prince Tavor carried out political reforms, giving the elected council the power to draft laws \
and to question ministers. \
Prince Tavor died in 2020 and was succeeded by his nephew."""


MARENIA_QUESTION = "What political reforms did Prince Tavor make in response to the 2011 protests?"


def judged_marenia_run(said: str):
    """``careful`` with the relevance judge on, over the Marenia history, the judge (a fake
    OpenAI-compatible server) saying ``said`` ("yes" or "no") to every answer sentence; the run and
    the system prompts the server was asked."""
    config = get_preset("careful")
    config = dataclasses.replace(config, trust=dataclasses.replace(config.trust, llm_judge_relevance=True))
    embedder = SentenceTransformerEmbedder()
    document = document_from_text(MARENIA, external_id="marenia-history", filename="marenia-history.txt")
    index = InMemoryCorpusIndex([document], embedder)
    reply = replying({SYSTEM: YES, RELEVANCE_SYSTEM: YES if said == "yes" else NO})
    with FakeChatServer(reply) as server:
        clients = ModelClients(embedder=embedder, llm=openai_client(server.url))
        run = answer_question(MARENIA_QUESTION, pipeline=build_pipeline(config, index=index, clients=clients))
    return run, [r["body"]["messages"][0]["content"] for r in server.requests]


def test_an_answer_shows_the_sentences_the_judge_says_miss_the_question_as_off_it():
    """The whole run with an LLM configured: the answerability judge says the passages answer, the
    relevance judge says a sentence does not; the user sees that sentence labelled off the question,
    and the judge's own yes on another run leaves it on the question."""
    relations = {}
    for said in ("yes", "no"):
        run, asked = judged_marenia_run(said)
        assert not run.answer.refused, run.answer.note
        cited = [s for s in run.answer.sentences if s.citations]
        assert asked.count(RELEVANCE_SYSTEM) == len(cited) > 0
        relations[said] = [s.relation for s in cited]
    assert OFF_QUESTION not in relations["yes"]
    assert OFF_QUESTION in relations["no"] and "answers" not in relations["no"]
