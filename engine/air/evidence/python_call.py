"""`python_call`: calls resolved through the file's imports to a qualified name (globs allowed)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatchcase
from functools import lru_cache

from air.evidence.base import (
    Clause,
    Context,
    Hint,
    Hit,
    as_list,
    enough,
    hit_at,
    last_component,
    literal_of,
    name_literals,
    python_sources,
)
from air.index.model import PyCall, PythonFacts

SUMMARY = "calls resolved through imports to a qualified name (globs allowed)"
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    "properties": {
        "name": {"$ref": "#/$defs/names"},
        "capture": {"$ref": "#/$defs/captures"},
        "capture_keywords": {"type": "object", "additionalProperties": {"$ref": "#/$defs/capture"}},
    },
}


def literals(spec: dict) -> list[tuple[str, ...]]:
    return [name_literals(name) for name in as_list(spec["name"])]


@lru_cache(maxsize=256)
def call_hint(name: str, resolved: bool = True) -> Hint:
    """Whether a text writes the callee's last component before `(`, after `@` (a decorator),
    imports it under another name (`x as y`) or ends a plain assignment with it (`y = a.x`, which
    the parser takes for an alias): a file with none of these cannot call `name` and is not
    parsed. With `resolved`, a call of a dotted name (`re.compile(...)`) counts only when it may
    resolve to `name` (see `_may_resolve_to`). Found with `str.find`, which is much faster than
    a regex."""
    word = literal_of(last_component(name))
    if not word:
        return lambda text: True
    parts = name.split(".") if resolved and word == last_component(name) and not _GLOB.search(name) else None

    def hint(text: str) -> bool:
        binds: dict[str, bool] = {}  # of the roots of receivers met: each is looked up once
        start = text.find(word)
        while start >= 0:
            end = start + len(word)
            if _whole_word(text, start, end) and (
                _called_or_aliased(text, start, end, parts, binds) or _ends_assigned_value(text, start, end)
            ):
                return True
            start = text.find(word, end)
        return False

    return hint


_GLOB = re.compile(r"[*?\[\]]")


def _whole_word(text: str, start: int, end: int) -> bool:
    return (start == 0 or not _is_word(text[start - 1])) and (end == len(text) or not _is_word(text[end]))


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _called_or_aliased(text: str, start: int, end: int, parts: list[str] | None, binds: dict[str, bool]) -> bool:
    after = text[end : end + 64].lstrip()
    if after.startswith("("):
        return parts is None or _may_resolve_to(text, start, parts, binds)
    if after.startswith(("as ", "as\t")):
        return True
    line_start = text.rfind("\n", 0, start) + 1
    return "@" in text[line_start:start]


def _may_resolve_to(text: str, start: int, parts: list[str], binds: dict[str, bool]) -> bool:
    """Whether the callee whose last name starts at `start` may resolve to the dotted name of
    `parts` as the parser resolves it, through the file's imports and module-level aliases:
    a plain name may be an alias; `root.a.b` may be unless its `.a.b` ends another name, or
    its root is bound by no `as`, no `from ... import` and no assignment of the text (`import
    re` binds `re` to itself). A callee that is no chain of names (`f().x`) may be anything."""
    chain = _receiver_chain(text, start)
    if chain is None or not chain:
        return True
    root, rest = chain[0], chain[1:]
    if parts[-len(rest) - 1 : -1] != rest or len(parts) < len(chain) + 1:
        return False
    if chain == parts[:-1]:
        return True
    if root not in binds:
        binds[root] = _may_bind(text, root)
    return binds[root]


def _receiver_chain(text: str, start: int) -> list[str] | None:
    """The names before `.word` at `start`, `["torch", "_dynamo"]` of `torch._dynamo.optimize`;
    [] for a plain name; None when what precedes a dot is not a name (`f().x`, `(a).x`), or the
    chain is too long to read or spans lines (inside brackets it may; a dot ending a comment
    above may not be one)."""
    window = text[max(0, start - MAX_CHAIN) : start]
    dotted = _CHAIN_BACKWARDS.match(window[::-1])
    if dotted is None:
        return None if window.rstrip().endswith(".") else []
    chain = dotted.group()[::-1]
    if "\n" in chain or dotted.end() == len(window) and start > MAX_CHAIN:
        return None
    return [part.strip() for part in chain.split(".")[:-1]]


MAX_CHAIN = 160
# `name . name .` ending the window, read from its end: matched from one place, in linear time
_CHAIN_BACKWARDS = re.compile(r"(?:\s*\.\s*\w*[A-Za-z_])+(?![\w.])")


def _may_bind(text: str, name: str) -> bool:
    """Whether the text may bind `name` to something else than itself: `... as name`,
    `from x import ..., name`, `name = ...`."""
    return re.search(_BINDING_TEMPLATE.format(name=re.escape(name)), text, re.MULTILINE) is not None


_BINDING_TEMPLATE = (
    r"\bas\s+{name}\b|^[ \t]*{name}[ \t]*(?::[^=\n]*)?=(?!=)"
    r"|\bfrom[ \t]+[\w.]+[ \t]+import\b[ \t]*(?:\((?:[^()]|\([^()]*\))*?|[^\n]*(?:\\\n[^\n]*)*)\b{name}\b"
)


_BEFORE_PLAIN_ASSIGNMENT = frozenset("=!<>:+-*/%&|^@")  # `x == y`, `x += y`... bind no alias
_VALUE_CHARS = frozenset("_. \t\n\\(")
MAX_VALUE_SCAN = 256


def _ends_assigned_value(text: str, start: int, end: int) -> bool:
    """Whether the word at `start:end` ends the value of an assignment, `x = a.b.word` or
    `x = (\n a.b.word\n)`, then the statement: a superset of the parser's aliases."""
    after = text[end : end + MAX_VALUE_SCAN].lstrip(" \t)")
    if after and after[0] not in "\r\n;#":
        return False
    position, limit = start, max(0, start - MAX_VALUE_SCAN)
    while position > limit and (text[position - 1].isalnum() or text[position - 1] in _VALUE_CHARS):
        position -= 1
    equals = position - 1
    return equals >= 0 and text[equals] == "=" and (equals == 0 or text[equals - 1] not in _BEFORE_PLAIN_ASSIGNMENT)


def prefilters(clause: Clause) -> tuple[list, list[Hint]]:
    """The literals and textual hints a file must show to be read for this clause."""
    parsed = clause.scope != "tests"  # tests are read lexically, for which a quick hint is enough
    return literals(clause.spec), [call_hint(name, parsed) for name in as_list(clause.spec["name"])]


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    spec = clause.spec
    names = as_list(spec["name"])
    positional = spec.get("capture", [])
    keywords = spec.get("capture_keywords", {})
    words = sorted({literal_of(last_component(name)) for name in names})
    exact = all(literal_of(last_component(name)) == last_component(name) for name in names)  # no glob in a last name
    hits = []
    for source, facts in python_sources(clause, context, *prefilters(clause)):
        if isinstance(facts, PythonFacts) and not exact:
            calls: Iterable[PyCall] = facts.calls
        else:
            calls = [call for word in words for call in facts.calls_of(word)]
        for call in calls:
            if not any(fnmatchcase(call.qualname, name) for name in names):
                continue
            captures = {"CALLEE": call.qualname}
            captures.update({cap: call.args[i] for i, cap in enumerate(positional) if i < len(call.args)})
            given = dict(call.kwargs)
            captures.update({cap: given[kw] for kw, cap in keywords.items() if kw in given})
            hits.append(hit_at(source, call.line, captures))
        if enough(clause, hits, context):
            break
    return hits


def reads_only_cpp(spec: dict) -> bool:
    """Whether a clause of this spec reads C/C++ alone (and so tells nothing about a compiled distribution)."""
    return False
