"""`text`: a regular expression or literal over comment-stripped source, `#define` bodies included
(with `code_only`, string literals blanked too, in Python and C/C++).

Only files that hold one of the `prefilter` literals are searched (by default, literals the
pattern cannot match without); an entry that is a list of literals needs every one of them.
A match spanning lines is cited at its start, or where its first group named `CITE…` that took
part begins (`CITE1`, `CITE2`: a group name is used once per pattern), so the line shown is the
one that proves it. A match inside the `#define` of a function-like C/C++ macro is cited where
the tree expands the macro too, which is where what it shows takes effect. With `same_function`, a match in Python that starts inside a function must
end inside it (the outermost: a helper a test defines is part of the test), so that a test's
comparison counts for what that test does, not for the test before.
"""

from __future__ import annotations

import re
from functools import partial

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
from air.index.cpp import CPP_LANGUAGES
from air.index.cpp.preprocessor import DefineSpans
from air.index.model import SourceFile
from air.regex import compile_guarded, inherit_trust, required_literals, searching

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
HELPERS = "{helpers}"
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
        pattern = _with_helpers(pattern, spec["helpers"], context)
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
    """Where C/C++ files write `macro(`, other than in its own `#define`."""
    index = context.index
    written = re.compile(rf"(?<![\w.>:]){re.escape(macro)}[ \t]*\(")
    sites = []
    for source in index.select([macro], languages=CPP_LANGUAGES):
        code = index.code_text(source)
        spans: DefineSpans = context.memo(("define spans", source.path, len(code)), partial(DefineSpans, code))
        for match in written.finditer(code):
            if not spans.is_macro_name(match.start()):
                sites.append((source, code.count("\n", 0, match.start()) + 1))
    return sites


def _with_helpers(pattern: str, helpers: dict, context: Context) -> str:
    """`pattern` with `{helpers}` standing for the names of the helpers `helpers` describes (a
    pattern that matches nothing when there are none); trusted as `pattern` is."""
    key = ("text helpers", helpers["body"], helpers.get("names"), tuple(helpers.get("prefilter", ())))
    names = context.memo(key, lambda: _helper_names(helpers, context))
    derived = pattern.replace(HELPERS, "|".join(re.escape(name) for name in names) or "(?!)")
    inherit_trust(pattern, derived)
    return derived


def _helper_names(helpers: dict, context: Context) -> tuple[str, ...]:
    """The names of the functions of Python files whose code matches the `body` of `helpers`,
    whose name matches its `names`, and that take two arguments or more (what a helper
    compares); test functions and special methods (`__init__`) aside."""
    body = compile_guarded(helpers["body"])
    named = compile_guarded(helpers.get("names", r"\w"))
    index = context.index
    literals = helpers.get("prefilter") or list(required_literals(helpers["body"]))
    names: set[str] = set()
    for source in index.select(literals, languages=["python"], roles=("product", "tests")):
        code = index.python_lexical(source).code
        for definition in _HELPER_DEFINITION.finditer(code):
            name = definition["name"]
            if name in names or name.startswith("__") or named.search(name) is None:
                continue
            arguments, signature_end = _signature(code, definition.end() - 1)
            if arguments < 2:
                continue
            end = _BODY_END[len(definition["indent"])].search(code, signature_end)
            with searching(source.path):
                if body.search(code[signature_end : len(code) if end is None else end.start()]) is not None:
                    names.add(name)
    return tuple(sorted(names))


_HELPER_DEFINITION = compile_guarded(
    r"^(?P<indent>[ \t]*)(?:async[ \t]+)?def[ \t]+(?!test)(?P<name>[A-Za-z_]\w*)[ \t]*\("
)


class _BodyEnds(dict):
    """By a `def`'s indentation: where its body ends, at the next line of code indented no deeper."""

    def __missing__(self, indent: int) -> re.Pattern[str]:
        found = self[indent] = re.compile(rf"\n[ \t]{{0,{indent}}}(?=[^ \t\n])")
        return found


_BODY_END = _BodyEnds()


def _signature(code: str, opened: int) -> tuple[int, int]:
    """Of the parameter list whose `(` is at `opened`: how many parameters it names, `self` and
    `cls` aside, and where it ends."""
    end = code.find(")", opened)
    if end < 0 or _OPENING.search(code, opened + 1, end) is not None:  # nested brackets: count them
        depth, end = 0, opened
        for end in range(opened, min(len(code), opened + MAX_SIGNATURE)):
            depth += _BRACKETS.get(code[end], 0)
            if depth == 0:
                break
    parameters = [part.strip() for part in _TOP_LEVEL_COMMA.split(code[opened + 1 : end])]
    return len([part for part in parameters if part and part not in ("self", "cls", "*", "/")]), end + 1


_BRACKETS = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
_OPENING = re.compile(r"[(\[{]")
_TOP_LEVEL_COMMA = re.compile(r",(?![^()\[\]{}]*[)\]}])")
MAX_SIGNATURE = 2000


def reads_only_cpp(spec: dict) -> bool:
    """Whether a clause of this spec reads C/C++ alone (and so tells nothing about a compiled distribution)."""
    languages = set(spec.get("languages", ()))
    return bool(languages) and languages <= set(CPP_LANGUAGES)
