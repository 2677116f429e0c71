"""The engine names no framework: what belongs to one framework is its data (frameworks/, rulepacks/).

Every file under engine/ is read. In Python files, comments and docstrings may name a framework's
things as examples (`TORCH_LIBRARY_IMPL(aten, Key, m)`), so only code is searched: the names
and the string literals that are not docstrings (a string that is a module's, class's or
function's first statement). Other files (the condition grammar) are searched whole.

A word is found case-insensitively, as a whole word or as a part of an identifier (`torch_version`,
`TORCH_LIBRARY_IMPL`, `isCuda`, `PrivateUse1Hooks`), but not inside an unrelated word
(`InputError`, `concatenate`).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parent.parent / "engine"
FRAMEWORK_WORDS = ("torch", "aten", "PrivateUse1", "cuda", "npu", "jax", "xla", "pjrt")
# A word starts where no letter or digit precedes it, or where a capital follows a small letter or
# digit (`isCuda`); it ends where no small letter follows (`torch_`, `CUDAGuard`, `npu0`).
_FRAMEWORK_WORD = re.compile(
    "|".join(rf"(?:(?<![A-Za-z0-9])|(?<=[a-z0-9])(?=[A-Z]))(?i:{word})(?![a-z])" for word in FRAMEWORK_WORDS)
)
# Python 3.12 splits an f-string into tokens of its own; their text parts are searched too.
_CODE_TOKENS = frozenset({tokenize.NAME, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)})


def engine_files() -> list[Path]:
    return sorted(
        path
        for path in ENGINE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    )


def framework_words(text: str) -> list[str]:
    return [match.group() for match in _FRAMEWORK_WORD.finditer(text)]


def code_words(source: str) -> Iterator[tuple[int, str]]:
    """(line, word) of each framework word in the names and non-docstring strings of Python source."""
    docstrings = _docstring_starts(source)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in _CODE_TOKENS and token.start not in docstrings:
            yield from ((token.start[0], word) for word in framework_words(token.string))


def _docstring_starts(source: str) -> set[tuple[int, int]]:
    """Where each docstring starts: (line, column) of the first statement of a module, class or
    function when it is a string."""
    starts = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and _is_string(first.value):
                starts.add((first.lineno, first.col_offset))
    return starts


def _is_string(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def found_in(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return [f"{path.relative_to(ENGINE)}:{line}: {word}" for line, word in code_words(text)]
    return [
        f"{path.relative_to(ENGINE)}:{number}: {word}"
        for number, line in enumerate(text.splitlines(), 1)
        for word in framework_words(line)
    ]


def test_no_engine_file_names_a_framework_outside_comments_and_docstrings():
    found = [hit for path in engine_files() for hit in found_in(path)]
    assert not found, "framework words in the engine's code:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("torch_version = catalog.torch_version", ["torch", "torch"]),
        ("TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)", ["TORCH", "aten", "PrivateUse1"]),
        ("isCuda or CUDAGuard or npu0 or 'torch-npu'", ["Cuda", "CUDA", "npu", "torch", "npu"]),
        ("InputError, concatenate, inputs, flatten, torchvision, barracuda", []),
    ],
)
def test_a_framework_word_is_a_word_or_an_identifier_part(text, words):
    assert framework_words(text) == words


def test_comments_and_docstrings_may_name_examples_but_code_and_other_strings_may_not():
    source = '''"""Reads TORCH_LIBRARY_IMPL blocks."""
def f():
    """Like `torch.library.impl`."""
    x = 1  # as aten does
    "a bare string is no docstring: npu"
    return f"{x} cuda" + catalog.torch_version
'''
    assert list(code_words(source)) == [(5, "npu"), (6, "cuda"), (6, "torch")]
