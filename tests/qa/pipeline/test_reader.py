"""The passage reader as shipped (qa/pipeline/reading/models/reader.safetensors over the installed MiniLM):
a passage that states what is asked reads as answerable, the same passage for a question it does
not answer reads as less so, and a missing weights file is an error naming its setting.

The passages are short texts written for this test.
"""

from __future__ import annotations

import pytest

from qa.pipeline.checks.answerability import SignalAnswerability, load_model
from qa.pipeline.core.model_parts import build_models
from qa.pipeline.reading.reader import DEFAULT_THREADS, PassageReader, SpanReader
from qa.pipeline.search.embedding import ModelNotAvailable

BRIDGE_TITLE = "The Old Harbour Bridge"
BRIDGE = [
    "The Old Harbour Bridge crosses the river mouth at the east end of the town.",
    "Construction began in 1887 and the bridge opened to carts and walkers in 1891.",
    "Its iron spans were made in a foundry upriver and floated down on barges.",
    "A footpath on the north side was added during repairs after the flood of 1953.",
]
QUESTION = "when did the old harbour bridge open"
UNSTATED = "how many vehicles cross the old harbour bridge each day"


@pytest.fixture(scope="module")
def reader() -> PassageReader:
    return PassageReader()


def test_a_passage_that_states_the_answer_reads_as_more_answerable_than_one_that_does_not(reader):
    [stated] = reader.read(QUESTION, [(BRIDGE_TITLE, BRIDGE)])
    [unstated] = reader.read(UNSTATED, [(BRIDGE_TITLE, BRIDGE)])
    assert stated > 0.5
    assert unstated < stated - 0.2


def test_several_passages_are_read_in_one_call_each_on_its_own(reader):
    other = ["The town library moved into the former customs house in 1962."]
    both = reader.read(QUESTION, [(BRIDGE_TITLE, BRIDGE), ("The town library", other)])
    alone = reader.read(QUESTION, [(BRIDGE_TITLE, BRIDGE)])
    assert both[0] == pytest.approx(alone[0], abs=1e-4)
    assert both[1] < both[0]


def test_the_answerability_model_reads_the_top_passage(reader):
    judge = SignalAnswerability()
    assert "reader_answerable" in load_model().names
    assert judge.reader is not None


def test_a_missing_weights_file_is_an_error_naming_the_setting(tmp_path):
    missing = tmp_path / "no-reader.safetensors"
    reader = build_models(reader_weights=missing).reader  # as a site builds it from QA_READER_WEIGHTS
    with pytest.raises(ModelNotAvailable) as raised:
        reader.read(QUESTION, [(BRIDGE_TITLE, BRIDGE)])
    assert "QA_READER_WEIGHTS" in str(raised.value)
    assert str(missing) in str(raised.value)


def test_a_read_runs_on_its_own_thread_count_and_leaves_the_process_setting_as_it_was(reader):
    import torch

    before = torch.get_num_threads()
    seen = []
    original = reader.model.forward

    def forward(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return original(*args, **kwargs)

    reader.model.forward, reader.threads = forward, 1
    torch.set_num_threads(2)
    try:
        [score] = reader.read(QUESTION, [(BRIDGE_TITLE, BRIDGE)])
        assert seen == [1]
        assert torch.get_num_threads() == 2  # an encoder in the same process keeps its threads
        assert score > 0.5
    finally:
        del reader.model.forward
        torch.set_num_threads(before)


def test_the_reader_reads_on_one_thread_unless_the_factory_is_told_otherwise():
    # QA_READER_THREADS reaches the reader through the factory (qa.clients); a malformed value
    # stops start-up (tests/test_settings.py).
    assert DEFAULT_THREADS == 1
    assert build_models().reader.threads == 1
    assert build_models(reader_threads=0).reader.threads == 0


@pytest.fixture(scope="module")
def span_reader(tmp_path_factory) -> SpanReader:
    # A head of fixed random weights in the shipped file's format reads like a trained one as far
    # as offsets and the no-answer threshold go.
    import torch
    from safetensors.torch import save_file

    generator = torch.Generator().manual_seed(7)
    path = tmp_path_factory.mktemp("span-reader") / "span.safetensors"
    head = {
        "span.weight": torch.randn(2, 384, generator=generator),
        "span.bias": torch.randn(2, generator=generator),
    }
    save_file(head, str(path), metadata={"null_threshold": "0.5", "trained_on": '"a test head"'})
    return SpanReader(path, guesses=False)


def test_our_span_reader_marks_characters_inside_each_context(span_reader):
    contexts = [" ".join(BRIDGE), BRIDGE[1], "Muscat."]
    scored = span_reader.span_scores(QUESTION, contexts)
    assert len(scored) == len(contexts)
    for context, (start, end, _) in zip(contexts, scored, strict=True):
        assert 0 <= start < end <= len(context)
        assert context[start:end].strip() == context[start:end]  # whole word pieces, no padding


def test_our_span_reader_answers_only_where_a_span_beats_no_answer_by_its_threshold(span_reader):
    contexts = [" ".join(BRIDGE), BRIDGE[1], "Muscat."]
    scored = span_reader.span_scores(QUESTION, contexts)
    spans = span_reader.best_spans(QUESTION, contexts)
    assert span_reader.null_threshold == 0.5
    for (start, end, score), span in zip(scored, spans, strict=True):
        if score > 0.5:
            assert span == (start, end, pytest.approx(score - 0.5, abs=1e-4))
        else:
            assert span is None
    assert span_reader.span_scores(QUESTION, []) == [] and span_reader.best_spans(QUESTION, []) == []


def test_our_span_reader_as_shipped_points_into_every_context_and_says_it_guesses(span_reader):
    """The shipped reader only points: every answer sentence gets its likeliest span, the score still
    over the threshold (negative where it would have said no answer), and the spans say they guess."""
    pointer = SpanReader(span_reader.path)
    contexts = [" ".join(BRIDGE), BRIDGE[1], "Muscat."]
    scored = span_reader.span_scores(QUESTION, contexts)
    assert pointer.guesses and not span_reader.guesses
    assert pointer.best_spans(QUESTION, contexts) == [
        (start, end, pytest.approx(score - 0.5, abs=1e-4)) for start, end, score in scored
    ]


def test_a_missing_span_reader_file_is_an_error_naming_the_setting(tmp_path):
    with pytest.raises(
        ModelNotAvailable, match=r"QA_SPAN_READER_MODEL=.*absent\.safetensors could not be loaded"
    ):
        SpanReader(tmp_path / "absent.safetensors", setting="QA_SPAN_READER_MODEL")
