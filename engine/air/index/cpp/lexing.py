"""The lexical layer under the C/C++ readers: the comments and literals of a text, found in one
linear scan, and the small scanners the other modules build on, which step over blanks,
identifiers, `::` qualifications and bracket groups and give the line of an offset."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator

# The keywords written before a parenthesis as a call is (`if (x)`, `return (y);`, `sizeof(T)`,
# `static_cast<T>(v)`): no function is named after one.
KEYWORDS_BEFORE_PARENTHESES = frozenset(
    "if for while switch catch return sizeof alignof decltype noexcept throw requires static_assert typeid"
    " static_cast dynamic_cast const_cast reinterpret_cast".split()
)

# Comments and the literals that start with their quote, unterminated strings and chars ending
# at the line end. Each alternative starts with its character, outside its group, so that the
# regex engine skips ahead to those characters.
_COMMENT_PATTERNS = r"""
    /(?: (?P<line_comment>/[^\\\n]*(?:\\(?:\r\n|.)[^\\\n]*)*) | (?P<block_comment>\*) )
"""
_QUOTED_LITERAL_PATTERNS = r"""
    "(?P<string>[^"\\\n]*(?:\\(?:\r\n|.)[^"\\\n]*)*"?)
  | '(?P<char>[^'\\\n]*(?:\\(?:\r\n|.)[^'\\\n]*)*'?)
"""
# The literals whose quote follows their start: a raw string's `"` its prefix, a number's first
# `'` its digits. A number with digit separators (1'000'000) is matched whole so that its quotes
# do not open a char literal.
_PREFIXED_LITERAL_PATTERNS = r"""
    (?P<raw_string>(?<!\w)(?:u8|[uUL])?R"(?P<delimiter>[^()\\\s"]{0,16})\()
  | (?P<number>(?<![\w.])\d[\w.]*(?:'[\w.]+)+)
"""
LITERAL_PATTERNS = _PREFIXED_LITERAL_PATTERNS + "|" + _QUOTED_LITERAL_PATTERNS

_COMMENT_OR_QUOTED_LITERAL = re.compile(_COMMENT_PATTERNS + "|" + _QUOTED_LITERAL_PATTERNS, re.S | re.X)
_PREFIXED_LITERAL = re.compile(_PREFIXED_LITERAL_PATTERNS, re.S | re.X)
_MAX_RAW_STRING_PREFIX = len("u8R")
# The leading lookahead names every character a token can start with, which lets
# the regex engine skip ahead quickly instead of trying each alternative everywhere.
_BRACKET_TOKEN = r"(?P<bracket>[()\[\]{},])"
_ARGUMENT_TOKEN = re.compile(
    r"(?=[\"'\dRuUL()\[\]{},])(?:" + LITERAL_PATTERNS + "|" + _BRACKET_TOKEN + ")", re.S | re.X
)
# Every literal holds a quote, so in a text without one only brackets are to be found.
_UNQUOTED_ARGUMENT_TOKEN = re.compile(_BRACKET_TOKEN)
COMMENT_KINDS = frozenset({"line_comment", "block_comment"})

_NEWLINE = re.compile(r"\n")
CONTINUATION = re.compile(r"\\[ \t]*\r?\n")


def lexemes(text: str) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) of every comment and literal of `text`, in order. The regex engine
    searches for the comments and quoted literals, which start with a character of their
    own; a raw string or a number is looked for only before the quote it holds."""
    pos = 0
    while token := _COMMENT_OR_QUOTED_LITERAL.search(text, pos):
        token = _prefixed_literal(text, token.start(), pos) or token
        pos = _lexeme_end(text, token)
        yield token.lastgroup or "", token.start(), pos


def _prefixed_literal(text: str, quote: int, pos: int) -> re.Match[str] | None:
    """The raw string or number that holds the quote at `quote` and starts between `pos`
    and it, if one does."""
    if text[quote] == "'":
        digits = quote  # where the digits, letters and dots before the quote begin
        while digits > pos and (text[digits - 1] == "." or is_identifier_char(text[digits - 1])):
            digits -= 1
        return _PREFIXED_LITERAL.match(text, digits)
    if text[quote] == '"' and text[quote - 1 : quote] == "R":
        for start in range(max(pos, quote - _MAX_RAW_STRING_PREFIX), quote):
            if match := _PREFIXED_LITERAL.match(text, start):
                return match
    return None


def tokens(text: str, pattern: re.Pattern[str], pos: int = 0) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) of every token `pattern` finds from `pos` on."""
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


def collapse(text: str) -> str:
    """Join continuation lines and collapse runs of whitespace to one space."""
    return " ".join(CONTINUATION.sub(" ", text).split())


class Lines:
    """1-based line numbers of offsets."""

    def __init__(self, text: str) -> None:
        self._breaks = [match.start() for match in _NEWLINE.finditer(text)]

    def of(self, offset: int) -> int:
        return bisect_left(self._breaks, offset) + 1


_BRACKET_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_BRACKETS_OF = {opener: re.compile(f"[{re.escape(opener + closer)}]") for opener, closer in _BRACKET_PAIRS.items()}


def skip_group(text: str, pos: int) -> int | None:
    """Offset just past the bracket closing the one at `pos`, or None if it is never
    closed. Only brackets of the same kind are counted."""
    opener = text[pos]
    depth = 0
    for bracket in _BRACKETS_OF[opener].finditer(text, pos):
        depth += 1 if bracket.group() == opener else -1
        if depth == 0:
            return bracket.end()
    return None


def is_identifier_char(char: str) -> bool:
    return char == "_" or char.isalnum()


def identifier_start(text: str, end: int, begin: int = 0) -> int:
    """Start of the identifier that ends at `end` (== `end` if there is none)."""
    start = end
    while start > begin and ((char := text[start - 1]) == "_" or char.isalnum()):
        start -= 1
    return start


def skip_space_back(text: str, end: int, begin: int = 0) -> int:
    """Offset just past the last non-blank character before `end`; a backslash
    counts as blank, being a line continuation where it can stand."""
    while end > begin and ((char := text[end - 1]).isspace() or char == "\\"):
        end -= 1
    return end


def skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def qualifier_start(text: str, start: int) -> int:
    """Start of the `a::b::` qualification written before the name at `start`."""
    begin = start
    while True:
        colons = skip_space_back(text, begin)
        if colons < 2 or text[colons - 2 : colons] != "::":
            return begin
        scope_end = skip_space_back(text, colons - 2)
        scope_start = identifier_start(text, scope_end)
        if scope_start == scope_end:
            # `::f` names the global scope; `Tpl<T>::f` keeps only `f`.
            return begin if text[scope_end - 1 : scope_end] == ">" else colons - 2
        begin = scope_start


class Brackets:
    """Matches the brackets of a text, leaving out those inside literals. It scans
    lazily from the brackets asked about and remembers every pair it meets, so the
    text is read once however many groups are nested or left open. A closing
    bracket closes the innermost open one, whatever their kinds."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._tokens = _ARGUMENT_TOKEN if '"' in text or "'" in text else _UNQUOTED_ARGUMENT_TOKEN
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
        for kind, start, _ in tokens(self._text, self._tokens, opened + 1):
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


_OPENING_BRACE = re.compile(r"\{")
_CLOSING_BRACE = re.compile(r"\}")


class Braces:
    """The matching `}` of every `{` of a text; an unclosed `{` closes at the end."""

    def __init__(self, code: str) -> None:
        self.closing: dict[int, int] = {}
        # Each kind is searched for apart, which the regex engine does far quicker than both at once.
        self._opens = [brace.start() for brace in _OPENING_BRACE.finditer(code)]
        closes = [brace.start() for brace in _CLOSING_BRACE.finditer(code)]
        stack: list[int] = []
        for brace in sorted(self._opens + closes):
            if code[brace] == "{":
                stack.append(brace)
            elif stack:
                self.closing[stack.pop()] = brace
        self.closing.update((opened, len(code)) for opened in stack)

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


_BRACKET_OR_COMMA = re.compile(r"[<>()\[\]{},]")


def split_top_level(text: str) -> list[str]:
    """`A, B<int, X>` -> ["A", " B<int, X>"]: `text` cut at the commas outside brackets."""
    parts = []
    depth = 0
    last = 0
    for bracket in _BRACKET_OR_COMMA.finditer(text):
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


def occurrences(text: str, name: str) -> Iterator[tuple[int, int]]:
    """(start of name, offset of `(`) of each `name (` that is a whole identifier, spaces and
    line continuations allowed before the `(`. Found with `str.find`: a tree may ask for tens of
    thousands of names, and a pattern compiled for each costs more than the search."""
    start = text.find(name)
    while start >= 0:
        paren = _opening_parenthesis(text, start + len(name))
        if paren is None:
            start = text.find(name, start + 1)
            continue
        if start == 0 or not is_identifier_char(text[start - 1]):
            yield start, paren
        start = text.find(name, paren + 1)


def _opening_parenthesis(text: str, position: int) -> int | None:
    """The offset of the `(` that `text` holds from `position` on after spaces and line
    continuations (a backslash ending its line) alone; None when something else comes first."""
    while position < len(text):
        character = text[position]
        if character == "(":
            return position
        if not (character.isspace() or character == "\\" and text.startswith(("\n", "\r\n"), position + 1)):
            return None
        position += 1
    return None


_QUALIFIED_NAME = re.compile(r"(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*")


def is_name(text: str) -> bool:
    """Whether `text` is one identifier, possibly `::`-qualified."""
    return _QUALIFIED_NAME.fullmatch(text) is not None


NOT_FUNCTION_NAMES = frozenset(
    """
    alignas alignof auto bool char const decltype delete double explicit float if int long
    new noexcept operator requires return short signed sizeof static_assert switch throw
    typeid unsigned void volatile while __attribute__ __declspec _Pragma __pragma
    """.split()
)


def matching_opener(code: str, last: int, pair: str, limit: int, stops: str = "") -> int | None:
    """Offset of the opening bracket of `pair` ("()", "<>") that balances the closing ones from
    `last` back, looking at most `limit` characters back; None at one of `stops` or past the limit."""
    opener, closer = pair[0], pair[1]
    depth = 0
    for pos in range(last, max(last - limit + 1, 0) - 1, -1):
        char = code[pos]
        if char == closer:
            depth += 1
        elif char == opener:
            depth -= 1
            if depth == 0:
                return pos
        elif char in stops:
            return None
    return None
