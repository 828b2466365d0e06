"""Services queue tasks by name (lint-imports keeps them from importing the tasks that call them)."""

from __future__ import annotations

import pytest

from documents.services import EMBED_DOCUMENT_TASK
from groundedqa_site.celery import app
from qa.services.stage_jobs import STAGE_TASKS
from review.services.evaluation import RUN_EVALUATION_TASK


def test_every_task_a_service_queues_by_name_is_one_the_worker_registers():
    # Services queue by name (they may not import the tasks that call them); a
    # renamed task would otherwise leave questions queued forever.
    app.loader.import_default_modules()
    for name in (EMBED_DOCUMENT_TASK, *STAGE_TASKS.values(), RUN_EVALUATION_TASK):
        assert name in app.tasks, name


# Module-level names in qa/pipeline whose words are names the project or a model's output format
# defines, not English the pipeline reads language with; they stay beside the code that owns them.
_NAMES_NOT_ENGLISH = {
    ("answerability.py", "_KIND_LINE"): "the reply kinds the answerability prompt asks an LLM for",
    ("answering.py", "ANSWERING_STAGES"): "stage names",
    ("citations.py", "STRATEGIES"): "citation strategy names",
    ("generation_output.py", "_JSON_TEXT_KEYS"): "JSON keys an LLM's reply uses",
    ("generation_output.py", "_JSON_ID_KEYS"): "JSON keys an LLM's reply uses",
    ("nli.py", "ENTAILMENT_LABELS"): "label names in NLI models' configs",
    ("presets.py", "FLOW_PRESETS"): "preset names",
    ("prompts.py", "_BLOCK_TAGS"): "markup tags of prompts and chat templates",
    ("retrievers.py", "BASE_RETRIEVERS"): "retriever names",
    ("run.py", "STAGES"): "stage names",
}


def test_every_english_word_list_of_the_pipeline_is_defined_in_the_lexicon():
    # One list per kind of word, with its source, in qa/pipeline/lexicon.py: a module that writes
    # its own pronouns or months drifts from the others (five pronoun lists and four month lists
    # had grown apart), and nobody can say where its words came from.
    from bench.lexicon_inventory import scan

    outside = [
        f"{found.module}:{found.line} {found.name} ({found.kind}: {' '.join(found.words[:6])} ...)"
        for found in scan()
        if (found.module, found.name) not in _NAMES_NOT_ENGLISH
    ]
    assert outside == [], "word lists outside qa/pipeline/lexicon.py:\n" + "\n".join(outside)


@pytest.mark.parametrize(
    ("source", "is_word_list"),
    [
        ('X = frozenset({"he", "him", "his", "she"})', True),
        ('X = {"what", "who", "whom", "whose"}', True),
        ('X = ("ly", "ed", "ing", "ous")', True),
        ('X = frozenset("rain rains raining rained".split())', True),
        ('X = frozenset(stem(w) for w in """tell know\n    want need""".split())', True),
        ('X = content_words("happen happened happens happening")', True),
        ('X = NEGATIONS | frozenset({"lift", "lifted", "ended", "eased"})', True),
        ('X = {"it": "", "its": "\'s", "they": "", "their": "\'s"}', True),
        ('X = tuple(frozenset(a.split()) for a in ("won win wins", "lost lose loses"))', True),
        ('X = re.compile(r"\\b(?:it|its|they|them)\\b", re.I)', True),
        ('X = re.compile(r"^(?P<aux>is|are|was|were)\\s+")', True),
        ('X = r"(?:what|who|whom|when)"', True),
        ('X = frozenset({"he", "she", "it"})', False),
        ('X = frozenset({"NN", "NNS", "NNP", "NNPS"})', False),
        ("X = lexicon.THIRD_PERSON_PRONOUNS", False),
        ("X = frozenset(stem(w) for w in lexicon.QUESTION_WORDS)", False),
        ('X = re.compile(rf"\\b{alternation(WORDS)}\\b")', False),
        ('X = re.compile(r"\\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|may)\\b")', False),
        ('X = "You answer questions using only the numbered sentences. Reply in one line."', False),
        ('X = (("iso", re.compile("a")), ("day-month", re.compile("b")))', False),
        ('X = Literal["answer", "partial", "ask_back", "refused"]', False),
        ('X = Parameter("retriever", "retrieval", "method", str, "Retriever")', False),
    ],
)
def test_the_scan_finds_word_lists_in_every_shape_the_pipeline_wrote_them(tmp_path, source, is_word_list):
    from bench.lexicon_inventory import word_lists_in

    module = tmp_path / "module.py"
    module.write_text(source + "\n", encoding="utf-8")
    assert bool(list(word_lists_in(module))) is is_word_list


def test_every_list_in_the_lexicon_says_where_its_words_come_from():
    # A list's comment (or the comment of the group it is written in, without a blank line
    # between) names its source: a closed grammatical class, a published list, or the questions
    # it was collected from by hand.
    import ast

    from bench.lexicon_inventory import LEXICON_MODULE, PIPELINE_DIR

    path = PIPELINE_DIR / LEXICON_MODULE
    lines = path.read_text(encoding="utf-8").splitlines()
    tree = ast.parse("\n".join(lines))
    uncommented = []
    for statement in tree.body:
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)):
            continue
        above = lines[statement.lineno - 2].strip() if statement.lineno > 1 else ""
        if not above or not (above.startswith("#") or above.endswith((")", "}", '"'))):
            uncommented.append(f"{LEXICON_MODULE}:{statement.lineno}")
    assert uncommented == []
