"""Where qa/pipeline defines English word lists outside the lexicon.

    .venv/bin/python -m bench.lexicon_inventory [--all] [--words]

A word list is a module-level name bound to a set, frozenset, tuple, list or dict literal (or a
``frozenset(...)``/``set(...)``/``tuple(...)`` of one, or ``"a b c".split()``) holding at least
three lowercase words, or to a pattern (``re.compile`` or a plain string) one of whose
alternations has at least three alternatives that are words: letters, spaces, ``\\s``, ``\\b``
and optional letters (``\\b(?:one|two|three)\\b``, ``(?:sources?|refs?|citations?)``,
``(?:The|A|An)``). What a pattern interpolates (``{alternation(WORDS)}``) is not read, so a pattern
built from the lexicon's words passes. Everything under ``qa/pipeline/core/lexicon/`` is allowed;
the scan prints what every other module defines, as module path and line, and the totals.
``--all`` includes the lexicon itself; ``--words`` prints the words too. tests/test_layers.py runs
the same scan and fails on any finding outside the lexicon.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PIPELINE_DIR = Path(__file__).resolve().parent.parent / "qa" / "pipeline"
LEXICON_PACKAGE = "core/lexicon"
MIN_WORDS = 3

# A lowercase word, a phrase of such words, or one with an apostrophe or hyphen ("isn't",
# "cross-border"): what a list of English words holds, unlike field names ("answer_text"), labels
# ("PERSON"), prompts (capitalised, punctuated) or punctuation tables.
_WORD = re.compile(r"[a-z][a-z'\-]*(?: [a-z][a-z'\-]*)*")
# A stand-in for what a pattern interpolates ({alternation(WORDS)}, "|".join(...)) or a character
# class: never a word, so a pattern built from the lexicon's words finds nothing here.
_OPAQUE = "\x00"
# What follows "(" before a group's first alternative: "?:", "?P<name>", lookarounds, inline flags.
_GROUP_PREFIX = re.compile(r"\?(?::|P<\w+>|=|!|<=|<!|[aiLmsux]+(?:-[imsx]+)?[:)]?)")


@dataclass(frozen=True)
class WordList:
    module: str
    name: str
    line: int
    kind: str  # "collection" or "regex"
    words: tuple[str, ...]


def _as_word(alternative: str) -> str | None:
    """The words an alternative of a pattern spells (``documents?\\s+`` -> "documents"), or None
    when it holds anything but letters, word boundaries, whitespace and optional letters."""
    text = alternative.replace("\\b", "")
    text = re.sub(r"\\s[+*?]?", " ", text)
    text = re.sub(r"(?<=[A-Za-z ])[?+*]", "", text)
    text = " ".join(text.split())
    return text.lower() if re.fullmatch(r"[A-Za-z][A-Za-z'\-]*(?: [A-Za-z][A-Za-z'\-]*)*", text) else None


def regex_words(pattern: str) -> list[tuple[str, ...]]:
    """For each alternation of a pattern (a group's, or the pattern's own at the top), the words
    among its alternatives, when there are at least MIN_WORDS of them. A nested group whose every
    alternative is a word counts as letters of its parent ("jan(?:uary)?" is one word)."""
    groups: list[list[str]] = []
    stack: list[list[str]] = [[""]]
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            stack[-1][-1] += pattern[i : i + 2]
            i += 2
        elif char == "[":
            end = i + 1
            end += pattern[end : end + 1] == "^"
            end += pattern[end : end + 1] == "]"
            while end < len(pattern) and pattern[end] != "]":
                end += 2 if pattern[end] == "\\" else 1
            stack[-1][-1] += _OPAQUE
            i = end + 1
        elif char == "(":
            prefix = _GROUP_PREFIX.match(pattern, i + 1)
            i = prefix.end() if prefix else i + 1
            stack.append([""])
        elif char == ")" and len(stack) > 1:
            alternatives = stack.pop()
            groups.append(alternatives)
            words = [_as_word(a) for a in alternatives]
            stack[-1][-1] += alternatives[0] if all(words) else _OPAQUE
            i += 1
        elif char == "|":
            stack[-1].append("")
            i += 1
        else:
            stack[-1][-1] += char
            i += 1
    groups.extend(stack)
    found = []
    for alternatives in groups:
        words = tuple(word for word in map(_as_word, alternatives) if word)
        if len(words) >= MIN_WORDS:
            found.append(words)
    return found


def _is_regex_compile(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "compile"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "re"
    )


def _text_of(node: ast.AST) -> str | None:
    """The text of a string expression (a literal, an f-string, a concatenation with ``+``), what it
    interpolates or calls standing as _OPAQUE; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_text_of(part) or _OPAQUE for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text_of(node.left), _text_of(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else _OPAQUE) + (right if right is not None else _OPAQUE)
    return None


def _strings(node: ast.AST) -> Iterator[str]:
    """The texts of the string expressions of an expression, except inside type subscripts
    (``Literal[...]``)."""
    if isinstance(node, ast.Subscript):
        return
    text = _text_of(node)
    if text is not None:
        yield text
        return
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


def word_lists_in(path: Path, module: str | None = None) -> Iterator[WordList]:
    """Every module-level word list of one module (named ``module``, its file name by default):
    collections, and alternations in patterns."""
    module = module or path.name
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for statement in tree.body:
        names, value = _assigned_names(statement)
        if not names or value is None:
            continue
        words = [] if _only_strings(value) else _collection_words(value)
        if len(words) >= MIN_WORDS:
            for name in names:
                yield WordList(module, name, statement.lineno, "collection", tuple(words))
        if isinstance(value, ast.Subscript):
            continue
        for text in _strings(value):
            for run in regex_words(text):
                for name in names:
                    yield WordList(module, name, statement.lineno, "regex", run)


def scan(directory: Path = PIPELINE_DIR, *, include_lexicon: bool = False) -> list[WordList]:
    found: list[WordList] = []
    for path in sorted(directory.rglob("*.py")):
        relative = path.relative_to(directory)
        if relative.parts[:2] == tuple(LEXICON_PACKAGE.split("/")) and not include_lexicon:
            continue
        found.extend(word_lists_in(path, relative.as_posix()))
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="include the lexicon package")
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
