"""Answerability, question analysis, context and answer relevance: the pure stages."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from qa.pipeline.checks import reply_rules
from qa.pipeline.checks.answerability import (
    ANSWER_KINDS,
    ANSWERABLE,
    MODEL_PATH,
    SIGNAL_NAMES,
    UNANSWERABLE,
    UNDERSPECIFIED,
    LLMAnswerability,
    LogisticModel,
    SignalAnswerability,
    answerability_signals,
    load_model,
)
from qa.pipeline.checks.relevance import (
    IRRELEVANT,
    RELEVANT,
    answer_relevance,
    judge_context,
    relevant_passages,
)
from qa.pipeline.config.answering_config import AnswerConfig
from qa.pipeline.core.llm import OpenAICompatibleLLM
from qa.pipeline.core.types import SUPPORTED, AnswerSentence, ScoredPassage
from qa.pipeline.reading.questions import analyse_question, states_answer_type
from tests.qa.pipeline.answering_fakes import BagOfWordsEmbedder, make_passage
from tests.qa.pipeline.test_llm_clients import RECORDED_COMPLETION, FakeChatServer

HISTORY = make_passage(
    "factbook/dominica",
    [
        "Dominica was the last of the Caribbean islands to be colonised by Europeans.",
        "France ceded possession of Dominica to Great Britain in 1763.",
        "Dominica became a British colony in 1805.",
        "In 1980 Mary Eugenia Charles became prime minister of Dominica.",
    ],
    title="Dominica: History",
)
PEOPLE = make_passage(
    "factbook/dominica-people",
    ["The population of Dominica was about 72,000 people in 2020, down slightly from 2010."],
    title="Dominica: People",
)


def hits(*passages, cosine=0.6):
    return [
        ScoredPassage(p, 1.0 - 0.1 * i, {"sentence_similarity": cosine - 0.05 * i, "dense": cosine - 0.1})
        for i, p in enumerate(passages)
    ]


def test_question_analysis_names_the_kind_of_answer_asked_for():
    population = analyse_question("What was the population of Dominica in 2020, and how has it changed?")
    assert population.answer_type == "number" and "population" in population.measure
    assert analyse_question("Who won Mali's presidential election in 2013?").answer_type == "person"
    assert analyse_question("When did Dominica become independent?").answer_type == "date"
    assert analyse_question("Where is the Eiffel Tower?").answer_type == "place"
    assert analyse_question("what about it?").vague


def test_a_history_sentence_does_not_state_a_population():
    question = analyse_question("What was the population of Dominica in 2020?")
    assert not any(states_answer_type(question, s.text) for s in HISTORY.sentences)
    assert states_answer_type(question, PEOPLE.sentences[0].text)


def test_on_topic_question_for_an_unstated_figure_is_unanswerable():
    verdict = SignalAnswerability().judge("What was the population of Dominica in 2020?", hits(HISTORY))
    assert verdict.kind == UNANSWERABLE
    assert "population" in verdict.reason
    assert verdict.probability <= 0.05


def test_the_same_question_is_answerable_when_a_passage_states_the_figure():
    verdict = SignalAnswerability().judge(
        "What was the population of Dominica in 2020?", hits(PEOPLE, HISTORY, cosine=0.75)
    )
    assert verdict.kind == ANSWERABLE
    assert verdict.probability > 0.5


def test_vague_question_is_underspecified_and_every_kind_is_declared_once():
    verdict = SignalAnswerability().judge("And that?", hits(HISTORY))
    assert verdict.kind == UNDERSPECIFIED
    assert set(ANSWER_KINDS) == {"answerable", "partial", "underspecified", "unanswerable"}


def test_signals_follow_the_evidence():
    question = "What was the population of Dominica in 2020?"
    with_figure = answerability_signals(question, hits(PEOPLE))
    without = answerability_signals(question, hits(HISTORY))
    assert with_figure.type_missing == 0.0 and without.type_missing == 1.0
    assert with_figure.sentence_coverage > without.sentence_coverage


def test_logistic_model_learns_a_separable_signal_and_round_trips_through_json():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 2))
    y = (x[:, 0] > 0).astype(float)
    model = LogisticModel.fit(x, y, ("useful", "noise"))
    assert abs(model.coef[0]) > 5 * abs(model.coef[1])
    assert model.probability([[2.0, 0.0]])[0] > 0.9 > 0.1 > model.probability([[-2.0, 0.0]])[0]
    again = LogisticModel.from_json(json.loads(json.dumps(model.to_json())))
    assert np.allclose(again.probability(x), model.probability(x))


def test_the_stored_model_says_what_data_it_saw_and_matches_the_signals():
    model = load_model()
    assert model.names == SIGNAL_NAMES
    assert "CLAPNQ-dev" in model.trained_on and "analyst-bench train" in model.trained_on
    assert "dev" not in model.trained_on.replace("CLAPNQ-dev", "")
    assert 0.0 < model.threshold < 1.0


def _llm_server(content: str) -> FakeChatServer:
    reply = json.loads(json.dumps(RECORDED_COMPLETION))
    reply["choices"][0]["message"]["content"] = content
    return FakeChatServer([(200, reply)])


def test_llm_judge_reads_kind_and_probability_from_the_http_reply():
    question = "What was the population of Dominica in 2020?"
    with _llm_server("KIND: unanswerable\nPROBABILITY: 0.12") as server:
        llm = OpenAICompatibleLLM(base_url=server.url + "/v1", model="judge")
        verdict = LLMAnswerability(llm).judge(question, hits(HISTORY))
    assert (verdict.kind, verdict.probability, verdict.judge) == (UNANSWERABLE, 0.12, "llm")
    sent = server.requests[0]["body"]["messages"]
    assert question in sent[-1]["content"] and "France ceded possession" in sent[-1]["content"]
    assert "unanswerable" in sent[0]["content"]


def test_llm_judge_falls_back_to_the_signals_on_an_unreadable_reply():
    with _llm_server("I think so, maybe.") as server:
        llm = OpenAICompatibleLLM(base_url=server.url + "/v1", model="judge")
        verdict = LLMAnswerability(llm, fallback=SignalAnswerability()).judge(
            "What was the population of Dominica in 2020?", hits(HISTORY)
        )
    assert verdict.judge == "signals" and verdict.kind == UNANSWERABLE


def test_irrelevant_passages_are_labelled_and_never_passed_on():
    harbour = make_passage(
        "news/harbour", ["The harbour report covers fishing boats in Norway."], title="Harbour"
    )
    ranked = hits(PEOPLE, cosine=0.7) + [ScoredPassage(harbour, 0.1, {"sentence_similarity": 0.05})]
    judgements = judge_context("What was the population of Dominica in 2020?", ranked)
    assert [j.label for j in judgements] == [RELEVANT, IRRELEVANT]
    assert [hit.passage.key for hit in relevant_passages(ranked, judgements)] == [PEOPLE.key]


def test_supported_but_off_question_answer_does_not_address_the_question():
    question = "What was the population of Dominica in 2020, and how has it changed?"
    history = [AnswerSentence(s.text, (s,), SUPPORTED) for s in HISTORY.sentences]
    people = [AnswerSentence(s.text, (s,), SUPPORTED) for s in PEOPLE.sentences]
    off = answer_relevance(question, history, BagOfWordsEmbedder())
    on = answer_relevance(question, people, BagOfWordsEmbedder())
    assert not off.addresses and "population" in off.reason
    assert on.addresses and on.score > off.score


def test_an_off_question_answer_kept_without_the_check_reads_supported_nowhere_and_says_why():
    """A follow-up the turn-kind model answers skips the check's refusal; its labels must not
    then tell the analyst the answer is supported when the check says it misses the question."""
    from qa.pipeline.checks.answerability import AnswerabilityVerdict
    from qa.pipeline.checks.trust import TrustConfig, after_generation
    from qa.pipeline.core.types import PARTIAL, Answer

    question = "What was the population of Dominica in 2020, and how has it changed?"
    verdict = AnswerabilityVerdict(ANSWERABLE, 0.9, "stated", "signals")
    history = Answer(sentences=tuple(AnswerSentence(s.text, (s,), SUPPORTED) for s in HISTORY.sentences[:2]))
    people = Answer(sentences=tuple(AnswerSentence(s.text, (s,), SUPPORTED) for s in PEOPLE.sentences))
    kept, embedder = TrustConfig(check_answer=False), BagOfWordsEmbedder()

    off = after_generation(question, history, verdict, config=kept, embedder=embedder)
    assert not off.answer.refused and not off.check.addresses_question
    assert {s.support for s in off.answer.sentences} == {PARTIAL}
    assert "doubts that this answers the question" in off.answer.note and "population" in off.answer.note
    on = after_generation(question, people, verdict, config=kept, embedder=embedder)
    assert on.check.addresses_question and {s.support for s in on.answer.sentences} == {SUPPORTED}
    assert on.answer.note == ""
    refused = after_generation(question, history, verdict, config=TrustConfig(), embedder=embedder)
    assert refused.answer.refused


def test_threshold_override_changes_the_decision():
    question = "What reforms did Sultan Qaboos enact in 2011?"
    oman = make_passage("oman", ["In 2011 Sultan Qaboos expanded the powers of the Council of Oman."])
    strict = SignalAnswerability(threshold=1.0).judge(question, hits(oman))
    lenient = SignalAnswerability(threshold=0.0).judge(question, hits(oman))
    assert (strict.kind, lenient.kind) == (UNANSWERABLE, ANSWERABLE)
    assert replace(strict, kind=ANSWERABLE).should_answer and not strict.should_answer


def test_a_refusal_is_never_certain_and_a_rule_refusal_takes_the_rule_precision(tmp_path):
    from qa.pipeline.checks.answerability import AnswerabilityVerdict
    from qa.pipeline.checks.confidence import TrustModels
    from qa.pipeline.checks.trust import refusal_confidence

    nothing_found = AnswerabilityVerdict("unanswerable", 0.0, "retrieval returned no passages", "signals")
    assert refusal_confidence(nothing_found).probability == 0.99
    stored = json.loads(MODEL_PATH.read_text())
    stored["refusal_rule"] = {"precision": 0.8, "count": 40, "trained_on": "test"}
    path = tmp_path / "model.json"
    path.write_text(json.dumps(stored))
    models = TrustModels(path)
    assert models.of_refusal(0.03, by_rule=True).probability == 0.8
    assert models.of_refusal(0.3).probability == pytest.approx(0.7)
    del stored["refusal_rule"]
    path.write_text(json.dumps(stored))
    assert TrustModels(path).of_refusal(0.03, by_rule=True).probability == pytest.approx(0.97)


def test_a_who_question_needs_a_person_not_any_capitalised_name():
    analysis = analyse_question("Who was the first prime minister of Dominica?")
    storm = "Hurricane David struck Dominica in August 1979, destroying much of the housing."
    person = "It gained full independence in 1978, with Patrick John as its first prime minister."
    assert not states_answer_type(analysis, storm)  # a storm's name names no one
    assert states_answer_type(analysis, person)


def test_a_first_office_holder_does_not_answer_who_holds_it_now():
    first = "It gained full independence in 1978, with Patrick John as its first prime minister."
    assert not states_answer_type(analyse_question("Who is the current prime minister of Dominica?"), first)
    assert states_answer_type(analyse_question("Who was Dominica's first prime minister?"), first)
    # "first" about something other than the office says nothing about when.
    now = "Maria Lopez has been prime minister since 2004, the first to win four elections."
    assert states_answer_type(analyse_question("Who is the current prime minister of Dominica?"), now)
    current = analyse_question("Who is the current president of Dominica?")
    for past in ("previous", "founding", "outgoing", "former"):
        sentence = f"Charles Savarin, the {past} president, spoke at the ceremony."
        assert not states_answer_type(current, sentence), past


def test_an_article_named_after_a_person_answers_who_through_a_pronoun():
    question = analyse_question("who wrote capitalism and underdevelopment in latin america")
    sentence = "Perhaps his most notable work is Capitalism and Underdevelopment in Latin America."
    assert states_answer_type(question, sentence, "Andre Gunder Frank")
    # Without the title naming a person, or without the sentence pointing at one, nobody is named.
    assert not states_answer_type(question, sentence, "Dependency theory")
    assert not states_answer_type(question, sentence.replace("his", "the"), "Andre Gunder Frank")


def test_a_possessive_does_not_hide_the_measure_a_question_asks_for():
    analysis = analyse_question("What was Dominica's GDP in 2019?")
    assert analysis.answer_type == "number" and "gdp" in analysis.measure


# Two overlapping passages of one forum answer (MTRAG-UN train, fiqa): the chunker repeats the
# sentence they share, and the answer is a rate, not a sum of money.
_DOWN_PAYMENT = [
    "Rules of thumb?",
    "Sure - Put down 20% to pay no PMI.",
    "The mortgage payment should be no more than 28% of your gross monthly income.",
    "Set that money aside for long term investing or your emergency fund.",
]
DOWN_PAYMENT_START = make_passage("fiqa/rules-of-thumb", _DOWN_PAYMENT, title="Rules of thumb? Put down 20%")
DOWN_PAYMENT_END = make_passage(
    "fiqa/rules-of-thumb-2",
    [_DOWN_PAYMENT[3], "You can always make extra payments and shorten the length of the mortgage."],
    title="Rules of thumb? Put down 20%",
)


def test_a_how_much_question_is_answered_by_a_rate_not_refused_for_want_of_a_sum():
    question = "How much money do I need to put down for a mortgage?"
    signals = answerability_signals(question, hits(DOWN_PAYMENT_END, DOWN_PAYMENT_START))
    assert signals.type_missing == 0.0 and signals.slots_missing == 0.0
    verdict = SignalAnswerability().judge(question, hits(DOWN_PAYMENT_END, DOWN_PAYMENT_START))
    assert not verdict.by_rule, verdict.reason


def test_a_how_much_question_with_no_amount_or_rate_in_the_passages_is_still_refused():
    verdict = SignalAnswerability().judge(
        "How much money do I need to put down for a mortgage?", hits(DOWN_PAYMENT_END)
    )
    assert verdict.kind == UNANSWERABLE and verdict.by_rule


# Each verdict rule (reply_rules.VERDICT_RULES) on a question it decides, with the rules before it
# switched off where one of them would decide first; switched off too, the model's probability or a
# later rule gives the verdict, and the trace no longer names it.
VERDICT_RULE_CASES = [
    ("too_little_named", "And that?", (HISTORY,), (), UNDERSPECIFIED),
    ("amount_unstated", "How much money do I need to put down for a mortgage?", (DOWN_PAYMENT_END,), (),
     UNANSWERABLE),
    ("part_unstated", "How many people lived in Dominica in 2020 and when did it become a British colony?",
     (HISTORY,), ("amount_unstated",), "partial"),
    ("figure_unstated", "What is the area of Dominica?", (HISTORY,), (), UNANSWERABLE),
    ("overview_named", "Tell me about Dominica.", (HISTORY,), (), ANSWERABLE),
]  # fmt: skip


@pytest.mark.parametrize(("rule", "question", "passages", "off", "kind"), VERDICT_RULE_CASES)
def test_each_verdict_rule_decides_its_question_and_switched_off_decides_nothing(
    rule, question, passages, off, kind
):
    verdict = SignalAnswerability(rules_off=off).judge(question, hits(*passages))
    assert (verdict.rule, verdict.kind, verdict.by_rule) == (rule, kind, True)
    assert verdict.to_trace()["rule"] == rule
    without = SignalAnswerability(rules_off=(*off, rule)).judge(question, hits(*passages))
    assert without.rule != rule and rule not in json.dumps(without.to_trace())


def test_every_verdict_rule_has_a_case_and_a_preset_can_switch_it_off():
    assert [case[0] for case in VERDICT_RULE_CASES] == [rule.name for rule in reply_rules.VERDICT_RULES]
    config = AnswerConfig(rules_off=["figure_unstated"])
    assert config.rules_off == ("figure_unstated",)
