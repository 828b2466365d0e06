"""Models a user names (QA_NLI_MODEL, QA_SPAN_READER_MODEL): tiny local models load, their outputs
label claim support and mark answer spans in the run's trace, and a wrong name names the setting."""

from __future__ import annotations

import json

import pytest

from qa.pipeline.checks.nli import NLIVerifier, TransformersEntailmentModel, entailment_index
from qa.pipeline.checks.spans import TransformersSpanReader, best_span
from qa.pipeline.config.presets import get_preset
from qa.pipeline.core.types import SourceSentence
from qa.pipeline.drafting.generation import DraftSentence
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.run import PipelineRun
from qa.pipeline.flow.runner import answer_question
from qa.pipeline.search.embedding import HashingEmbedder, ModelNotAvailable
from qa.pipeline.search.memory_index import InMemoryCorpusIndex
from tests.qa.pipeline.test_run import DOCS, REFORMS
from tests.qa.pipeline.tiny_models import save_tiny_nli, save_tiny_span_reader


@pytest.fixture(scope="module")
def tiny_nli_path(tmp_path_factory) -> str:
    return save_tiny_nli(tmp_path_factory.mktemp("tiny-nli"))


@pytest.fixture(scope="module")
def tiny_reader_path(tmp_path_factory) -> str:
    return save_tiny_span_reader(tmp_path_factory.mktemp("tiny-squad2"))


@pytest.fixture(scope="module")
def index():
    return InMemoryCorpusIndex(DOCS, HashingEmbedder(), chunk_size=3, chunk_overlap=1)


def run_default(index, **models) -> PipelineRun:
    clients = ModelClients(embedder=HashingEmbedder(), **models)
    return answer_question(
        REFORMS, pipeline=build_pipeline(get_preset("default"), index=index, clients=clients)
    )


def final_verdicts(run: PipelineRun):
    return run.answering.attempts[-1].verification.verdicts


class FixedEntailment:
    """An EntailmentModel that judges every pair the same, to show what the verdict follows."""

    def __init__(self, probability: float) -> None:
        self.probability, self.name = probability, f"fixed-{probability}"
        self.pairs: list[tuple[str, str]] = []

    def entailment(self, pairs):
        self.pairs += list(pairs)
        return [self.probability] * len(pairs)


# --- NLI ---------------------------------------------------------------------------


def test_a_tiny_nli_model_loads_by_folder_and_reads_its_entailment_label(tiny_nli_path):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    pairs = [
        ("Oman has 3.2 million people.", "Oman has 3.2 million people."),
        ("Mali had a coup.", "Oman votes."),
    ]
    model = TransformersEntailmentModel(tiny_nli_path)
    got = model.entailment(pairs)
    tokenizer = AutoTokenizer.from_pretrained(tiny_nli_path)
    classifier = AutoModelForSequenceClassification.from_pretrained(tiny_nli_path)
    with torch.inference_mode():
        logits = classifier(
            **tokenizer([p for p, _ in pairs], [h for _, h in pairs], padding=True, return_tensors="pt")
        ).logits
    expected = torch.softmax(logits, dim=-1)[:, 1].tolist()  # label 1 is "entailment"
    assert got == pytest.approx(expected, abs=1e-5)
    assert got[0] != pytest.approx(got[1], abs=0.05)  # the pairs really differ


@pytest.mark.parametrize(
    "id2label, num_labels, expected",
    [
        ({0: "contradiction", 1: "entailment", 2: "neutral"}, 3, 1),
        ({0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}, 3, 0),
        ({0: "hallucinated", 1: "consistent"}, 2, 1),
        ({0: "not_entailment", 1: "entailment"}, 2, 1),
        ({0: "LABEL_0"}, 1, None),  # one logit: a sigmoid grounding score
    ],
)
def test_which_output_means_entailment(id2label, num_labels, expected):
    assert entailment_index(id2label, num_labels) == expected


def test_a_classifier_without_an_entailment_label_is_refused_naming_the_setting(tmp_path):
    path = save_tiny_nli(tmp_path, labels=("LABEL_0", "LABEL_1", "LABEL_2"))
    with pytest.raises(ModelNotAvailable, match=r"^QA_NLI_MODEL=.* none of its 3 labels .*LABEL_0"):
        TransformersEntailmentModel(path)


@pytest.mark.parametrize(
    "loader, setting",
    [(TransformersEntailmentModel, "QA_NLI_MODEL"), (TransformersSpanReader, "QA_SPAN_READER_MODEL")],
)
def test_a_wrong_model_name_names_the_setting(tmp_path, loader, setting):
    missing = str(tmp_path / "no-such-model")
    with pytest.raises(ModelNotAvailable, match=rf"^{setting}=.*no-such-model could not be loaded: "):
        loader(missing)


def test_the_nli_model_labels_claim_support_in_the_run(index):
    without = run_default(index)
    assert without.answering.outcome == "verified"
    doubting = FixedEntailment(0.05)
    run = run_default(index, nli=doubting)
    assert "verifier: lexical -> nli (fixed-0.05)" in run.substitutions
    assert run.answering.outcome != "verified"  # the lexical verifier alone verified this answer
    assert all(v.label == "unsupported" and v.entailment == 0.05 for v in final_verdicts(run))
    assert "P(entailed) = 0.05" in final_verdicts(run)[0].reason
    premise, hypothesis = doubting.pairs[0]
    assert "Oman" in premise and hypothesis in {s.text for a in run.answering.attempts for s in a.sentences}
    trusting = run_default(index, nli=FixedEntailment(0.9))
    assert trusting.answering.outcome == "verified"
    assert all(v.label == "supported" for v in final_verdicts(trusting))


def test_a_sure_nli_model_does_not_overrule_a_missing_number():
    cited = SourceSentence(1, "oman", "Oman", 0, "1", "Oman has a population of 3.2 million people.")
    draft = [DraftSentence("Oman has 4.1 million people.", (cited,)), DraftSentence("Uncited.", ())]
    verdicts = NLIVerifier(FixedEntailment(0.99)).verify("How many people live in Oman?", draft).verdicts
    assert verdicts[0].label == "unsupported" and "numbers not in the cited text: 4.1" in verdicts[0].reason
    assert verdicts[0].entailment == 0.99
    assert verdicts[1].label == "unsupported" and verdicts[1].entailment is None  # never asked


def test_a_tiny_nli_model_flows_into_the_trace_and_reads_back(index, tiny_nli_path):
    model = TransformersEntailmentModel(tiny_nli_path)
    run = run_default(index, nli=model)
    verdicts = final_verdicts(run)
    sentences = run.answering.attempts[-1].sentences
    expected = model.entailment([(p, h) for p, h in _pairs(run, index)])
    assert [v.entailment for v in verdicts] == pytest.approx(expected, abs=1e-4)
    for verdict, probability in zip(verdicts, expected, strict=True):
        assert verdict.label == (
            "supported" if probability >= 0.5 else "partial" if probability >= 0.25 else "unsupported"
        )
    assert len(sentences) == len(verdicts)
    assert PipelineRun.from_json(json.loads(json.dumps(run.to_json()))) == run


def _pairs(run: PipelineRun, index):
    """The (cited text with its title, answer sentence) pairs of the run's final attempt."""
    attempt = run.answering.attempts[-1]
    sentences = {s.id: s for d in DOCS for s in index.document_sentences(d.external_id)}
    for traced in attempt.sentences:
        cited = [sentences[i] for i in traced.citations]
        titles = " ".join(dict.fromkeys(c.document_title for c in cited if c.document_title))
        text = " ".join(c.text for c in cited)
        yield (f"{titles}. {text}" if titles else text), traced.text


# --- extractive reader ---------------------------------------------------------------


@pytest.mark.parametrize(
    "start, end, in_context, expected",
    [
        # the best span within the context, scored over the no-answer logit (token 0)
        ([0.0, 1.0, 5.0, 0.0], [0.0, 0.0, 1.0, 4.0], [False, True, True, True], (2, 3, 9.0)),
        # the question's tokens are never an answer however high they score
        ([0.0, 9.0, 1.0], [0.0, 9.0, 1.0], [False, False, True], (2, 2, 2.0)),
        # no answer wins when its logit beats every span
        ([8.0, 1.0, 1.0], [8.0, 1.0, 1.0], [False, True, True], None),
        # an end before its start is no span
        ([0.0, 0.0, 6.0], [0.0, 6.0, 2.0], [False, True, True], (2, 2, 8.0)),
    ],
)
def test_best_span(start, end, in_context, expected):
    assert best_span(start, end, in_context) == expected


def test_a_tiny_reader_gives_character_spans_inside_each_context(tiny_reader_path):
    reader = TransformersSpanReader(tiny_reader_path)
    contexts = ["After protests in 2011 the sultan enacted political reforms.", "The capital is Muscat."]
    spans = reader.best_spans("What reforms did the sultan enact?", contexts)
    assert len(spans) == 2 and any(span is not None for span in spans)
    for context, span in zip(contexts, spans, strict=True):
        if span is not None:
            start, end, score = span
            assert 0 <= start < end <= len(context) and score > 0
            assert context[start:end].strip() == context[start:end]  # whole word pieces, no padding


def test_the_readers_span_is_recorded_per_answer_sentence_in_the_trace(index, tiny_reader_path):
    reader = TransformersSpanReader(tiny_reader_path)
    run = run_default(index, span_reader=reader, nli=FixedEntailment(0.9))
    sentences = run.answering.attempts[-1].sentences
    expected = reader.best_spans(REFORMS, [s.text for s in sentences])
    verdicts = final_verdicts(run)
    assert any(v.span is not None for v in verdicts)
    for sentence, verdict, found in zip(sentences, verdicts, expected, strict=True):
        if found is None:
            assert verdict.span is None
        else:
            assert (verdict.span.start, verdict.span.end) == found[:2]
            assert verdict.span.text == sentence.text[found[0] : found[1]]
        assert verdict.label == "supported" and verdict.entailment == 0.9  # the NLI verdict is kept
    stored = json.loads(json.dumps(run.to_json()))
    assert PipelineRun.from_json(stored) == run
    spans = [v["span"] for v in stored["answering"]["attempts"][-1]["verification"]["verdicts"]]
    assert any(span and span["text"] for span in spans)
