"""What the preprocessor does to a text, and the names that stand for something else.

Comments and the branches that a constant `#if 0`, `#if false` or `#if 1 ... #else`
leaves out are blanked, keeping every offset and line break; `#define` and `#include`
directives are read; macros are expanded as the preprocessor expands them; constants
and type aliases are found, which give a name to a value as a macro can, and
`resolve_alias` follows such names to what they stand for."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Collection, Iterator, Sequence
from functools import lru_cache
from itertools import islice

from air.index.blanking import blank_spans
from air.index.cpp.lexing import COMMENT_KINDS, CONTINUATION, Lines, collapse, is_name, lexemes, skip_group
from air.index.model import CppConstant, CppDefine, CppInclude

# --- Comments and dead branches ----------------------------------------------


def strip_comments(text: str, off: Collection[str] = ()) -> str:
    """Blank out `//` and `/* */` comments, replacing every comment character except
    line breaks by a space, and the code of dead preprocessor branches (see
    `dead_branches`; `off` names the build switches that are off). String and char literals
    (raw strings included) and line continuations are kept, so the result has the length and
    line breaks of `text`."""
    comments = ((start, end) for kind, start, end in lexemes(text) if kind in COMMENT_KINDS)
    stripped = blank_spans(text, comments)
    return blank_spans(stripped, dead_branches(stripped, off=off))


_CONDITIONAL = re.compile(
    r"^[ \t\f\v]*\#[ \t\f\v]*(?P<keyword>if|ifdef|ifndef|elif|else|endif)\b(?P<rest>[^\n]*)", re.M
)
_CONSTANT_HINT = re.compile(r"^[ \t\f\v]*\#[ \t\f\v]*(?:el)?if[\s(!]*(?:\d|true\b|false\b)", re.M)
_NEGATIONS = re.compile(r"[!\s]*")
_TESTED_MACRO = re.compile(
    r"(?P<negation>!\s*)?(?:defined\s*\(\s*(?P<called>[A-Za-z_]\w*)\s*\)|defined\s+(?P<named>[A-Za-z_]\w*)|(?P<bare>[A-Za-z_]\w*))"
)
_CONSTANT = re.compile(r"(?P<number>\d+)[uUlL]*|(?P<word>true|false)")
_AROUND_CONSTANT = "() \t\f\v\r"


def _constant(condition: str) -> bool | None:
    """The value of an `#if` condition that is a constant (`0`, `1`, `false`, `(0)`, `!1`), else None."""
    condition = condition.strip(_AROUND_CONSTANT)
    negations = _NEGATIONS.match(condition)
    assert negations is not None  # the pattern matches the empty string
    match = _CONSTANT.fullmatch(condition[negations.end() :].strip(_AROUND_CONSTANT))
    if match is None:
        return None
    value = match["word"] == "true" if match["word"] else match["number"].strip("0") != ""
    return value != (negations.group().count("!") % 2 == 1)


class _Conditional:
    """One `#if ... #endif` construct as the scan of `dead_branches` goes through it."""

    def __init__(self, value: bool | None, inside_dead: bool) -> None:
        self.inside_dead = inside_dead  # the whole construct lies in a dead branch
        self.resolved = value is not None and not inside_dead  # every condition so far was constant
        self.taken = bool(value)  # a live branch was met
        self.dead_from: int | None = None  # where the dead run of the current branch began


def directive_lines(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """What `pattern.finditer(text)` finds, for a multiline `pattern` that matches only at the
    start of a line whose first character other than a space, tab, form feed or vertical tab
    is `#`, as DIRECTIVE does. Only the lines with a `#` are tried, which spares the regex
    engine a try at every offset."""
    pos = 0
    while (hash_sign := text.find("#", pos)) >= 0:
        line = text.rfind("\n", 0, hash_sign) + 1
        match = pattern.match(text, line) if line >= pos else None
        if match is not None:
            yield match
            pos = match.end()
        else:  # no match starts on this line
            pos = text.find("\n", hash_sign)
            if pos < 0:
                return


def dead_branches(
    text: str, undefined: Callable[[str], bool] | None = None, off: Collection[str] = ()
) -> list[tuple[int, int]]:
    """Spans of comment-free C/C++ `text` that the preprocessor leaves out whatever is
    defined: the branches of `#if`/`#elif` conditions that are constant and false, and
    those after a constant true one, each with its directive lines, so that what remains
    reads as the branch the preprocessor keeps. Constructs whose conditions are not all
    constant are kept whole; nesting is followed. With `undefined`, a condition on one
    macro for which it holds is constant too: `#ifdef M`, `#if defined(M)` and `#if M` are
    false, `#ifndef M` and `#if !defined(M)` true. The build switches `off` make `#if M` false
    and `#if !M` true (see `air.index.build_switches`)."""
    switched = [name for name in off if name in text]
    if undefined is None and not switched and next(directive_lines(_CONSTANT_HINT, text), None) is None:
        return []

    def value(keyword: str, rest: str) -> bool | None:
        if keyword == "ifdef" or keyword == "ifndef":
            macro = rest.strip()
            return (keyword == "ifndef") if undefined is not None and is_name(macro) and undefined(macro) else None
        constant = _constant(rest)
        if constant is not None:
            return constant
        tested = _TESTED_MACRO.fullmatch(rest.strip())
        if tested is None:
            return None
        if tested["bare"] in switched:
            return bool(tested["negation"])
        if undefined is None or not undefined(tested["called"] or tested["named"] or tested["bare"]):
            return None
        return bool(tested["negation"])

    spans: list[tuple[int, int]] = []
    stack: list[_Conditional] = []
    for directive in directive_lines(_CONDITIONAL, text):
        keyword, start, end = directive["keyword"], directive.start(), directive.end()
        if keyword in ("if", "ifdef", "ifndef"):
            inside_dead = bool(stack) and (stack[-1].inside_dead or stack[-1].dead_from is not None)
            frame = _Conditional(value(keyword, directive["rest"]), inside_dead)
            stack.append(frame)
            if frame.resolved:
                frame.dead_from = None if frame.taken else start
                if frame.taken:
                    spans.append((start, end))
            continue
        if not stack:
            continue
        frame = stack[-1]
        if keyword == "endif":
            stack.pop()
        if not frame.resolved:
            continue
        if keyword == "endif":
            spans.append((start if frame.dead_from is None else frame.dead_from, end))
        elif frame.taken:
            frame.dead_from = start if frame.dead_from is None else frame.dead_from
        else:
            assert frame.dead_from is not None  # resolved with no branch taken: dead since the `#if`
            taken = True if keyword == "else" else value("if", directive["rest"])
            if taken is None:  # `#if 0 ... #elif COND`: from here on, what COND decides
                spans.append((frame.dead_from, start))
                frame.dead_from, frame.resolved = None, False
            elif taken:
                spans.append((frame.dead_from, end))
                frame.dead_from, frame.taken = None, True
    spans.extend((frame.dead_from, len(text)) for frame in stack if frame.resolved and frame.dead_from is not None)
    return sorted(spans)


def builds(body: str) -> list[str]:
    """Comment-free C/C++ `body` as each build compiles it when `#if` groups split it: in the
    k-th, every outermost group keeps its k-th branch, or none when it has fewer. The body as
    written when nothing in it is conditional, or its groups do not close. (Groups whose
    conditions are constant are best blanked first, see `dead_branches`.)"""
    groups: list[tuple[int, list[int], list[int], int]] = []  # start, branch starts, branch ends, end
    depth = 0
    for directive in directive_lines(_CONDITIONAL, body):
        keyword = directive["keyword"]
        if keyword.startswith("if"):
            if depth == 0:
                groups.append((directive.start(), [directive.end()], [], -1))
            depth += 1
        elif depth == 1 and keyword in ("elif", "else"):
            groups[-1][2].append(directive.start())
            groups[-1][1].append(directive.end())
        elif keyword == "endif" and depth > 0:
            depth -= 1
            if depth == 0:
                start, starts, ends, _ = groups[-1]
                groups[-1] = (start, starts, [*ends, directive.start()], directive.end())
    if not groups or depth:
        return [body]
    compiled = []
    for branch in range(max(len(starts) for _, starts, _, _ in groups)):
        pieces, last = [], 0
        for start, starts, ends, end in groups:
            pieces.append(body[last:start])
            if branch < len(starts):
                pieces.append(body[starts[branch] : ends[branch]])
            last = end
        compiled.append("".join([*pieces, body[last:]]))
    return compiled


# --- Directives --------------------------------------------------------------

DIRECTIVE = re.compile(
    r"""
    ^[ \t\f\v]*\#[ \t\f\v]*
    (?P<keyword>\w*)
    (?P<rest>[^\\\n]*(?:\\(?:[ \t]*\r?\n|.)[^\\\n]*)*)
    """,
    re.M | re.S | re.X,
)
_DEFINE_HEAD = re.compile(r"[ \t\f\v]+(?P<name>[A-Za-z_]\w*)(?P<function_like>\((?P<params>[^)]*)(?P<closed>\))?)?")
_PARAMETER = re.compile(r"[A-Za-z_]\w*(?:\s*\.\.\.)?|\.\.\.")
_INCLUDE_TARGET = re.compile(r'[ \t\f\v]*(?:"(?P<local>[^"\n]*)"|<(?P<system>[^>\n]*)>)')
INCLUDE_KEYWORDS = frozenset({"include", "include_next", "import"})


def read_define(stripped: str, directive: re.Match[str], lines: Lines) -> CppDefine | None:
    head = _DEFINE_HEAD.match(stripped, directive.start("rest"), directive.end("rest"))
    if head is None:
        return None
    params = None
    if head["function_like"] is not None:
        params = _parse_parameters(head["params"]) if head["closed"] else None
        if params is None:
            return None
    body = collapse(stripped[head.end() : directive.end()])
    return CppDefine(lines.of(directive.start()), head["name"], params, body)


def _parse_parameters(text: str) -> tuple[str, ...] | None:
    """`a, b, ...` -> ("a", "b", "..."); None if the list is malformed."""
    text = CONTINUATION.sub(" ", text)
    if not text.strip():
        return ()
    params = [param.strip() for param in text.split(",")]
    if not all(_PARAMETER.fullmatch(param) for param in params):
        return None
    return tuple("".join(param.split()) for param in params)


def read_include(stripped: str, directive: re.Match[str], lines: Lines) -> CppInclude | None:
    target = _INCLUDE_TARGET.match(stripped, directive.start("rest"), directive.end("rest"))
    if target is None:
        return None
    system = target["system"] is not None
    return CppInclude(lines.of(directive.start()), target["system"] if system else target["local"], system)


class DefineSpans:
    """Where each `#define` of a text lies, to tell which macro body holds an offset."""

    def __init__(self, stripped: str) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._names: list[tuple[int, str]] = []
        for directive in directive_lines(DIRECTIVE, stripped):
            if directive["keyword"] != "define":
                continue
            head = _DEFINE_HEAD.match(stripped, directive.start("rest"), directive.end("rest"))
            if head is not None:
                self._starts.append(directive.start())
                self._ends.append(directive.end())
                self._names.append((head.start("name"), head["name"]))

    def _index(self, offset: int) -> int | None:
        index = bisect_right(self._starts, offset) - 1
        return index if index >= 0 and offset < self._ends[index] else None

    def macro_at(self, offset: int) -> str | None:
        """The macro whose `#define` line holds `offset`."""
        index = self._index(offset)
        return None if index is None else self._names[index][1]

    def is_macro_name(self, offset: int) -> bool:
        """Whether `offset` is where a `#define` writes the name it defines."""
        index = self._index(offset)
        return index is not None and self._names[index][0] == offset


# --- Macros ------------------------------------------------------------------


def resolve_alias(value: str, replacement: Callable[[str], str | None], max_depth: int = 8) -> str:
    """Follow aliases: when `replacement` maps "DEV" to "Slot1", "DEV" and "ns::Kind::DEV"
    resolve to "Slot1" and "ns::Kind::Slot1".
    The last `::` component is replaced at each step. As in the preprocessor, a name
    already being expanded is left as it is, which ends cycles; at most `max_depth`
    steps are taken."""
    scope, separator, name = value.rpartition("::")
    expanding = {name}
    for _ in range(max_depth):
        replaced = replacement(name)
        if replaced is None:
            break
        scope, separator, name = _join_scope(scope, separator, replaced)
        if name in expanding:
            break
        expanding.add(name)
    return scope + separator + name


def _join_scope(scope: str, separator: str, replacement: str) -> tuple[str, str, str]:
    """(scope, "::" or "", last component) of `scope::replacement`, where the
    replacement may itself be qualified."""
    inner_scope, inner_separator, name = replacement.rpartition("::")
    if not inner_separator:
        return scope, separator, name
    return scope + separator + inner_scope, inner_separator, name


_BODY_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|##|#|\w+|\s+|.', re.S)
_VARIADIC = "__VA_ARGS__"


def expand_macro(define: CppDefine, args: Sequence[str], expand: Callable[[str], str] | None = None) -> str:
    """The body of a function-like macro with its parameters replaced by `args`:
    plain parameters, `#param` stringification (quotes and backslashes escaped)
    and `a ## b` token pasting, with
    `...` bound to `__VA_ARGS__` (GNU `name...` binds `name`). A `, ## __VA_ARGS__`
    with no variadic arguments drops the comma. An argument is substituted as written,
    or, where it is neither stringified nor pasted, as `expand` makes it (the
    preprocessor macro-expands such arguments first). An object-like define's body is
    returned unchanged."""
    if define.params is None:
        return define.body
    bindings = _bind_arguments(define.params, args)
    expanded: dict[str, str] = {}
    variadic = _variadic_name(define.params)
    tokens = _significant_tokens(define.body)
    pieces: list[str] = []
    paste = False
    index = 0
    while index < len(tokens):
        token, spaced = tokens[index]
        index += 1
        if token == "##":
            paste = True
            continue
        if token == "#" and index < len(tokens) and tokens[index][0] in bindings:
            token = _stringify(bindings[tokens[index][0]])
            index += 1
        elif token in bindings:
            if paste and token == variadic and not bindings[token] and pieces[-1:] == [","]:
                pieces.pop()
            pasted = paste or (index < len(tokens) and tokens[index][0] == "##")
            if pasted or expand is None:
                token = bindings[token]
            else:
                if token not in expanded:
                    expanded[token] = expand(bindings[token])
                token = expanded[token]
        if spaced and pieces and not paste:
            pieces.append(" ")
        pieces.append(token)
        paste = False
    return "".join(pieces)


def _significant_tokens(body: str) -> list[tuple[str, bool]]:
    """The non-blank tokens of a macro body, each with whether blanks preceded it."""
    tokens = []
    spaced = False
    for token in _BODY_TOKEN.findall(body):
        if token.isspace():
            spaced = True
        else:
            tokens.append((token, spaced))
            spaced = False
    return tokens


def _bind_arguments(params: Sequence[str], args: Sequence[str]) -> dict[str, str]:
    bindings = {}
    for index, param in enumerate(params):
        if param.endswith("..."):
            bindings[param[:-3] or _VARIADIC] = ", ".join(args[index:])
        else:
            bindings[param] = args[index] if index < len(args) else ""
    return bindings


def _variadic_name(params: Sequence[str]) -> str | None:
    if params and params[-1].endswith("..."):
        return params[-1][:-3] or _VARIADIC
    return None


def _stringify(arg: str) -> str:
    return '"' + " ".join(arg.split()).replace("\\", "\\\\").replace('"', '\\"') + '"'


# Enough for an X-macro list of a few hundred entries, each expanded into a function or an
# assignment; a hostile tree's expansion stops there.
MAX_EXPANSIONS = 1024
MAX_EXPANDED_LENGTH = 65536
_EXPANSION_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|##|[A-Za-z_]\w*|\d[\w.]*|\s+|.', re.S)


class _Overflow(Exception):
    """An expansion took more steps or grew longer than is allowed."""


def expand_macros(text: str, lookup: Callable[[str], CppDefine | None], hidden: Collection[str] = ()) -> str | None:
    """`text` with every macro `lookup` defines expanded as the preprocessor would: object-like
    macros, invocations of function-like ones with their arguments expanded first (except
    where stringified or pasted), the result rescanned; a macro is not expanded again inside
    its own expansion, nor are the names of `hidden`. None when the expansion runs past
    MAX_EXPANSIONS steps or MAX_EXPANDED_LENGTH characters, as a hostile tree could make it."""
    try:
        return _Expansion(lookup).expand(text, frozenset(hidden))
    except _Overflow:
        return None


class _Expansion:
    def __init__(self, lookup: Callable[[str], CppDefine | None]) -> None:
        self._lookup = lookup
        self._steps = 0

    def expand(self, text: str, hidden: frozenset[str]) -> str:
        tokens = _EXPANSION_TOKEN.findall(text)
        pieces: list[str] = []
        index = 0
        while index < len(tokens):
            token = tokens[index]
            index += 1
            define = self._lookup(token) if token not in hidden and _is_identifier_start(token) else None
            if define is None:
                pieces.append(token)
                continue
            if define.params is None:
                body = define.body
            else:
                invocation = _invocation(tokens, index)
                if invocation is None:
                    pieces.append(token)
                    continue
                args, index = invocation
                body = expand_macro(define, args, lambda arg: self.expand(arg, hidden))
            self._steps += 1
            if self._steps > MAX_EXPANSIONS:
                raise _Overflow
            pieces.append(self.expand(body, hidden | {token}))
        expanded = "".join(pieces)
        if len(expanded) > MAX_EXPANDED_LENGTH:
            raise _Overflow
        return expanded


def _is_identifier_start(token: str) -> bool:
    return token[0] == "_" or token[0].isalpha()


def _invocation(tokens: Sequence[str], index: int) -> tuple[list[str], int] | None:
    """The arguments of the `( ... )` that opens at `tokens[index]` (blanks skipped), and the
    index after its `)`; None if no `(` follows or it is never closed."""
    while index < len(tokens) and tokens[index].isspace():
        index += 1
    if index >= len(tokens) or tokens[index] != "(":
        return None
    args: list[str] = []
    current: list[str] = []
    depth = 0
    for position in range(index + 1, len(tokens)):
        token = tokens[position]
        if token == ")" and depth == 0:
            args.append("".join(current).strip())
            return ([] if args == [""] else args), position + 1
        if token == "," and depth == 0:
            args.append("".join(current).strip())
            current = []
            continue
        depth += {"(": 1, ")": -1}.get(token, 0)
        current.append(token)
    return None


# --- Constants and type aliases ----------------------------------------------

_DECLARATION_SPECIFIERS = frozenset(
    {"static", "inline", "extern", "export", "constexpr", "const", "constinit", "thread_local", "volatile"}
)
_CONSTANT_SPECIFIERS = frozenset({"const", "constexpr", "constinit"})
_HEAD_ITEM = re.compile(r"\s*(?:\[\[[^\]]*\]\]|(?P<name>(?:::\s*)?[A-Za-z_]\w*(?:::\s*[A-Za-z_]\w*)*))")
_ACCESS_LABEL = re.compile(r"\s*(?:public|protected|private)\s*:(?!:)")
_MACRO_INVOCATION = re.compile(r"[A-Za-z_]\w*\s*\(.*\)", re.S)
_MAX_DECLARATION_HEAD = 8192  # characters back to the statement before, blanked comments included
_MAX_INITIALISER = 512
_MAX_CONSTANT_CANDIDATES = 1000  # places a file writes the name with an initialiser; more are not read


@lru_cache(maxsize=512)
def _initialised(name: str) -> re.Pattern[str]:
    escaped = re.escape(name)  # written first, so that the search skips ahead to it
    return re.compile(escaped + r"(?<![\w.:>]" + escaped + r")\s*(?:(?P<equals>=)(?!=)|(?P<open>[{(]))")


@lru_cache(maxsize=512)
def _type_alias(name: str) -> re.Pattern[str]:
    target = r"(?:::)?[A-Za-z_][\w:]*"
    escaped = re.escape(name)
    return re.compile(
        rf"\busing\s+{escaped}\s*=\s*(?:typename\s+)?(?:const\s+)?(?P<using>{target})\s*;"
        rf"|\btypedef\s+(?:const\s+)?(?P<typedef>{target})\s+{escaped}\s*;"
    )


def may_define_constant(text: str, name: str) -> bool:
    """A quick test that `text`, comments included, may define the constant `name`: it writes
    `name` followed by an initialiser somewhere. `find_constants` tells for sure."""
    return name in text and _initialised(name).search(text) is not None


def find_constants(text: str, name: str) -> list[CppConstant]:
    """Every constant named `name` that the comment-free C/C++ `text` defines with an initialiser
    that is a name or a macro invocation: `[static|inline|extern] const|constexpr|constinit TYPE
    name = value;`, also `{value}` and `(value)`, specifiers in any order, attributes and an access
    label before them skipped. TYPE is one (possibly qualified) name or `auto`; declarations of
    other shapes (pointers, templates, several declarators) are not constants here. Of a text
    that writes the name with an initialiser more than _MAX_CONSTANT_CANDIDATES times, as only
    a hostile one does, the first ones are read."""
    found: list[CppConstant] = []
    code = ""
    candidates = _initialised(name).finditer(text) if name in text else iter(())
    for match in islice(candidates, _MAX_CONSTANT_CANDIDATES):
        statement = _statement_start(text, match.start())
        if statement < 0 or "const" not in text[statement : match.start()]:
            continue  # the common case, told without blanking the directives
        code = code or without_directives(text)
        declared = _constant_type(code, match.start())
        value = _initialiser(code, match) if declared else None
        if declared and value:
            found.append(CppConstant(code.count("\n", 0, match.start()) + 1, name, declared, value))
    return found


def find_type_aliases(text: str, name: str) -> list[str]:
    """What `using name = T;` and `typedef T name;` in the comment-free C/C++ `text` make `name`
    stand for."""
    if name not in text:
        return []
    return ["".join((match["using"] or match["typedef"]).split()) for match in _type_alias(name).finditer(text)]


def without_directives(stripped: str) -> str:
    return blank_spans(stripped, (directive.span() for directive in directive_lines(DIRECTIVE, stripped)))


def _statement_start(code: str, end: int) -> int:
    """Where the statement that runs to `end` starts: after the last `;`, `{` or `}` within
    _MAX_DECLARATION_HEAD characters, -1 when there is none that near."""
    window = max(0, end - _MAX_DECLARATION_HEAD)
    boundary = max(code.rfind(char, window, end) for char in ";{}")
    return boundary + 1 if boundary >= 0 or window == 0 else -1


def _constant_type(code: str, start: int) -> str | None:
    """The type of the declaration that names a constant at `start`, None if what precedes
    the name since the last statement is not `specifiers TYPE` with const or constexpr."""
    statement = _statement_start(code, start)
    if statement < 0:
        return None
    head = code[statement:start]
    label = _ACCESS_LABEL.match(head)
    pos = label.end() if label else 0
    words = []
    while item := _HEAD_ITEM.match(head, pos):
        if item["name"]:
            words.append("".join(item["name"].split()))
        pos = item.end()
    types = [word for word in words if word not in _DECLARATION_SPECIFIERS]
    if head[pos:].strip() or len(types) != 1 or _CONSTANT_SPECIFIERS.isdisjoint(words):
        return None
    return types[0]


def _initialiser(code: str, match: re.Match[str]) -> str | None:
    """The initialiser after `=`, or inside `{}`/`()`, when it is a name or a macro invocation."""
    if match["equals"]:
        end = code.find(";", match.end(), match.end() + _MAX_INITIALISER)
        value = code[match.end() : end].strip() if end >= 0 else ""
        if value.startswith("{") and value.endswith("}"):
            value = value[1:-1].strip()
    else:
        close = skip_group(code, match.start("open"))
        if close is None or close - match.end() > _MAX_INITIALISER:
            value = ""
        else:
            value = code[match.end() : close - 1].strip()
    value = collapse(value)
    return value if is_name(value) or _MACRO_INVOCATION.fullmatch(value) else None
