"""`file`: files whose path matches a glob, or named after an operator of the pack's catalog that
their code calls (`named_for_operators`), optionally containing a literal or matching a regular
expression in their code, and further ones (`also_matches`) anywhere in it or in the files it
brings in (`follows`: the reusable workflows a CI workflow calls); comments never match. A file
is cited at the match, else, when it is named after an operator, at its first call of it, else
at the first line its `cite` expression matches (a test file's first test, say), else at its
first line of code (not a licence header or a docstring). With `same_function`, a match in
Python that starts inside a function must end inside it."""

from __future__ import annotations

import posixpath
import re
from posixpath import basename, splitext

from air.evidence.base import (
    Clause,
    Context,
    Hit,
    SpecChecks,
    as_list,
    function_matches,
    hit_at,
    in_clause_files,
    may_count,
)
from air.index.files import matches_glob
from air.index.model import SourceFile
from air.index.python_lexical import LexicalPython
from air.regex import GuardedPattern, compile_guarded, searching

SUMMARY = "files by glob, or named after an operator of the catalog that they call (`named_for_operators`), optionally containing a literal or regex; cited at the match, else at the first line `cite` matches, else at the first line of code"
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["glob"],
    "properties": {
        "glob": {"$ref": "#/$defs/names"},
        "contains": {"type": "string", "minLength": 1},
        "matches": {"type": "string"},
        "also_matches": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "description": "regexes the file's code must match too, anywhere (what `matches` finds is cited), "
            "or the code of a file it `follows`: a CI workflow that is scheduled and also runs the tests",
        },
        "follows": {
            "type": "string",
            "description": "a regex whose PATH group names another file of the tree (from its root) that the file "
            "brings in, for `also_matches`: the reusable workflows a workflow calls (uses: ./.github/workflows/x.yml)",
        },
        "same_function": {
            "type": "boolean",
            "description": "a match of `matches` in Python that starts inside a function must end inside it",
        },
        "cite": {
            "type": "string",
            "description": "a regex: a file found is cited at its first match, else at its first line of code",
        },
        "named_for_operators": {
            "type": "boolean",
            "description": "also files named after an operator family of the pack's catalog: test_<op>.*, <op>_test.*",
        },
    },
}

_TEST_AFFIXES = re.compile(r"^tests?_|_tests?$")
_CODE = re.compile(r"\S")
MAX_FOLLOWED = 50  # files a file brings in, its own included


def validate(spec: dict, checks: SpecChecks) -> None:
    for key in ("matches", "cite"):
        if key in spec:
            checks.pattern((key,), spec[key])
    for number, pattern in enumerate(spec.get("also_matches", ())):
        checks.pattern(("also_matches", number), pattern)
    if "follows" in spec:
        checks.pattern(("follows",), spec["follows"])
        if "(?P<PATH>" not in spec["follows"]:
            checks.refuse(("follows",), "the pattern needs a PATH group naming the file followed")


def literals(spec: dict) -> list[str]:
    return [spec["contains"]] if "contains" in spec else []


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    spec = clause.spec
    globs = tuple(as_list(spec["glob"]))
    operators = _operator_families(context) if spec.get("named_for_operators") else frozenset()
    regex = compile_guarded(spec["matches"]) if "matches" in spec else None
    cited = compile_guarded(spec["cite"]) if "cite" in spec else None
    also = [compile_guarded(pattern) for pattern in spec.get("also_matches", ())]
    follows = compile_guarded(spec["follows"]) if "follows" in spec else None
    hits = []
    for source in context.index.select(literals(spec), include_docs=clause.scope == "all"):
        globbed = matches_glob(source.path, globs)
        called_at = None if globbed else _operator_call(source, operators, context)
        if not globbed and called_at is None:
            continue
        if not in_clause_files(source.path, clause) or not may_count(source, clause, context):
            continue
        code = context.index.code_text(source)
        shown_at = called_at if called_at is not None or cited is None else _first_match(cited, code, source.path)
        line = _first_code_line(code) if shown_at is None else code.count("\n", 0, shown_at) + 1
        if "contains" in spec:
            found = code.find(spec["contains"])
            if found < 0:  # only in a comment
                continue
            line = code.count("\n", 0, found) + 1
        if regex is not None:
            same_function = spec.get("same_function") and source.language == "python"
            within = (source, context.index.python_lexical(source)) if same_function else None
            matched_at = _first_match(regex, code, source.path, within)
            if matched_at is None:
                continue
            line = code.count("\n", 0, matched_at) + 1
        if also and not _all_match(also, _with_followed(source, follows, context), context):
            continue
        hits.append(hit_at(source, line, {"PATH": source.path}))
    return hits


def _operator_families(context: Context) -> frozenset[str]:
    return context.operators.catalog.families if context.operators is not None else frozenset()


def _operator_call(source: SourceFile, operators: frozenset[str], context: Context) -> int | None:
    """Where the code of a file named after an operator family (its name without its extension
    and a `test_` prefix or `_test` suffix: `test_addmm.py`, `cumsum_test.cpp`) first calls it;
    None for another file, or one that never calls it: a runner named `test_all.py` is no test
    of `all`."""
    if not operators:
        return None
    stem = splitext(basename(source.path))[0].lower()
    bare = _TEST_AFFIXES.sub("", stem)
    if bare == stem or bare not in operators:
        return None
    called = compile_guarded(rf"(?<!\w){re.escape(bare)}_?\s*\(")
    return _first_match(called, context.index.code_text(source), source.path)


def _first_match(
    pattern: GuardedPattern, code: str, path: str, within: tuple[SourceFile, LexicalPython] | None = None
) -> int | None:
    """Where `pattern` first matches the code of the file at `path`; given the file and its
    read lexically as `within`, the first match that ends in the function it starts in."""
    if within is not None:
        offset, match = next(function_matches(pattern, code, *within), (0, None))
        return None if match is None else offset + match.start()
    with searching(path):
        found = pattern.search(code)
    return None if found is None else found.start()


def _all_match(patterns: list[GuardedPattern], sources: list[SourceFile], context: Context) -> bool:
    """Whether each pattern matches the code of one of `sources`."""
    return all(
        any(_first_match(pattern, context.index.code_text(source), source.path) is not None for source in sources)
        for pattern in patterns
    )


def _with_followed(source: SourceFile, follows: GuardedPattern | None, context: Context) -> list[SourceFile]:
    """The file and those it brings in, through `follows` (theirs too, at most MAX_FOLLOWED files)."""
    found, pending = [source], [source]
    while follows is not None and pending and len(found) < MAX_FOLLOWED:
        current = pending.pop()
        with searching(current.path):
            named = [match.group("PATH") for match in follows.finditer(context.index.code_text(current))]
        for path in named:
            followed = context.index.by_path.get(posixpath.normpath(path))
            if followed is not None and followed not in found and len(found) < MAX_FOLLOWED:
                found.append(followed)
                pending.append(followed)
    return found


def _first_code_line(code: str) -> int:
    found = _CODE.search(code)
    return code.count("\n", 0, found.start()) + 1 if found else 1


def reads_only_cpp(spec: dict) -> bool:
    """Whether a clause of this spec reads C/C++ alone (and so tells nothing about a compiled distribution)."""
    return False
