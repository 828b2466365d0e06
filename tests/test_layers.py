"""Services queue tasks by name (lint-imports keeps them from importing the tasks that call them)."""

from __future__ import annotations

import ast
from pathlib import Path

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
# Keyed by module path under qa/pipeline and name. checks/reply.py, flow/answering.py and
# flow/stages.py are being rewritten elsewhere; their entries are such names too, not English lists
# left behind.
_NAMES_NOT_ENGLISH = {
    ("checks/answerability.py", "_KIND_LINE"): "the reply kinds the answerability prompt asks an LLM for",
    ("checks/nli.py", "ENTAILMENT_LABELS"): "label names in NLI models' configs",
    ("checks/reply.py", "OUTCOMES"): "the reply outcomes the API carries",
    ("checks/reply.py", "SENTENCE_LABELS"): "the answer sentence labels the API carries",
    ("checks/reply.py", "LABEL_WORDS"): "what the answer card writes for each label",
    ("checks/reply.py", "RELATION_WORDS"): "what the answer card writes for each relation",
    ("config/parameters.py", "CHUNKER_DEFAULTS"): "chunker names",
    ("config/presets.py", "FLOW_PRESETS"): "preset names",
    ("drafting/citations.py", "STRATEGIES"): "citation strategy names",
    ("drafting/generation_output.py", "_JSON_TEXT_KEYS"): "JSON keys an LLM's reply uses",
    ("drafting/generation_output.py", "_JSON_ID_KEYS"): "JSON keys an LLM's reply uses",
    ("drafting/prompts.py", "_BLOCK_TAGS"): "markup tags of prompts and chat templates",
    ("flow/answering.py", "ANSWERING_STAGES"): "stage names",
    ("flow/run.py", "STAGES"): "stage names",
    ("flow/run_v1.py", "_SUPPORT"): "the support labels of version-1 run records",
    ("flow/stages.py", "ANSWER_STAGES"): "stage names",
    ("search/memory_index.py", "UNITS"): "passage unit names",
    ("search/retrievers.py", "BASE_RETRIEVERS"): "retriever names",
}


def test_every_english_word_list_of_the_pipeline_is_defined_in_the_lexicon():
    # One list per kind of word, with its source, in the qa/pipeline/core/lexicon package: a module
    # that writes its own pronouns or months drifts from the others (five pronoun lists and four
    # month lists had grown apart), and nobody can say where its words came from.
    from bench.lexicon_inventory import scan

    outside = [
        f"qa/pipeline/{found.module}:{found.line} {found.name} ({found.kind}: {' '.join(found.words)})"
        for found in scan()
        if (found.module, found.name) not in _NAMES_NOT_ENGLISH
    ]
    assert outside == [], "word lists outside qa/pipeline/core/lexicon/:\n" + "\n".join(outside)


@pytest.mark.parametrize(
    ("source", "is_word_list"),
    [
        ('X = frozenset({"he", "him", "his", "she"})', True),
        ('X = frozenset({"he", "she", "it"})', True),
        ('X = ("this", "these", "those")', True),
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
        ('X = re.compile(r"^\\s*(?:and|also|or)\\s+(.+?)$")', True),
        ('X = re.compile(r"^(?:The|A|An)\\s+(?=\\S)")', True),
        ('X = re.compile(r"\\[((?:sources?|refs?|citations?)?\\s*\\d+)\\]")', True),
        ('X = re.compile(r"(\\d+)\\s*(%|percent\\b|per cent\\b|million\\b)?")', True),
        ('X = re.compile(rf"\\b(?:who|whom|whose)\\b|{alternation(NOUNS)}")', True),
        ('X = re.compile(r"\\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|may)\\b")', True),
        ('X = r"(?:what|who|whom|when)"', True),
        ('X = "(?:" + "|".join(WORDS) + r"|such|the\\s+more|that)\\b"', True),
        ('X = frozenset({"NN", "NNS", "NNP", "NNPS"})', False),
        ("X = lexicon.THIRD_PERSON_PRONOUNS", False),
        ("X = frozenset(stem(w) for w in lexicon.QUESTION_WORDS)", False),
        ('X = tuple(word for word in lexicon.DEMONSTRATIVES if word != "that")', False),
        ('X = re.compile(rf"\\b{alternation(WORDS)}\\b")', False),
        ('X = re.compile(rf"^\\s*(?:what|how)\\s+about\\s+(?:{alternation(WORDS)}|such)\\b")', False),
        ('X = re.compile(r"(?:,|;|and|&|-|\\u2013)\\s*(?:[Ss](?:entence)?\\s*)?\\d+")', False),
        ('X = re.compile(r"(?<![\\w.])(\\d{1,3}(?:,\\d{3})+|\\d+)(\\.\\d+)?")', False),
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

    from bench.lexicon_inventory import LEXICON_PACKAGE, PIPELINE_DIR

    modules = sorted((PIPELINE_DIR / LEXICON_PACKAGE).glob("*.py"))
    assert len(modules) > 1
    uncommented = []
    for path in modules:
        lines = path.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(lines))
        for statement in tree.body:
            if not isinstance(statement, (ast.Assign, ast.AnnAssign)):
                continue
            above = lines[statement.lineno - 2].strip() if statement.lineno > 1 else ""
            if not above or not (above.startswith("#") or above.endswith((")", "}", '"'))):
                uncommented.append(f"{path.name}:{statement.lineno}")
    assert uncommented == []


def test_no_file_of_the_lexicon_is_over_the_house_limit():
    # HOUSE_STYLE: split a module before it passes a few hundred lines of unrelated things; the
    # lexicon grew to 705 lines as one module before it became a package of themed ones.
    from bench.lexicon_inventory import LEXICON_PACKAGE, PIPELINE_DIR

    lengths = {
        path.name: len(path.read_text(encoding="utf-8").splitlines())
        for path in (PIPELINE_DIR / LEXICON_PACKAGE).glob("*.py")
    }
    assert lengths and max(lengths.values()) <= 600, lengths


# --- models are parts, passed in (issue 26) ---------------------------------------------------

PIPELINE = Path(__file__).resolve().parent.parent / "qa" / "pipeline"

# Calls that load a model's weights or data. ``X.load`` counts only for these modules and spaCy
# model packages (``json.load`` of a result file is no model).
LOADERS = {
    "from_pretrained",
    "SentenceTransformer",
    "CrossEncoder",
    "Llama",
    "safe_open",
    "load_default_model",
    "load_model",
    "load_turn_model",
    "load_entity_tagger",
    "load_part_of_speech_tagger",
    "PassageReader",
    "TrustModels",
    "build_models",
}
LOADING_MODULES = {"spacy", "torch", "joblib", "pickle"}
# Where building models belongs: the factories and loaders, named as such.
FACTORY_PREFIXES = ("load", "_load", "build", "_build")
# The one memoised factory: the shipped models for callers without a site (benches, tests).
MEMOISED_FACTORIES = {("model_parts.py", "default_models")}
# nupunkt's punkt parameters are the sentence splitter's data (no setting, the same for every
# site); ``segment`` runs in parsing, where no pipeline exists to pass them in.
MEMOISED_SPLITTER = {("segment.py", "_tokenizer")}


def _pipeline_modules():
    for path in sorted(PIPELINE.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _is_loader(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in LOADERS
    if isinstance(func, ast.Attribute):
        if func.attr in LOADERS:
            return True
        base = func.value.id if isinstance(func.value, ast.Name) else ""
        return func.attr == "load" and (base in LOADING_MODULES or base.startswith("en_core"))
    return False


def _loader_calls(tree: ast.AST):
    """(call, enclosing functions innermost last, whether inside a class) for every loader call."""

    def walk(node, functions, in_class):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                yield from walk(child, [*functions, child], in_class)
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, functions, True)
            else:
                if isinstance(child, ast.Call) and _is_loader(child):
                    yield child, functions, in_class
                yield from walk(child, functions, in_class)

    yield from walk(tree, [], False)


def _memoised(function: ast.FunctionDef) -> bool:
    return any("cache" in ast.unparse(decorator) for decorator in function.decorator_list)


def test_the_pipeline_reads_no_environment():
    # Settings are read once, by groundedqa_site/settings.py; the factory passes the values in.
    found = []
    for path, tree in _pipeline_modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv"):
                found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
            if isinstance(node, ast.ImportFrom) and node.module == "os":
                names = {alias.name for alias in node.names} & {"environ", "getenv", "putenv"}
                found += [f"{path.name}:{node.lineno} from os import {name}" for name in names]
    assert found == []


def test_pipeline_models_are_loaded_only_by_factories_never_at_import_or_by_a_stage():
    found = []
    for path, tree in _pipeline_modules():
        for call, functions, in_class in _loader_calls(tree):
            where = f"{path.name}:{call.lineno} {ast.unparse(call.func)}"
            if not functions and not in_class:
                found.append(f"{where} at import time")
            elif functions and not in_class and not functions[-1].name.startswith(FACTORY_PREFIXES):
                if (path.name, functions[-1].name) not in MEMOISED_FACTORIES | MEMOISED_SPLITTER:
                    found.append(f"{where} in {functions[-1].name}, which is no factory or loader")
            for function in functions:
                if _memoised(function) and (path.name, function.name) not in (
                    MEMOISED_FACTORIES | MEMOISED_SPLITTER
                ):
                    found.append(f"{where}: {function.name} keeps a model for the whole process")
    assert found == []


def test_a_pipeline_given_its_models_runs_on_them_alone(monkeypatch):
    # A site's models (qa.clients.pipeline_models: its QA_READER_WEIGHTS, its threads) must reach
    # every stage; a stage falling back to the shipped models would ignore the site's settings
    # there without a word. With the fallback made to fail, the answers must come out the same.
    from qa.pipeline.config.presets import get_preset
    from qa.pipeline.core import model_parts
    from qa.pipeline.dialogue import conversation
    from qa.pipeline.flow.factory import ModelClients, build_pipeline
    from qa.pipeline.flow.runner import answer_question
    from qa.pipeline.search.embedding import HashingEmbedder
    from qa.pipeline.search.memory_index import InMemoryCorpusIndex
    from tests.qa.pipeline.test_run import DOCS, REFORMS

    site = model_parts.build_models()
    index = InMemoryCorpusIndex(DOCS, HashingEmbedder(), chunk_size=3, chunk_overlap=1)
    pipeline = build_pipeline(
        get_preset("default"), index=index, clients=ModelClients(embedder=HashingEmbedder(), models=site)
    )
    history = [("What did the sultan do after the 2011 protests?", "He enacted political reforms.")]
    follow_up = "Which council did he give more powers?"

    def answers():
        first = answer_question(REFORMS, pipeline=pipeline)
        refused = answer_question("How many moons does Jupiter have?", pipeline=pipeline)
        rewrite = conversation.rewrite(follow_up, history, models=site)
        later = answer_question(follow_up, pipeline=pipeline, rewrite=rewrite)
        return [(run.answer.text, run.answer.kind, run.answer.confidence) for run in (first, refused, later)]

    expected = answers()

    def no_fallback(**_):
        raise AssertionError("a stage loaded the shipped models instead of using the pipeline's")

    model_parts.default_models.cache_clear()
    monkeypatch.setattr(model_parts, "build_models", no_fallback)
    try:
        assert answers() == expected
    finally:
        monkeypatch.undo()
        model_parts.default_models.cache_clear()
    assert expected[0][1] == "answerable" and expected[1][1] == "unanswerable"


# --- the pipeline's layout: every module in a sub-package that says what it owns ---


def test_every_pipeline_module_lives_in_a_sub_package_that_says_what_it_owns_and_may_import():
    # A newcomer finds a stage's code by its sub-package; a module left at qa/pipeline's top
    # level, or a sub-package the import contract does not name, would go unchecked.
    import tomllib

    top_level = sorted(p.name for p in PIPELINE.glob("*.py") if p.name != "__init__.py")
    assert top_level == [], "place these in a sub-package (docs/pipeline-layout.md)"
    packages = sorted(p.name for p in PIPELINE.iterdir() if (p / "__init__.py").is_file())
    contracts = tomllib.loads((PIPELINE.parent.parent / "pyproject.toml").read_text())["tool"][
        "importlinter"
    ]["contracts"]
    layers = next(c["layers"] for c in contracts if c.get("containers") == ["qa.pipeline"])
    assert sorted(layers) == packages
    for package in packages:
        doc = ast.get_docstring(ast.parse((PIPELINE / package / "__init__.py").read_text()))
        assert doc and "May import:" in doc, package
