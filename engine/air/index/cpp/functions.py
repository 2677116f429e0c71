"""Function definitions in a C/C++ text: the function whose body holds an offset, those
defined under a name, each read as a function-like define of its body, and the statements
of a body."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable
from functools import cached_property, lru_cache
from itertools import pairwise

from air.index.blanking import blank_spans
from air.index.cpp.lexing import (
    KEYWORDS_BEFORE_PARENTHESES,
    LITERAL_PATTERNS,
    Braces,
    Brackets,
    Lines,
    collapse,
    identifier_start,
    is_identifier_char,
    lexemes,
    matching_opener,
    occurrences,
    skip_space_back,
    split_top_level,
    tokens,
)
from air.index.cpp.preprocessor import DIRECTIVE, directive_lines
from air.index.model import CppDefine, Span

_HEAD_QUALIFIERS = frozenset("noexcept throw requires __attribute__ alignas __declspec".split())
_SCOPE_KEYWORDS = re.compile(r"\b(?:namespace|class|struct|union|enum|extern)\b")
_TYPE_KEYWORDS = frozenset(
    "auto bool char char8_t char16_t char32_t double float int long short signed unsigned void wchar_t".split()
)
# What may stand between a parameter list and the body: qualifiers, a trailing return type,
# attributes. Each item matches in one way only, so a failed match does not backtrack.
_FUNCTION_TRAILER = re.compile(r"(?:\s|[A-Za-z_]\w*\b|::|->|[<>,*&]|\[\[[^\]]*\]\]|\([^()]*\))*")
_MAX_FUNCTION_HEAD = 2048
MAX_BLOCK_NESTING = 64


@lru_cache(maxsize=512)
def _parameter_pattern(name: str) -> re.Pattern[str]:
    escaped = re.escape(name)
    return re.compile(escaped + r"(?<![\w.:]" + escaped + r")(?=\s*[,)=\[])")


class FunctionBodies:
    """The function definitions of a C/C++ text, read on demand from the braces around an
    offset. A function is given as a function-like define of its body (line and name of its
    head, its parameter names, the body's text): substituting a call's arguments for the
    parameters in the body says what the call makes the body do. An unnamed parameter is "",
    so the others keep their positions. A brace block opened by a macro invocation such as
    `BLOCK(ns, key, m) {` reads as a function whose parameters are all unnamed."""

    def __init__(self, stripped: str) -> None:
        self._stripped = stripped
        self._parameter_like: dict[str, bool] = {}

    def may_take(self, names: Iterable[str]) -> bool:
        """A quick test that one of `names` may be a function's parameter in the text: it is
        written after a type somewhere, then `,` `)` `=` or `[`. `around` tells for sure."""
        return any(self._is_parameter_like(name) for name in names)

    def _is_parameter_like(self, name: str) -> bool:
        if name not in self._parameter_like:
            text = self._stripped
            self._parameter_like[name] = any(
                text[before - 1] in "*&>" or is_identifier_char(text[before - 1])
                for match in _parameter_pattern(name).finditer(text)
                if (before := skip_space_back(text, match.start())) > 0
            )
        return self._parameter_like[name]

    @cached_property
    def _code(self) -> str:
        literals = [(start, end) for _kind, start, end in lexemes(self._stripped)]
        directives = [directive.span() for directive in directive_lines(DIRECTIVE, self._stripped)]
        return blank_spans(self._stripped, sorted(literals + directives))

    @cached_property
    def _braces(self) -> Braces:
        return Braces(self._code)

    @cached_property
    def _opens(self) -> list[int]:
        return sorted(self._braces.closing)

    @cached_property
    def _enclosing(self) -> dict[int, int | None]:
        """The `{` directly enclosing each `{`, None at the top level."""
        enclosing: dict[int, int | None] = {}
        open_now: list[int] = []
        for opened in self._opens:
            while open_now and self._braces.closing[open_now[-1]] < opened:
                open_now.pop()
            enclosing[opened] = open_now[-1] if open_now else None
            open_now.append(opened)
        return enclosing

    @cached_property
    def _brackets(self) -> Brackets:
        return Brackets(self._code)

    @cached_property
    def _lines(self) -> Lines:
        return Lines(self._stripped)

    def around(self, offset: int) -> CppDefine | None:
        """The innermost function whose body holds `offset`; nested blocks, lambdas and
        initialisers inside it are looked through, up to MAX_BLOCK_NESTING of them. None
        outside any function."""
        index = bisect_left(self._opens, offset) - 1
        opened = self._opens[index] if index >= 0 else None
        for _ in range(MAX_BLOCK_NESTING):
            if opened is None:
                return None
            if self._braces.closing[opened] >= offset:
                function = self._function_opened_at(opened)
                if function is not None or self._opens_scope(opened):
                    return function
            opened = self._enclosing[opened]
        return None

    def defined(self, name: str) -> list[CppDefine]:
        """The functions named `name` (last `::` component) that the text defines."""
        found = []
        for _start, paren in occurrences(self._code, name):
            group = self._brackets.group(paren)
            trailer = _FUNCTION_TRAILER.match(self._code, group[0] + 1) if group else None
            body = trailer.end() if trailer else -1
            if 0 <= body < len(self._code) and self._code[body] == "{":
                function = self._function_opened_at(body)
                if function is not None and function.name == name:
                    found.append(function)
        return found

    def _function_opened_at(self, opened: int) -> CppDefine | None:
        """The function whose body the `{` at `opened` opens, if it opens one."""
        code = self._code
        end = opened
        for _ in range(len(_HEAD_QUALIFIERS) + 1):
            close = code.rfind(")", max(0, end - _MAX_FUNCTION_HEAD), end)
            if close < 0 or not _FUNCTION_TRAILER.fullmatch(code, close + 1, end):
                return None
            paren = matching_opener(code, close, "()", _MAX_FUNCTION_HEAD)
            if paren is None:
                return None
            name_end = skip_space_back(code, paren)
            name_start = identifier_start(code, name_end)
            name = code[name_start:name_end]
            if name not in _HEAD_QUALIFIERS:
                break
            end = name_start
        else:
            return None
        if not name or name[0].isdigit() or name in KEYWORDS_BEFORE_PARENTHESES or code[name_end - 1 : name_end] == "]":
            return None
        body = self._stripped[opened + 1 : self._braces.closing[opened]]
        return CppDefine(self._lines.of(name_start), name, self._parameters(paren), body)

    def _parameters(self, paren: int) -> tuple[str, ...]:
        group = self._brackets.group(paren)
        if group is None:
            return ()
        close, commas = group
        pieces = [self._code[left + 1 : right] for left, right in pairwise([paren, *commas, close])]
        parameters: list[str] = []
        pending = ""
        for piece in pieces:  # commas inside template arguments do not separate parameters
            pending = f"{pending},{piece}" if pending else piece
            if pending.count("<") <= pending.count(">"):
                parameters.append(_parameter_name(pending))
                pending = ""
        return tuple(parameters) if parameters != [""] else ()

    def _opens_scope(self, opened: int) -> bool:
        """Whether the `{` at `opened` opens a namespace, class or other scope that no function
        body encloses."""
        before = max(self._code.rfind(char, 0, opened) for char in ";{}")
        return _SCOPE_KEYWORDS.search(self._code, before + 1, opened) is not None


def parameter_names(parameters: str) -> tuple[str, ...]:
    """The names a parameter list's text declares (`const T& a, std::map<K, V> b = {}`), unnamed
    parameters left out."""
    return tuple(name for name in map(_parameter_name, split_top_level(parameters)) if name)


def _parameter_name(parameter: str) -> str:
    """`const T& name = x` -> "name"; "" for an unnamed parameter (`T`, `ns::T`, `int`)."""
    declarator = parameter.split("=", 1)[0].rstrip()
    while declarator.endswith("]") and "[" in declarator:  # an array parameter
        declarator = declarator[: declarator.rfind("[")].rstrip()
    if declarator.endswith("..."):
        return "..."
    start = identifier_start(declarator, len(declarator))
    name = declarator[start:]
    before = declarator[:start].rstrip()
    if not name or name[0].isdigit() or not before or before.endswith("::") or name in _TYPE_KEYWORDS:
        return ""
    return name


_STATEMENT_TOKEN = re.compile(
    r"(?=[\"'\dRuUL()\[\]{};])(?:" + LITERAL_PATTERNS + r"| (?P<bracket>[()\[\]{}]) | (?P<end>;))", re.S | re.X
)


def body_statements(stripped: str, body: Span) -> list[str]:
    """The statements of the function body whose braces are at `body` in `stripped`
    (a text with comments blanked), whitespace-collapsed: the body is cut at the
    semicolons outside brackets and literals, and after each block at its top level,
    which stays whole in the statement that opens it (`if (x) { a(); }`).
    Preprocessor lines are left out."""
    opened, closed = body
    inside = opened + 1
    directives = ((d.start() - inside, d.end() - inside) for d in DIRECTIVE.finditer(stripped, inside, closed))
    text = blank_spans(stripped[inside:closed], directives)
    statements = []
    depth = 0
    start = 0
    for kind, begin, _ in tokens(text, _STATEMENT_TOKEN):
        if kind == "bracket":
            depth += 1 if text[begin] in "([{" else -1
            if depth == 0 and text[begin] == "}":
                statements.append(text[start : begin + 1])
                start = begin + 1
        elif kind == "end" and depth <= 0:
            statements.append(text[start:begin])
            start = begin + 1
    statements.append(text[start:])
    return [statement for statement in map(collapse, statements) if statement]


_ALWAYS_FAILS = re.compile(r"throw\b|[A-Za-z_]\w*(?: ?:: ?[A-Za-z_]\w*)* ?\( ?(?:false|0) ?[,)]")
_RETURN = re.compile(r"return\b")


def always_fails(statement: str) -> bool:
    """Whether a whitespace-collapsed statement always leaves its function by failing: `throw`,
    or a check whose condition is `false` or 0 (`TORCH_CHECK(false, "unsupported")`)."""
    return _ALWAYS_FAILS.match(statement) is not None


def always_leaves(statement: str) -> bool:
    """Whether a whitespace-collapsed statement always leaves its function: a `return`, or one
    that always fails."""
    return _RETURN.match(statement) is not None or always_fails(statement)


def reached(statements: list[str]) -> list[str]:
    """A body's statements up to the first that always leaves: those after it never run."""
    for number, statement in enumerate(statements):
        if always_leaves(statement):
            return statements[: number + 1]
    return statements


_AFTER_PARAMETERS = re.compile(r"\)[^(){};]*\Z")
MAX_HEAD = 2000


def parameters_before(stripped: str, opened: int) -> tuple[str, ...]:
    """The parameter names of the function whose body's brace is at `opened` in `stripped`: of
    the last parenthesized list before it (qualifiers such as `const override` between)."""
    head = stripped[max(0, opened - MAX_HEAD) : opened]
    after = _AFTER_PARAMETERS.search(head)
    if after is None:
        return ()
    depth, position = 0, after.start()
    while position >= 0:
        depth += {")": 1, "(": -1}.get(head[position], 0)
        if depth == 0:
            return parameter_names(head[position + 1 : after.start()])
        position -= 1
    return ()
