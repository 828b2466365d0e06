"""Where qa/pipeline defines English word lists outside the lexicon.

    .venv/bin/python -m bench.lexicon_inventory [--all] [--words]

A word list is a module-level name bound to a set, frozenset, tuple or list literal (or a
``frozenset(...)``/``set(...)``/``tuple(...)`` of one) holding at least four string literals that
are lowercase words, or to ``re.compile`` of a pattern that alternates at least four words
(``\\b(?:one|two|three|four)\\b``). Everything ``qa/pipeline/core/lexicon.py`` defines is allowed; the
scan prints what every other module defines, per module, and the totals. ``--all`` includes
lexicon.py itself; ``--words`` prints the words too. tests/test_layers.py runs the same scan and
fails on any finding outside the lexicon.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PIPELINE_DIR = Path(__file__).resolve().parent.parent / "qa" / "pipeline"
LEXICON_MODULE = "core/lexicon.py"
MIN_WORDS = 4

# A lowercase word, a phrase of such words, or one with an apostrophe or hyphen ("isn't",
# "cross-border"): what a list of English words holds, unlike field names ("answer_text"), labels
# ("PERSON"), prompts (capitalised, punctuated) or punctuation tables.
_WORD = re.compile(r"[a-z][a-z'\-]*(?: [a-z][a-z'\-]*)*")
# Four or more plain words alternated in a regular expression ("(?:is|are|was|were)"), as one
# group: the run starts after "(", ":", ">" (a named group) or "|" and ends before ")" or "|".
_ALTERNATION = re.compile(r"(?:(?<=[(:>|])|^)([a-z][a-z' ]*(?:\|[a-z][a-z' ]*){3,})(?=[)|]|$)")


@dataclass(frozen=True)
class WordList:
    module: str
    name: str
    line: int
    kind: str  # "collection" or "regex"
    words: tuple[str, ...]


def regex_words(pattern: str) -> list[tuple[str, ...]]:
    """Each run of four or more plain words a pattern alternates between."""
    return [tuple(run.split("|")) for run in _ALTERNATION.findall(pattern)]


def _is_regex_compile(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "compile"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "re"
    )


def _strings(node: ast.AST) -> Iterator[str]:
    """The string literals of an expression, except inside type subscripts (``Literal[...]``)."""
    if isinstance(node, ast.Subscript):
        return
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    for child in ast.iter_child_nodes(node):
        yield from _strings(child)


def _only_strings(node: ast.AST) -> bool:
    # A bare string, f-string or concatenation of them: a prompt or a pattern fragment, not a
    # collection.
    if isinstance(node, (ast.Constant, ast.JoinedStr)):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _only_strings(node.left) and _only_strings(node.right)
    return False


def _words_of(text: str) -> list[str]:
    return text.split() if _WORD.fullmatch(" ".join(text.split())) else []


def _collection_words(node: ast.AST) -> list[str]:
    """The words of a collection literal (a set, tuple, list or dict of words, or a collection of
    such collections), of ``"a b c".split()``, and of a call given words in one literal
    (``frozenset(...)``, ``content_words("a b c")``). A tuple mixing words with other values is a
    record ("iso", <pattern>), not a word list; a call given one word per argument is a call."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _words_of(node.value)
    if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        if not all(
            (isinstance(e, ast.Constant) and isinstance(e.value, str))
            or isinstance(e, (ast.Set, ast.Tuple, ast.List))
            for e in node.elts
        ):
            return []
        return [word for element in node.elts for word in _collection_words(element)]
    if isinstance(node, ast.Dict):
        keys = [word for key in node.keys if key is not None for word in _collection_words(key)]
        return keys + [word for value in node.values for word in _collection_words(value)]
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "split":
            return _collection_words(func.value)
        if _is_regex_compile(node):
            return []
        found = [
            word for arg in node.args for word in _collection_words(arg) if not isinstance(arg, ast.Constant)
        ]
        found += [
            word
            for arg in node.args
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and " " in arg.value.strip()
            for word in _words_of(arg.value)
        ]
        return found
    if isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
        return [word for generator in node.generators for word in _collection_words(generator.iter)]
    if isinstance(node, ast.BinOp):
        return _collection_words(node.left) + _collection_words(node.right)
    return []


def _assigned_names(statement: ast.stmt) -> tuple[list[str], ast.AST | None]:
    if isinstance(statement, ast.Assign):
        names = [target.id for target in statement.targets if isinstance(target, ast.Name)]
        return names, statement.value
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return [statement.target.id], statement.value
    return [], None


def word_lists_in(path: Path) -> Iterator[WordList]:
    """Every module-level word list of one module: collections, and alternations in patterns."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for statement in tree.body:
        names, value = _assigned_names(statement)
        if not names or value is None:
            continue
        words = [] if _only_strings(value) else _collection_words(value)
        if len(words) >= MIN_WORDS:
            for name in names:
                yield WordList(path.name, name, statement.lineno, "collection", tuple(words))
        if isinstance(value, ast.Subscript):
            continue
        for text in _strings(value):
            for run in regex_words(text):
                for name in names:
                    yield WordList(path.name, name, statement.lineno, "regex", run)


def scan(directory: Path = PIPELINE_DIR, *, include_lexicon: bool = False) -> list[WordList]:
    found: list[WordList] = []
    for path in sorted(directory.rglob("*.py")):
        if path.relative_to(directory).as_posix() == LEXICON_MODULE and not include_lexicon:
            continue
        found.extend(word_lists_in(path))
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="include lexicon.py")
    parser.add_argument("--words", action="store_true", help="print the words of each list")
    args = parser.parse_args(argv)
    found = scan(include_lexicon=args.all)
    for item in found:
        print(f"{item.module}:{item.line} {item.name} {item.kind} {len(item.words)} words")
        if args.words:
            print("    " + " ".join(item.words))
    modules = {item.module for item in found}
    words = sum(len(item.words) for item in found)
    print(f"{len(found)} word lists ({words} words) in {len(modules)} modules")


if __name__ == "__main__":
    main()
