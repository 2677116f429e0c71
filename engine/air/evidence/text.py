"""`text`: a regular expression or literal over comment-stripped source, `#define` bodies included
(with `code_only`, string literals blanked too, in Python and C/C++).

Only files that hold one of the `prefilter` literals are searched (by default, literals the
pattern cannot match without); an entry that is a list of literals needs every one of them.
A match spanning lines is cited at its start, or where its first group named `CITE…` that took
part begins (`CITE1`, `CITE2`: a group name is used once per pattern), so the line shown is the
one that proves it. A match inside the `#define` of a function-like C/C++ macro is cited where
the tree expands the macro too, which is where what it shows takes effect. With
`same_function`, a match in Python that starts inside a function must end inside it (the
outermost: a helper a test defines is part of the test), so that a test's comparison counts for
what that test does, not for the test before. With `helpers`, `{helpers}` in the pattern stands
for the names of the suite's own helpers of a kind (see `air.evidence.suite_helpers`).
"""

from __future__ import annotations

import re

from air.evidence.base import (
    EXPANDED,
    Clause,
    Context,
    Hit,
    SpecChecks,
    enough,
    function_matches,
    hit_at,
    in_clause_files,
    may_count,
    roles_for,
)
from air.evidence.suite_helpers import HELPERS, with_helpers
from air.index.cpp import CPP_LANGUAGES, find_calls
from air.index.cpp.preprocessor import DefineSpans
from air.index.model import SourceFile
from air.regex import compile_guarded, required_literals, searching

SUMMARY = "a regex or literal in comment-stripped source (`#define` bodies included; in Python, strings that stand as statements, such as docstrings, are blanked too, and with `code_only` every string, in C/C++ too)"
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "oneOf": [{"required": ["literal"]}, {"required": ["pattern"]}],
    "properties": {
        "literal": {"type": "string", "minLength": 1},
        "pattern": {"type": "string", "minLength": 1},
        "prefilter": {
            "type": "array",
            "description": "literals one of which a file must hold to be searched; an "
            "entry that is a list needs every literal of it",
            "items": {
                "oneOf": [
                    {"type": "string", "minLength": 1},
                    {"type": "array", "minItems": 2, "items": {"type": "string", "minLength": 1}},
                ]
            },
        },
        "languages": {"type": "array", "items": {"type": "string"}},
        "code_only": {
            "type": "boolean",
            "description": "search Python and C/C++ with their string literals blanked too, so that a "
            "call written inside a string (a kernel's source, an expected message) is not found",
        },
        "same_function": {
            "type": "boolean",
            "description": "a match in Python that starts inside a function must end inside it",
        },
        "helpers": {
            "type": "object",
            "additionalProperties": False,
            "required": ["body"],
            "description": "`{helpers}` in the pattern stands for the names of the Python functions of "
            "the product and the tests (test functions aside) whose code matches `body`: a suite's own "
            "comparison helpers, say",
            "properties": {
                "body": {"type": "string", "minLength": 1},
                "names": {"type": "string", "minLength": 1, "description": "a regex a helper's name must match"},
                "prefilter": {"type": "array", "items": {"type": "string", "minLength": 1}},
            },
        },
    },
}

CITED = "CITE"
CODE_LANGUAGES = ("python", "cpp", "template", "cmake", "yaml", "toml", "ini", "requirements", "shell", "make")


def validate(spec: dict, checks: SpecChecks) -> None:
    if "pattern" in spec:
        checks.pattern(("pattern",), spec["pattern"])
    if "helpers" in spec:
        checks.pattern(("helpers", "body"), spec["helpers"]["body"])
        if "names" in spec["helpers"]:
            checks.pattern(("helpers", "names"), spec["helpers"]["names"])
        if HELPERS not in spec.get("pattern", ""):
            checks.refuse(("helpers",), f"helpers are named where the pattern says {HELPERS}, and it does not")


def literals(spec: dict) -> list[str | list[str]]:
    if "literal" in spec:
        return [spec["literal"]]
    return spec.get("prefilter") or list(required_literals(spec["pattern"]))


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    spec = clause.spec
    pattern = re.escape(spec["literal"]) if "literal" in spec else spec["pattern"]
    if "helpers" in spec:
        pattern = with_helpers(pattern, spec["helpers"], context)
    regex = compile_guarded(pattern)
    languages = spec.get("languages", CODE_LANGUAGES)
    index = context.index
    hits = []
    for source in index.select(literals(spec), languages=languages, roles=roles_for(clause)):
        if not in_clause_files(source.path, clause) or not may_count(source, clause, context):
            continue
        text = index.code_without_strings(source) if spec.get("code_only") else index.code_text(source)
        if spec.get("same_function") and source.language == "python":
            found = function_matches(regex, text, source, index.python_lexical(source))
        else:
            with searching(source.path):
                found = ((0, match) for match in regex.finditer(text))
        line, counted = 1, 0
        for offset, match in found:  # in order: lines are counted from the previous match on
            start = offset + match.start()
            line += text.count("\n", counted, start)
            counted = start
            groups = match.groupdict()
            captures = {k: v for k, v in groups.items() if v is not None and not k.startswith(CITED)}
            cited = next((match.start(k) for k, v in groups.items() if v is not None and k.startswith(CITED)), None)
            cited_line = line if cited is None else line + text.count("\n", counted, offset + cited)
            hits.append(hit_at(source, cited_line, captures))
            expansions = _macro_expansions(source, text, offset + (match.start() if cited is None else cited), context)
            hits.extend(hit_at(site, at, {**captures, EXPANDED: macro}) for macro, site, at in expansions)
        if enough(clause, hits, context):
            break
    return hits


def _macro_expansions(
    source: SourceFile, text: str, offset: int, context: Context
) -> list[tuple[str, SourceFile, int]]:
    """Where the tree expands the function-like macro whose `#define` holds `offset` of a C/C++
    file's `text` (the macro, the file and the line): what the match shows happens there, cited
    after the definition."""
    if source.language not in CPP_LANGUAGES or "#" not in text:
        return []
    spans: DefineSpans = context.memo(("define spans", source.path, len(text)), lambda: DefineSpans(text))
    macro = spans.macro_at(offset)
    if macro is None or not any(define.params is not None for _where, define in context.index.defines.get(macro, [])):
        return []
    sites = context.memo(("macro expansions", macro), lambda: _expansion_sites(macro, context))
    return [(macro, site, line) for site, line in sites]


def _expansion_sites(macro: str, context: Context) -> list[tuple[SourceFile, int]]:
    """Where C/C++ files invoke `macro`."""
    index = context.index
    return [
        (source, call.line)
        for source in index.select([macro], languages=CPP_LANGUAGES)
        for call in find_calls(index.cpp_facts(source), [macro])
    ]


def reads_only_cpp(spec: dict) -> bool:
    """Whether a clause of this spec reads C/C++ alone (and so tells nothing about a compiled distribution)."""
    languages = set(spec.get("languages", ()))
    return bool(languages) and languages <= set(CPP_LANGUAGES)
