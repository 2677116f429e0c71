"""Facts from C and C++ sources, read as text without a compiler.

Comments are blanked first, keeping every offset and line break, so a position in
the blanked text is the same position in the file. Preprocessor directives, class
definitions, out-of-class member definitions and calls are then picked out by
linear-time scans. Malformed input never raises: what cannot be read is skipped.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from functools import cache, lru_cache
from itertools import pairwise

from air.index.blanking import blank_spans
from air.index.model import (
    CppBlockCall,
    CppCall,
    CppClass,
    CppDefine,
    CppFacts,
    CppInclude,
    CppMethod,
    CppMethodDef,
    Span,
)

# --- Lexing -----------------------------------------------------------------

_COMMENT_PATTERNS = r"""
    (?P<line_comment>//[^\\\n]*(?:\\(?:\r\n|.)[^\\\n]*)*)
  | (?P<block_comment>/\*)
"""

# A number with digit separators (1'000'000) is matched whole so that its quotes
# do not open a char literal. Unterminated strings and chars end at the line end.
_LITERAL_PATTERNS = r"""
    (?P<raw_string>(?<!\w)(?:u8|[uUL])?R"(?P<delimiter>[^()\\\s"]{0,16})\()
  | (?P<number>(?<![\w.])\d[\w.]*(?:'[\w.]+)+)
  | (?P<string>"[^"\\\n]*(?:\\(?:\r\n|.)[^"\\\n]*)*"?)
  | (?P<char>'[^'\\\n]*(?:\\(?:\r\n|.)[^'\\\n]*)*'?)
"""

# The leading lookaheads name every character a token can start with, which lets
# the regex engine skip ahead quickly instead of trying each alternative everywhere.
_LEXEME = re.compile(r"(?=[/\"'\dRuUL])(?:" + _COMMENT_PATTERNS + "|" + _LITERAL_PATTERNS + ")", re.S | re.X)
_ARGUMENT_TOKEN = re.compile(
    r"(?=[\"'\dRuUL()\[\]{},])(?:" + _LITERAL_PATTERNS + r"| (?P<bracket>[()\[\]{},]))", re.S | re.X
)
_COMMENT_KINDS = frozenset({"line_comment", "block_comment"})

_NEWLINE = re.compile(r"\n")
_CONTINUATION = re.compile(r"\\[ \t]*\r?\n")


def _lexemes(text: str, pattern: re.Pattern[str] = _LEXEME, pos: int = 0) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) of every token `pattern` finds from `pos` on, by default
    every comment and literal."""
    search = pattern.search
    while match := search(text, pos):
        pos = _lexeme_end(text, match)
        yield match.lastgroup or "", match.start(), pos


def _lexeme_end(text: str, match: re.Match[str]) -> int:
    """End of the token `match` starts; block comments and raw strings run to their
    closing sequence, or to the end of the text if it is missing."""
    if match.lastgroup == "block_comment":
        closing = "*/"
    elif match.lastgroup == "raw_string":
        closing = ")" + match["delimiter"] + '"'
    else:
        return match.end()
    end = text.find(closing, match.end())
    return len(text) if end < 0 else end + len(closing)


def _collapse(text: str) -> str:
    """Join continuation lines and collapse runs of whitespace to one space."""
    return " ".join(_CONTINUATION.sub(" ", text).split())


def strip_comments(text: str) -> str:
    """Blank out `//` and `/* */` comments, replacing every comment character except
    line breaks by a space. String and char literals (raw strings included) and line
    continuations are kept, so the result has the length and line breaks of `text`."""
    comments = ((start, end) for kind, start, end in _lexemes(text) if kind in _COMMENT_KINDS)
    return blank_spans(text, comments)


class _Lines:
    """1-based line numbers of offsets."""

    def __init__(self, text: str) -> None:
        self._breaks = [match.start() for match in _NEWLINE.finditer(text)]

    def of(self, offset: int) -> int:
        return bisect_left(self._breaks, offset) + 1


# --- Small scanning helpers -------------------------------------------------

_BRACKET_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_BRACKETS_OF = {opener: re.compile(f"[{re.escape(opener + closer)}]") for opener, closer in _BRACKET_PAIRS.items()}


def _skip_group(text: str, pos: int) -> int | None:
    """Offset just past the bracket closing the one at `pos`, or None if it is never
    closed. Only brackets of the same kind are counted."""
    opener = text[pos]
    depth = 0
    for bracket in _BRACKETS_OF[opener].finditer(text, pos):
        depth += 1 if bracket.group() == opener else -1
        if depth == 0:
            return bracket.end()
    return None


def _is_identifier_char(char: str) -> bool:
    return char == "_" or char.isalnum()


def _identifier_start(text: str, end: int, begin: int = 0) -> int:
    """Start of the identifier that ends at `end` (== `end` if there is none)."""
    start = end
    while start > begin and _is_identifier_char(text[start - 1]):
        start -= 1
    return start


def _skip_space_back(text: str, end: int, begin: int = 0) -> int:
    """Offset just past the last non-blank character before `end`; a backslash
    counts as blank, being a line continuation where it can stand."""
    while end > begin and (text[end - 1].isspace() or text[end - 1] == "\\"):
        end -= 1
    return end


def _qualifier_start(text: str, start: int) -> int:
    """Start of the `a::b::` qualification written before the name at `start`."""
    begin = start
    while True:
        colons = _skip_space_back(text, begin)
        if colons < 2 or text[colons - 2 : colons] != "::":
            return begin
        scope_end = _skip_space_back(text, colons - 2)
        scope_start = _identifier_start(text, scope_end)
        if scope_start == scope_end:
            # `::f` names the global scope; `Tpl<T>::f` keeps only `f`.
            return begin if text[scope_end - 1 : scope_end] == ">" else colons - 2
        begin = scope_start


class _Brackets:
    """Matches the brackets of a text, leaving out those inside literals. It scans
    lazily from the brackets asked about and remembers every pair it meets, so the
    text is read once however many groups are nested or left open. A closing
    bracket closes the innermost open one, whatever their kinds."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._closed: dict[int, tuple[int, list[int]]] = {}
        self._unclosed: set[int] = set()

    def group(self, opened: int) -> tuple[int, list[int]] | None:
        """(offset of the closing bracket, offsets of the top-level commas) of the
        group opened at `opened`, or None if no bracket of its kind closes it."""
        if opened not in self._closed and opened not in self._unclosed:
            self._scan(opened)
        found = self._closed.get(opened)
        if found is None or self._text[found[0]] != _BRACKET_PAIRS[self._text[opened]]:
            return None
        return found

    def _scan(self, opened: int) -> None:
        stack: list[tuple[int, list[int]]] = [(opened, [])]
        for kind, start, _ in _lexemes(self._text, _ARGUMENT_TOKEN, opened + 1):
            if kind != "bracket":
                continue
            char = self._text[start]
            if char in "([{":
                stack.append((start, []))
            elif char == ",":
                stack[-1][1].append(start)
            else:
                inner, commas = stack.pop()
                self._closed[inner] = (start, commas)
                if not stack:
                    return
        self._unclosed.update(inner for inner, _ in stack)


# --- Preprocessor directives ------------------------------------------------

_DIRECTIVE = re.compile(
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
_INCLUDE_KEYWORDS = frozenset({"include", "include_next", "import"})


def _read_define(stripped: str, directive: re.Match[str], lines: _Lines) -> CppDefine | None:
    head = _DEFINE_HEAD.match(stripped, directive.start("rest"), directive.end("rest"))
    if head is None:
        return None
    params = None
    if head["function_like"] is not None:
        params = _parse_parameters(head["params"]) if head["closed"] else None
        if params is None:
            return None
    body = _collapse(stripped[head.end() : directive.end()])
    return CppDefine(lines.of(directive.start()), head["name"], params, body)


def _parse_parameters(text: str) -> tuple[str, ...] | None:
    """`a, b, ...` -> ("a", "b", "..."); None if the list is malformed."""
    text = _CONTINUATION.sub(" ", text)
    if not text.strip():
        return ()
    params = [param.strip() for param in text.split(",")]
    if not all(_PARAMETER.fullmatch(param) for param in params):
        return None
    return tuple("".join(param.split()) for param in params)


def _read_include(stripped: str, directive: re.Match[str], lines: _Lines) -> CppInclude | None:
    target = _INCLUDE_TARGET.match(stripped, directive.start("rest"), directive.end("rest"))
    if target is None:
        return None
    system = target["system"] is not None
    return CppInclude(lines.of(directive.start()), target["system"] if system else target["local"], system)


class _DefineSpans:
    """Where each `#define` of a text lies, to tell which macro body holds an offset."""

    def __init__(self, stripped: str) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._names: list[tuple[int, str]] = []
        for directive in _DIRECTIVE.finditer(stripped):
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


# --- Classes ----------------------------------------------------------------

_CLASS_KEY = re.compile(r"(?:class|struct)\b")
_CLASS_HEAD_END = re.compile(r"[{;}]")
_CLASS_HEAD_ITEM = re.compile(r"\s*(?:(?P<attribute>\[\[)|(?P<name>(?:::\s*)?[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*))")
_FINAL = re.compile(r"\s*final\b")
_BASE_SPLIT = re.compile(r"[<>()\[\]{},]")
_BASE_ACCESS = re.compile(r"^(?:(?:public|protected|private|virtual)\b\s*)*")
_BRACE = re.compile(r"[{}]")
_MAX_CLASS_HEAD = 2000


class _Braces:
    """The matching `}` of every `{` of a text; an unclosed `{` closes at the end."""

    def __init__(self, code: str) -> None:
        self.closing: dict[int, int] = {}
        stack: list[int] = []
        for brace in _BRACE.finditer(code):
            if brace.group() == "{":
                stack.append(brace.start())
            elif stack:
                self.closing[stack.pop()] = brace.start()
        self.closing.update((opened, len(code)) for opened in stack)
        self._opens = sorted(self.closing)

    def children(self, opened: int) -> Iterator[tuple[int, int]]:
        """(open, close) of the brace groups directly inside the one opened at `opened`."""
        close = self.closing[opened]
        index = bisect_right(self._opens, opened)
        while index < len(self._opens) and self._opens[index] < close:
            inner = self._opens[index]
            yield inner, self.closing[inner]
            index = bisect_right(self._opens, self.closing[inner], index)


def _read_classes(code: str, lines: _Lines, macros: Collection[str], braces: Callable[[], _Braces]) -> Iterator[CppClass]:
    keys = [key for key in _CLASS_KEY.finditer(code) if _starts_class_head(code, key.start())]
    for index, key in enumerate(keys):
        limit = keys[index + 1].start() if index + 1 < len(keys) else len(code)
        # A head ends before the next `class` keyword, as in `template <class T> class X {`.
        head_end = _CLASS_HEAD_END.search(code, key.end(), min(limit, key.end() + _MAX_CLASS_HEAD))
        if head_end is None or head_end.group() != "{":
            continue
        head = _parse_class_head(code[key.end() : head_end.start()], macros)
        if head is None:
            continue
        name, bases = head
        methods = _member_functions(code, braces(), head_end.start(), name, lines)
        yield CppClass(lines.of(key.start()), name, bases, methods)


def _starts_class_head(code: str, start: int) -> bool:
    """Whether the `class`/`struct` at `start` is a keyword of its own, not part of a
    longer identifier nor of `enum class`."""
    if start > 0 and _is_identifier_char(code[start - 1]):
        return False
    before = _skip_space_back(code, start)
    return code[_identifier_start(code, before) : before] != "enum"


def _parse_class_head(head: str, macros: Collection[str]) -> tuple[str, tuple[str, ...]] | None:
    """Name and bases from what stands between `class`/`struct` and `{`, or None if
    that is not a class head (an elaborated type, a template parameter, ...)."""
    named = _class_name(head, macros)
    if named is None:
        return None
    name, pos = named
    if head.startswith("<", pos):
        pos = _skip_group(head, pos)
        if pos is None:
            return None
    final = _FINAL.match(head, pos)
    rest = head[final.end() if final else pos :].strip()
    if not rest:
        return name, ()
    if rest.startswith(":") and not rest.startswith("::"):
        return name, _split_bases(rest[1:])
    return None


def _class_name(head: str, macros: Collection[str]) -> tuple[str, int] | None:
    """The class name and the offset after it. Attributes and export macros that
    precede it (`[[x]]`, `C10_API`, `alignas(8)`, `__attribute__((...))`) are
    skipped: the last plain identifier is the name, unless it is one of `macros`."""
    name = None
    pos = 0
    while item := _CLASS_HEAD_ITEM.match(head, pos):
        if item["attribute"]:
            after = _skip_group(head, item.start("attribute"))
        elif name is not None and item["name"] == "final":
            break
        elif item["name"] in macros:
            after = item.end()
        elif head.startswith("(", _skip_space(head, item.end())):
            if name is not None:
                return None  # `struct S f(...)`: a function returning S
            after = _skip_group(head, _skip_space(head, item.end()))
        else:
            name, after = item["name"], item.end()
        if after is None:
            return None
        pos = after
    if name is None:
        return None
    return "".join(name.split()), _skip_space(head, pos)


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _split_bases(text: str) -> tuple[str, ...]:
    """`public A, virtual B<int, X>` -> ("A", "B<int, X>")."""
    bases = (_collapse(_BASE_ACCESS.sub("", part.strip(), count=1)) for part in _split_top_level(text))
    return tuple(base for base in bases if base)


def _split_top_level(text: str) -> list[str]:
    """`A, B<int, X>` -> ["A", " B<int, X>"]: `text` cut at the commas outside brackets."""
    parts = []
    depth = 0
    last = 0
    for bracket in _BASE_SPLIT.finditer(text):
        char = bracket.group()
        if char in "<([{":
            depth += 1
        elif char != ",":
            depth -= 1
        elif depth == 0:
            parts.append(text[last : bracket.start()])
            last = bracket.end()
    parts.append(text[last:])
    return parts


# --- Member functions declared in a class body --------------------------------

_ACCESS_LABELS = re.compile(r"\s*(?:(?:public|protected|private)\s*:(?!:)\s*)*")
_TEMPLATE_PREFIX = re.compile(r"template\s*(?=<)")
_NOT_A_MEMBER_FUNCTION = re.compile(r"\s*(?:using|typedef|friend)\b")
_DECLARATION_EVENT = re.compile(r"\(|(?<![=!<>])=(?!=)")
_NOT_FUNCTION_NAMES = frozenset(
    """
    alignas alignof auto bool char const decltype delete double explicit float if int long
    new noexcept operator requires return short signed sizeof static_assert switch throw
    typeid unsigned void volatile while __attribute__ __declspec _Pragma __pragma
    """.split()
)


def _member_functions(code: str, braces: _Braces, opened: int, class_name: str, lines: _Lines) -> tuple[CppMethod, ...]:
    """The member functions declared or defined directly in the class body opened at
    `opened`, in order, each with the braces of its body when one follows the
    declaration. Destructors are named `~Name`; operators are left out."""
    constructor = class_name.rpartition("::")[2]
    methods = []
    cursor = opened + 1
    for segment_end, block in _segments(braces, opened):
        start = cursor
        for declaration in code[cursor:segment_end].split(";"):
            declared = _declared_function(declaration, constructor)
            if declared is not None:
                name, offset = declared
                last = start + len(declaration) == segment_end
                methods.append(CppMethod(lines.of(start + offset), name, block if last else None))
            start += len(declaration) + 1
        cursor = block[1] + 1 if block else segment_end
    return tuple(methods)


def _segments(braces: _Braces, opened: int) -> Iterator[tuple[int, Span | None]]:
    """The text of the class body opened at `opened` cut at the brace groups directly
    inside it: (end of each piece, the group that follows it or None for the last)."""
    for inner_open, inner_close in braces.children(opened):
        yield inner_open, (inner_open, inner_close)
    yield braces.closing[opened], None


def _declared_function(declaration: str, constructor: str) -> tuple[str, int] | None:
    """The function a member declaration declares and the offset of its name, or None
    for data members, type aliases, friends, operators and macro invocations."""
    begin = _ACCESS_LABELS.match(declaration).end()
    if template := _TEMPLATE_PREFIX.match(declaration, begin):
        begin = _skip_group(declaration, template.end()) or len(declaration)
    if _NOT_A_MEMBER_FUNCTION.match(declaration, begin):
        return None
    pos = begin
    angles = 0
    while event := _DECLARATION_EVENT.search(declaration, pos):
        paren = event.start()
        if event.group() != "(":
            return None  # an initialiser: a data member
        angles += declaration.count("<", pos, paren) - declaration.count(">", pos, paren)
        # Inside template arguments, as in `std::function<void(int)>`, no name is declared.
        declared = _function_name_before(declaration, begin, paren, constructor) if angles <= 0 else None
        if declared is not None:
            return declared
        after = _skip_group(declaration, paren)
        if after is None:
            return None
        pos = after
    return None


def _function_name_before(declaration: str, begin: int, paren: int, constructor: str) -> tuple[str, int] | None:
    """The declared name and its offset if the `(` at `paren` opens a function's parameter list."""
    end = _skip_space_back(declaration, paren, begin)
    start = _identifier_start(declaration, end, begin)
    name = declaration[start:end]
    if not name or name in _NOT_FUNCTION_NAMES or name[0].isdigit():
        return None
    before = _skip_space_back(declaration, start, begin)
    if before > begin and declaration[before - 1] == "~":
        name = "~" + name
        before = _skip_space_back(declaration, before - 1, begin)
    if before == begin:
        # With no type in front, only a constructor or destructor is a function;
        # anything else is a macro invocation such as `DISABLE_COPY(Foo)`.
        return (name, start) if name.lstrip("~") == constructor else None
    preceding = declaration[_identifier_start(declaration, before, begin) : before]
    return None if preceding == "operator" else (name, start)


# --- Out-of-class member definitions ----------------------------------------

_SCOPED_DECLARATOR = re.compile(r"::\s*(?P<name>(?:~\s*)?[A-Za-z_]\w*)\s*\(")
_TRAILER_TOKEN = re.compile(r"\s*(::|->|&&|[A-Za-z_]\w*|[(\[]|.)", re.S)
_TRAILER_PASSES = frozenset({"::", "->", "&&", "&", "*", "<", ">", ","})
_MAX_TRAILER_TOKENS = 32
_NOT_BEFORE_DECLARATOR = frozenset(",:(<=.!?+-/%|^")
_MAX_TEMPLATE_ARGUMENTS = 256


def _read_method_defs(code: str, lines: _Lines, braces: Callable[[], _Braces]) -> Iterator[CppMethodDef]:
    brackets = _Brackets(code)
    for declarator in _SCOPED_DECLARATOR.finditer(code):
        scope = _scope_before(code, declarator.start())
        if scope is None:
            continue
        start, cls = scope
        if not _may_begin_declarator(code, _qualifier_start(code, start)):
            continue
        name = "".join(declarator["name"].split())
        parameters = brackets.group(declarator.end() - 1)
        if parameters is None:
            continue
        defined, opened = _definition_after(code, parameters[0] + 1, brackets, constructor=name == cls)
        if defined:
            yield CppMethodDef(lines.of(start), cls, name, None if opened is None else (opened, braces().closing[opened]))


def _may_begin_declarator(code: str, start: int) -> bool:
    """Whether a qualified name at `start` can begin a declarator, rather than stand
    in a constructor's initialiser list, an argument or an expression."""
    before = _skip_space_back(code, start)
    return code[before - 1 : before] not in _NOT_BEFORE_DECLARATOR


def _scope_before(code: str, colons: int) -> tuple[int, str] | None:
    """(start, name) of the class or namespace written before the `::` at `colons`,
    template arguments dropped: `Foo<T>::` -> "Foo"."""
    end = _skip_space_back(code, colons)
    if code[end - 1 : end] == ">":
        opening = _template_arguments_start(code, end)
        if opening is None:
            return None
        end = _skip_space_back(code, opening)
    start = _identifier_start(code, end)
    if start == end or code[start].isdigit():
        return None
    return start, code[start:end]


def _template_arguments_start(code: str, end: int) -> int | None:
    """Offset of the `<` that opens the template arguments ending with the `>` before `end`."""
    depth = 0
    for pos in range(end - 1, max(end - _MAX_TEMPLATE_ARGUMENTS, 0) - 1, -1):
        char = code[pos]
        if char == ">":
            depth += 1
        elif char == "<":
            depth -= 1
            if depth == 0:
                return pos
        elif char in ";{}()":
            return None
    return None


def _definition_after(code: str, pos: int, brackets: _Brackets, constructor: bool) -> tuple[bool, int | None]:
    """Whether the parameter list that ends at `pos` is followed by a function body:
    `{` after qualifiers and a trailing return type, `= default`, or for a
    constructor an initialiser list; and where the body's `{` is, when it follows
    at once."""
    for _ in range(_MAX_TRAILER_TOKENS):
        token = _TRAILER_TOKEN.match(code, pos)
        if token is None:
            return False, None
        text = token[1]
        if text == "{":
            return True, token.start(1)
        if text == ":":
            return constructor, None
        if text == "=":
            following = _TRAILER_TOKEN.match(code, token.end())
            return following is not None and following[1] == "default", None
        if text in ("(", "["):
            group = brackets.group(token.start(1))
            if group is None:
                return False, None
            pos = group[0] + 1
        elif text in _TRAILER_PASSES or _is_identifier_char(text[0]):
            pos = token.end()
        else:
            return False, None
    return False, None


# --- Function bodies ---------------------------------------------------------

_STATEMENT_TOKEN = re.compile(
    r"(?=[\"'\dRuUL()\[\]{};])(?:" + _LITERAL_PATTERNS + r"| (?P<bracket>[()\[\]{}]) | (?P<end>;))", re.S | re.X
)


def body_statements(stripped: str, body: Span) -> list[str]:
    """The statements of the function body whose braces are at `body` in `stripped`
    (a text with comments blanked), whitespace-collapsed: the body is cut at the
    semicolons outside brackets and literals, and after each block at its top level,
    which stays whole in the statement that opens it (`if (x) { a(); }`).
    Preprocessor lines are left out."""
    opened, closed = body
    inside = opened + 1
    directives = ((d.start() - inside, d.end() - inside) for d in _DIRECTIVE.finditer(stripped, inside, closed))
    text = blank_spans(stripped[inside:closed], directives)
    statements = []
    depth = 0
    start = 0
    for kind, begin, _ in _lexemes(text, _STATEMENT_TOKEN):
        if kind == "bracket":
            depth += 1 if text[begin] in "([{" else -1
            if depth == 0 and text[begin] == "}":
                statements.append(text[start : begin + 1])
                start = begin + 1
        elif kind == "end" and depth <= 0:
            statements.append(text[start:begin])
            start = begin + 1
    statements.append(text[start:])
    return [statement for statement in map(_collapse, statements) if statement]


def extract_cpp(text: str) -> CppFacts:
    """Read a C or C++ source in one pass. Never raises.

    - defines: object-like and function-like, continuation lines joined and the
      body whitespace-collapsed;
    - includes: `#include "x"` (system=False) and `#include <x>` (system=True);
    - classes: `class`/`struct` definitions with a body, export macros and
      attributes before the name skipped, bases without access specifiers or
      `virtual`, and the member functions declared or defined directly in the
      body, overloads included, destructors as `~Name`, operators left out, each
      with the braces of its body when it is defined there;
    - method_defs: out-of-class definitions `Cls::name(...) {`, including
      constructors (name == cls), destructors (`~Cls`) and `= default`, with the
      braces of their bodies. The scope written before `::name` is taken as the
      class, so a namespace-qualified free function definition is reported as well."""
    lexemes = list(_lexemes(text))
    stripped = blank_spans(text, ((start, end) for kind, start, end in lexemes if kind in _COMMENT_KINDS))
    lines = _Lines(text)
    defines: list[CppDefine] = []
    includes: list[CppInclude] = []
    directive_spans: list[tuple[int, int]] = []
    for directive in _DIRECTIVE.finditer(stripped):
        directive_spans.append(directive.span())
        if directive["keyword"] == "define":
            define = _read_define(stripped, directive, lines)
            if define is not None:
                defines.append(define)
        elif directive["keyword"] in _INCLUDE_KEYWORDS:
            include = _read_include(stripped, directive, lines)
            if include is not None:
                includes.append(include)
    # Code without comments, literals or directives: what classes and bodies are read from.
    code = blank_spans(text, sorted([(start, end) for _, start, end in lexemes] + directive_spans))
    object_like = {define.name for define in defines if define.params is None}
    braces = cache(lambda: _Braces(code))  # matched once, when a class or a body needs them
    return CppFacts(
        stripped=stripped,
        defines=tuple(defines),
        includes=tuple(includes),
        classes=tuple(_read_classes(code, lines, object_like, braces)),
        method_defs=tuple(_read_method_defs(code, lines, braces)),
    )


# --- Calls ------------------------------------------------------------------


_MAX_ARGUMENT = 1024


@lru_cache(maxsize=512)
def _call_pattern(name: str) -> re.Pattern[str]:
    return re.compile(re.escape(name) + r"(?:\s|\\(?=\r?\n))*\(")


class _LiteralSpans:
    """Tells whether offsets, asked in increasing order, lie inside a literal."""

    def __init__(self, text: str) -> None:
        self._lexemes = _lexemes(text)
        self._start = self._end = 0
        self._past_end = len(text) + 1

    def holds(self, offset: int) -> bool:
        while self._end <= offset:
            _, self._start, self._end = next(self._lexemes, ("", self._past_end, self._past_end))
        return self._start <= offset


def find_calls(facts: CppFacts, names: Collection[str]) -> list[CppCall]:
    """Every invocation `NAME(args)` in `facts.stripped` whose last `::` component is
    one of `names` (plain identifiers). Reported in order of position, each with
    its name as written (qualification kept, whitespace removed), its arguments
    split at top-level commas and whitespace-collapsed, and the macro whose
    `#define` holds it. A `#define NAME(...)` is not a call of NAME, and calls
    whose parentheses never close are skipped. An argument is read from at most
    its first 1,024 characters of source, which bounds the work on deeply nested
    calls."""
    text = facts.stripped
    occurrences = sorted(
        (start, paren, name)
        for name in set(names)
        if name and name in text
        for start, paren in _occurrences(text, name)
    )
    if not occurrences:
        return []
    literals = _LiteralSpans(text)
    defines = _DefineSpans(text)
    brackets = _Brackets(text)
    lines = _Lines(text)
    calls = []
    for start, paren, name in occurrences:
        if literals.holds(start) or defines.is_macro_name(start):
            continue
        group = brackets.group(paren)
        if group is None:
            continue
        args = _arguments(text, paren, group)
        calls.append(CppCall(lines.of(start), _written_name(text, start, name), args, defines.macro_at(start), group[0]))
    return calls


def _arguments(text: str, opened: int, group: tuple[int, list[int]]) -> tuple[str, ...]:
    """The arguments of the bracket group opened at `opened`, each read from at most its
    first 1,024 characters and whitespace-collapsed; () when there are none."""
    close, commas = group
    separators = [opened, *commas, close]
    args = tuple(
        _collapse(text[left + 1 : min(right, left + 1 + _MAX_ARGUMENT)]) for left, right in pairwise(separators)
    )
    return () if args == ("",) else args


def _written_name(text: str, start: int, name: str) -> str:
    """`name`, found at `start`, with the qualification written before it."""
    return "".join(_CONTINUATION.sub("", text[_qualifier_start(text, start) : start]).split()) + name


@lru_cache(maxsize=512)
def _construction_pattern(name: str) -> re.Pattern[str]:
    """`name` followed by what may begin a construction: template arguments, a brace, or a
    name and a bracket. It starts with the name, which lets the search skip ahead to it."""
    return re.compile(rf"{re.escape(name)}\b(?=\s*(?:<|\{{|[A-Za-z_][\w#]*\s*[({{]))")


_MACRO_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
_BARE_DECLARATION = re.compile(r"[A-Za-z_][\w#]*\s*;")
_DECLARATOR = re.compile(r"\s*([A-Za-z_][\w#]*)\s*")
_NOT_CONSTRUCTED_AFTER = frozenset({"class", "struct", "union", "enum", "namespace", "friend", "typename"})


def find_constructions(facts: CppFacts, names: Collection[str]) -> list[CppCall]:
    """Every object of a class among `names` (plain identifiers) constructed with
    arguments, as a registrar object is: `Name var(args)`, `Name var{args}`,
    `Name{args}`, and with template arguments `Name<T> var(args)`, `Name<T>{args}` or
    `Name<T>(args)`. Template arguments come first in `args`, as a macro that wraps
    the registrar takes them: `Registrar<K> r(x)` reads as `Registrar(K, x)`, and
    `Registrar<K> r;` as `Registrar(K)`. A variable named by a macro,
    `Name MAKE_NAME(v)(args)`, counts too. Reported as
    `find_calls` reports calls; `Name(args)` is one of those, and a class definition
    (`struct Name {`), a function defined to return a `Name` and a construction
    without arguments are not constructions."""
    text = facts.stripped
    occurrences = sorted(
        (match.start(), match.end(), name)
        for name in set(names)
        if name and name in text
        for match in _construction_pattern(name).finditer(text)
        if match.start() == 0 or not (_is_identifier_char(text[match.start() - 1]) or text[match.start() - 1] == "~")
    )
    if not occurrences:
        return []
    literals = _LiteralSpans(text)
    defines = _DefineSpans(text)
    brackets = _Brackets(text)
    lines = _Lines(text)
    found = []
    for start, end, name in occurrences:
        if literals.holds(start) or defines.is_macro_name(start) or _follows_keyword(text, start):
            continue
        construction = _construction_after(text, end, brackets)
        if construction is not None:
            args, close = construction
            found.append(CppCall(lines.of(start), _written_name(text, start, name), args, defines.macro_at(start), close))
    return found


def _follows_keyword(text: str, start: int) -> bool:
    before = _skip_space_back(text, _qualifier_start(text, start))
    return text[_identifier_start(text, before) : before] in _NOT_CONSTRUCTED_AFTER


def _construction_after(text: str, pos: int, brackets: _Brackets) -> tuple[tuple[str, ...], int] | None:
    """(arguments, offset of the closing bracket) of the construction written after a
    class name that ends at `pos`, or None if none is."""
    template: list[str] = []
    pos = _skip_space(text, pos)
    if text.startswith("<", pos):
        after = _skip_group(text, pos)
        if after is None:
            return None
        template = [_collapse(part) for part in _split_top_level(text[pos + 1 : after - 1])]
        pos = _skip_space(text, after)
    opened = _construction_brackets(text, pos, brackets, templated=bool(template))
    if opened is None:
        bare = _BARE_DECLARATION.match(text, pos) if template else None
        return (tuple(template), bare.end() - 1) if bare else None
    group = brackets.group(opened)
    if group is None:
        return None
    args = tuple(template) + _arguments(text, opened, group)
    return (args, group[0]) if args else None


def _construction_brackets(text: str, pos: int, brackets: _Brackets, templated: bool) -> int | None:
    """Where the arguments of a construction open, `pos` being just past the class name
    (and its template arguments): at once for a temporary, `Name{...}` (and
    `Name<T>(...)`), else after the variable's name."""
    if text.startswith("{", pos) or (templated and text.startswith("(", pos)):
        return pos
    declarator = _DECLARATOR.match(text, pos)
    if declarator is None or declarator[1] in _NOT_FUNCTION_NAMES:
        return None
    opened = declarator.end()
    if not text.startswith(("(", "{"), opened):
        return None
    if text[opened] == "(" and _MACRO_NAME.fullmatch(declarator[1]):
        group = brackets.group(opened)
        following = _skip_space(text, group[0] + 1) if group else len(text)
        if text.startswith(("(", "{"), following):
            return following  # `Name MACRO(v)(args)`: the macro names the variable
    if text[opened] == "(":
        group = brackets.group(opened)
        if group is None or text.startswith("{", _skip_space(text, group[0] + 1)):
            return None  # `Name f(...) {`: a function returning a Name
    return opened


_BLOCK_CALL = re.compile(
    r'(?<![\w.])(?<!::)(?<!->)(?P<callee>[A-Za-z_]\w*(?:\s*(?:\.|->|::)[A-Za-z_]\w*)*)\s*\(\s*'
    r'(?:(?:[A-Za-z_]\w*\s*\(\s*)?"(?P<literal>[^"\\\n]*)")?'
)


def block_calls(facts: CppFacts, call: CppCall) -> list[CppBlockCall]:
    """The calls in the `{ ... }` block that directly follows `call` (as in
    `TORCH_LIBRARY_IMPL(aten, Key, m) { m.impl("op", f); }`), each with its first argument
    when that is a string literal, also one wrapped in a macro call (`NAME("op")`), else "".
    No block, no calls."""
    text = facts.stripped
    opened = _skip_space(text, call.end + 1) if call.end >= 0 else len(text)
    if opened >= len(text) or text[opened] != "{":
        return []
    group = _Brackets(text).group(opened)
    close = group[0] if group else len(text)
    lines = _Lines(text)
    return [
        CppBlockCall(lines.of(opened + 1 + match.start()), "".join(match["callee"].split()), match["literal"] or "")
        for match in _BLOCK_CALL.finditer(text[opened + 1 : close])
    ]


def _occurrences(text: str, name: str) -> Iterator[tuple[int, int]]:
    """(start of name, offset of `(`) of each `name (` that is a whole identifier."""
    for match in _call_pattern(name).finditer(text):
        start = match.start()
        if start == 0 or not _is_identifier_char(text[start - 1]):
            yield start, match.end() - 1


# --- Macros -----------------------------------------------------------------


def resolve_alias(value: str, aliases: Mapping[str, str], max_depth: int = 8) -> str:
    """Follow object-like `#define` aliases: with {"DEV": "Slot1"}, "DEV" and
    "ns::Kind::DEV" resolve to "Slot1" and "ns::Kind::Slot1".
    The last `::` component is replaced at each step. As in the preprocessor, a name
    already being expanded is left as it is, which ends cycles; at most `max_depth`
    steps are taken."""
    scope, separator, name = value.rpartition("::")
    expanding = {name}
    for _ in range(max_depth):
        replacement = aliases.get(name)
        if replacement is None:
            break
        scope, separator, name = _join_scope(scope, separator, replacement)
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


def expand_macro(define: CppDefine, args: Sequence[str]) -> str:
    """The body of a function-like macro with its parameters replaced by `args`:
    plain parameters, `#param` stringification (quotes and backslashes escaped)
    and `a ## b` token pasting, with
    `...` bound to `__VA_ARGS__` (GNU `name...` binds `name`). A `, ## __VA_ARGS__`
    with no variadic arguments drops the comma. Arguments are not macro-expanded.
    An object-like define's body is returned unchanged."""
    if define.params is None:
        return define.body
    bindings = _bind_arguments(define.params, args)
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
            token = bindings[token]
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
