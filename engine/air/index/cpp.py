"""Facts from C and C++ sources, read as text without a compiler.

Comments are blanked first, keeping every offset and line break, so a position in
the blanked text is the same position in the file; so are the branches that a constant
`#if 0`, `#if false` or `#if 1 ... #else` leaves out, with the directives that choose
them. Preprocessor directives, class
definitions, out-of-class member definitions and calls are then picked out by
linear-time scans. Malformed input never raises: what cannot be read is skipped.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from functools import cache, cached_property, lru_cache
from itertools import islice, pairwise

from air.index.blanking import blank_spans
from air.index.model import (
    CppBlockCall,
    CppCall,
    CppClass,
    CppConstant,
    CppDefine,
    CppFacts,
    CppInclude,
    CppMethod,
    CppMethodDef,
    Span,
)

CPP_LANGUAGES = ("cpp", "template")  # the index languages read as C/C++

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
    line breaks by a space, and the code of dead preprocessor branches (see
    `dead_branches`). String and char literals (raw strings included) and line
    continuations are kept, so the result has the length and line breaks of `text`."""
    comments = ((start, end) for kind, start, end in _lexemes(text) if kind in _COMMENT_KINDS)
    stripped = blank_spans(text, comments)
    return blank_spans(stripped, dead_branches(stripped))


# --- Dead preprocessor branches -----------------------------------------------

_CONDITIONAL = re.compile(
    r"^[ \t\f\v]*\#[ \t\f\v]*(?P<keyword>if|ifdef|ifndef|elif|else|endif)\b(?P<rest>[^\n]*)", re.M
)
_CONSTANT_HINT = re.compile(r"^[ \t\f\v]*\#[ \t\f\v]*(?:el)?if[\s(!]*(?:\d|true\b|false\b)", re.M)
_NEGATIONS = re.compile(r"[!\s]*")
_CONSTANT = re.compile(r"(?P<number>\d+)[uUlL]*|(?P<word>true|false)")
_AROUND_CONSTANT = "() \t\f\v"


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


def dead_branches(text: str) -> list[tuple[int, int]]:
    """Spans of comment-free C/C++ `text` that the preprocessor leaves out whatever is
    defined: the branches of `#if`/`#elif` conditions that are constant and false, and
    those after a constant true one, each with its directive lines, so that what remains
    reads as the branch the preprocessor keeps. Constructs whose conditions are not all
    constant are kept whole; nesting is followed."""
    if not _CONSTANT_HINT.search(text):
        return []
    spans: list[tuple[int, int]] = []
    stack: list[_Conditional] = []
    for directive in _CONDITIONAL.finditer(text):
        keyword, start, end = directive["keyword"], directive.start(), directive.end()
        if keyword in ("if", "ifdef", "ifndef"):
            inside_dead = bool(stack) and (stack[-1].inside_dead or stack[-1].dead_from is not None)
            frame = _Conditional(_constant(directive["rest"]) if keyword == "if" else None, inside_dead)
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
            value = True if keyword == "else" else _constant(directive["rest"])
            if value is None:  # `#if 0 ... #elif COND`: from here on, what COND decides
                spans.append((frame.dead_from, start))
                frame.dead_from, frame.resolved = None, False
            elif value:
                spans.append((frame.dead_from, end))
                frame.dead_from, frame.taken = None, True
    spans.extend((frame.dead_from, len(text)) for frame in stack if frame.resolved and frame.dead_from is not None)
    return sorted(spans)


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
        return self.within(opened + 1, self.closing[opened])

    def within(self, start: int, end: int) -> Iterator[tuple[int, int]]:
        """(open, close) of the outermost brace groups opened between `start` and `end`."""
        index = bisect_left(self._opens, start)
        while index < len(self._opens) and self._opens[index] < end:
            inner = self._opens[index]
            yield inner, self.closing[inner]
            index = bisect_right(self._opens, self.closing[inner], index)


def _read_classes(
    code: str, lines: _Lines, macros: Collection[str], braces: Callable[[], _Braces]
) -> Iterator[CppClass]:
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
        closed = _skip_group(head, pos)
        if closed is None:
            return None
        pos = closed
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
    labels = _ACCESS_LABELS.match(declaration)
    assert labels is not None  # the pattern matches the empty string
    begin = labels.end()
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
            yield CppMethodDef(
                lines.of(start), cls, name, None if opened is None else (opened, braces().closing[opened])
            )


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
    dead = dead_branches(stripped)
    stripped = blank_spans(stripped, dead)
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
    code = blank_spans(text, sorted([(start, end) for _, start, end in lexemes] + directive_spans + dead))
    object_like = {define.name for define in defines if define.params is None}
    braces = cache(lambda: _Braces(code))  # matched once, when a class or a body needs them
    return CppFacts(
        stripped=stripped,
        defines=tuple(defines),
        includes=tuple(includes),
        classes=tuple(_read_classes(code, lines, object_like, braces)),
        method_defs=tuple(_read_method_defs(code, lines, braces)),
    )


# --- Function bodies ----------------------------------------------------------

_NOT_A_FUNCTION_HEAD = frozenset(
    "if for while switch catch return sizeof alignof decltype noexcept throw requires static_assert".split()
)
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
                text[before - 1] in "*&>" or _is_identifier_char(text[before - 1])
                for match in _parameter_pattern(name).finditer(text)
                if (before := _skip_space_back(text, match.start())) > 0
            )
        return self._parameter_like[name]

    @cached_property
    def _code(self) -> str:
        literals = [(start, end) for _kind, start, end in _lexemes(self._stripped)]
        directives = [directive.span() for directive in _DIRECTIVE.finditer(self._stripped)]
        return blank_spans(self._stripped, sorted(literals + directives))

    @cached_property
    def _braces(self) -> _Braces:
        return _Braces(self._code)

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
    def _brackets(self) -> _Brackets:
        return _Brackets(self._code)

    @cached_property
    def _lines(self) -> _Lines:
        return _Lines(self._stripped)

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
        for _start, paren in _occurrences(self._code, name):
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
            paren = _opening_paren(code, close)
            if paren is None:
                return None
            name_end = _skip_space_back(code, paren)
            name_start = _identifier_start(code, name_end)
            name = code[name_start:name_end]
            if name not in _HEAD_QUALIFIERS:
                break
            end = name_start
        else:
            return None
        if not name or name[0].isdigit() or name in _NOT_A_FUNCTION_HEAD or code[name_end - 1 : name_end] == "]":
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


def _opening_paren(code: str, close: int) -> int | None:
    """Offset of the `(` that the `)` at `close` closes, searching back at most _MAX_FUNCTION_HEAD."""
    depth = 0
    for pos in range(close, max(close - _MAX_FUNCTION_HEAD, -1), -1):
        char = code[pos]
        if char == ")":
            depth += 1
        elif char == "(":
            depth -= 1
            if depth == 0:
                return pos
    return None


def _parameter_name(parameter: str) -> str:
    """`const T& name = x` -> "name"; "" for an unnamed parameter (`T`, `ns::T`, `int`)."""
    declarator = parameter.split("=", 1)[0].rstrip()
    while declarator.endswith("]") and "[" in declarator:  # an array parameter
        declarator = declarator[: declarator.rfind("[")].rstrip()
    if declarator.endswith("..."):
        return "..."
    start = _identifier_start(declarator, len(declarator))
    name = declarator[start:]
    before = declarator[:start].rstrip()
    if not name or name[0].isdigit() or not before or before.endswith("::") or name in _TYPE_KEYWORDS:
        return ""
    return name


# --- Constants --------------------------------------------------------------

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
        code = code or _without_directives(text)
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


def _without_directives(stripped: str) -> str:
    return blank_spans(stripped, (directive.span() for directive in _DIRECTIVE.finditer(stripped)))


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
        close = _skip_group(code, match.start("open"))
        if close is None or close - match.end() > _MAX_INITIALISER:
            value = ""
        else:
            value = code[match.end() : close - 1].strip()
    value = _collapse(value)
    return value if is_name(value) or _MACRO_INVOCATION.fullmatch(value) else None


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

    def read(text: str, _start: int, paren: int, brackets: _Brackets) -> tuple[tuple[str, ...], int] | None:
        group = brackets.group(paren)
        return (_arguments(text, paren, group), group[0]) if group is not None else None

    return _invocations(facts, names, _occurrences, read)


def _invocations(
    facts: CppFacts,
    names: Collection[str],
    sites: Callable[[str, str], Iterable[tuple[int, int]]],
    read: Callable[[str, int, int, _Brackets], tuple[tuple[str, ...], int] | None],
) -> list[CppCall]:
    """The calls of `names` that `sites(text, name)` finds, as (start of the name, where its
    arguments are read from), in order of position: those outside literals and not the
    name of a `#define`, whose arguments `read` gives as (arguments, closing offset)."""
    text = facts.stripped
    occurrences = sorted(
        (start, after, name) for name in set(names) if name and name in text for start, after in sites(text, name)
    )
    if not occurrences:
        return []
    literals = _LiteralSpans(text)
    defines = _DefineSpans(text)
    brackets = _Brackets(text)
    lines = _Lines(text)
    found = []
    for start, after, name in occurrences:
        if literals.holds(start) or defines.is_macro_name(start):
            continue
        invocation = read(text, start, after, brackets)
        if invocation is not None:
            args, close = invocation
            found.append(
                CppCall(lines.of(start), _written_name(text, start, name), args, defines.macro_at(start), close, start)
            )
    return found


_NOT_A_TYPE = frozenset("return else do case throw new delete goto co_return co_yield co_await".split())


def is_declared_at(text: str, start: int) -> bool:
    """Whether the name at `start` is declared or defined there, a type written before it
    (`void f(`, `T* f(`, `ns::T f(`), rather than called."""
    before = _skip_space_back(text, _qualifier_start(text, start))
    if before and text[before - 1] in "*&>":
        return True
    word = text[_identifier_start(text, before) : before]
    return bool(word) and word not in _NOT_A_TYPE


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

    def sites(text: str, name: str) -> Iterator[tuple[int, int]]:
        for match in _construction_pattern(name).finditer(text):
            start = match.start()
            if start == 0 or not (_is_identifier_char(text[start - 1]) or text[start - 1] == "~"):
                yield start, match.end()

    def read(text: str, start: int, end: int, brackets: _Brackets) -> tuple[tuple[str, ...], int] | None:
        return None if _follows_keyword(text, start) else _construction_after(text, end, brackets)

    return _invocations(facts, names, sites, read)


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
    r"(?<![\w.])(?<!::)(?<!->)(?P<callee>[A-Za-z_]\w*(?:\s*(?:\.|->|::)[A-Za-z_]\w*)*)\s*(?P<paren>\()\s*"
    r'(?:(?:[A-Za-z_]\w*\s*\(\s*)?"(?P<literal>[^"\\\n]*)")?'
)


def block_span(facts: CppFacts, call: CppCall) -> tuple[int, int] | None:
    """(start, end) of the inside of the `{ ... }` block that directly follows `call` (as in
    `TORCH_LIBRARY_IMPL(aten, Key, m) { m.impl("op", f); }`), None if no block follows; an
    unclosed block runs to the end of the text."""
    text = facts.stripped
    opened = _skip_space(text, call.end + 1) if call.end >= 0 else len(text)
    if opened >= len(text) or text[opened] != "{":
        return None
    group = _Brackets(text).group(opened)
    return opened + 1, group[0] if group else len(text)


def calls_between(facts: CppFacts, start: int = 0, end: int | None = None) -> list[CppBlockCall]:
    """The calls of `facts.stripped` from `start` to `end` (the whole text by default), nested
    ones too, in order, leaving out what preprocessor directives write: each with its first
    argument when that is a string literal, also one wrapped in a macro call (`NAME("op")`),
    else "", and its arguments as `find_calls` splits them."""
    text = _without_directives(facts.stripped)
    lines = _Lines(text)
    brackets = _Brackets(text)
    found = []
    for match in _BLOCK_CALL.finditer(text, start, len(text) if end is None else end):
        paren = match.start("paren")
        group = brackets.group(paren)
        close = group[0] if group else -1
        args = _arguments(text, paren, group) if group else ()
        callee = "".join(match["callee"].split())
        found.append(CppBlockCall(lines.of(match.start()), callee, match["literal"] or "", args, match.start(), close))
    return found


def includes_between(facts: CppFacts, start: int, end: int) -> list[CppInclude]:
    """The `#include`s of `facts` written from `start` to `end`."""
    lines = _Lines(facts.stripped)
    first, last = lines.of(start), lines.of(end)
    return [include for include in facts.includes if first <= include.line <= last]


def _occurrences(text: str, name: str) -> Iterator[tuple[int, int]]:
    """(start of name, offset of `(`) of each `name (` that is a whole identifier."""
    for match in _call_pattern(name).finditer(text):
        start = match.start()
        if start == 0 or not _is_identifier_char(text[start - 1]):
            yield start, match.end() - 1


# --- Macros -----------------------------------------------------------------


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


def is_name(text: str) -> bool:
    """Whether `text` is one identifier, possibly `::`-qualified."""
    return _QUALIFIED_NAME.fullmatch(text) is not None


def _join_scope(scope: str, separator: str, replacement: str) -> tuple[str, str, str]:
    """(scope, "::" or "", last component) of `scope::replacement`, where the
    replacement may itself be qualified."""
    inner_scope, inner_separator, name = replacement.rpartition("::")
    if not inner_separator:
        return scope, separator, name
    return scope + separator + inner_scope, inner_separator, name


_QUALIFIED_NAME = re.compile(r"(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*")
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


MAX_EXPANSIONS = 64
MAX_EXPANDED_LENGTH = 4096
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
