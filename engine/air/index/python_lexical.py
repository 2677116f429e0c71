"""Python calls, definitions and assignments found without parsing: for test suites, which are many and large.

A backend's tests often hold thousands of files copied from upstream, and they only ever
give evidence of trust "tests". Parsing them all would cost more than the rest of a check,
so calls in tests are found lexically: the file's imports are read line by line, every
occurrence of the callee's last name in code (strings and comments blanked) is traced back
to its dotted name, resolved through those imports, and its arguments split at top-level
commas. The records are the same `PyCall`s the parser gives, for the common forms: `f(...)`,
`mod.f(...)`, `@f(...)` and bare `@f`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import accumulate

from air.index.blanking import blank_spans
from air.index.model import PyAssign, PyCall, PyDef, PyImport
from air.index.python import absolute_module, binding, function_end, function_spans, literal_spans
from air.regex import compile_guarded

MAX_RENDERED = 200
# A line ending in `\` goes on on the next one.
_IMPORT = compile_guarded(r"^(?<!\\\n)[ \t]*import(?:[ \t]|\\\n)+((?:[^\n;\\]|\\\n)+)", native=False)
# A parenthesized list ends at its `)`, and never reaches a line that starts another statement of its kind.
_FROM_IMPORT = compile_guarded(
    r"^(?<!\\\n)[ \t]*from(?:[ \t]|\\\n)+([\w.]+)(?:[ \t]|\\\n)+import(?:[ \t]|\\\n)+"
    r"(\((?:[^)\n]|\n(?![ \t]*(?:from|import)[ \t]))*\)|(?:[^\n;\\]|\\\n)+)",
    native=False,
)
_NON_SPACE = re.compile(r"\S")
_STRING_LITERAL = re.compile(r"""^[rRuUfF]{0,2}(['"])(.*)\1$""", re.DOTALL)
_KEYWORD_ARGUMENT = re.compile(r"([A-Za-z_]\w*)\s*=(?!=)")
_ARGUMENT_MARKS = re.compile(r"[()\[\]{},]")  # what splits a call's arguments, or nests them
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*$")
_CALL_HEAD = re.compile(r"^([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*\(")
_ANY_CALLEE = re.compile(r"(?<!\w)([A-Za-z_]\w*)[ \t]*\(")  # from a name's start only: linear on long names
# `name = a.b` or `name = (a.b)` at the top level: the parser binds `name` as an alias of `a.b`
_NAME_ALIAS = re.compile(
    r"(?m)^([A-Za-z_]\w*)[ \t]*=[ \t]*(?:\(\s*([A-Za-z_][\w.]*)\s*\)|([A-Za-z_][\w.]*))[ \t]*(?=;|$)"
)
_MODULE_ASSIGN = re.compile(r"(?m)^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)[ \t]*=(?!=)[ \t]*([^\n]*)")
_DEFINITION = compile_guarded(
    r"^(?P<indent>[ \t]*)(?:async[ \t]+)?(?P<kind>def|class)[ \t]+(?P<name>[A-Za-z_]\w*)[ \t]*"
    r"(?:\((?P<bases>(?:[^)\n]|\n(?![ \t]*(?:async[ \t]+)?(?:def|class)[ \t]))*)\))?",
    native=False,
)


def _opened(code: str, start: int, end: int) -> int:
    """How many more brackets open than close in `code[start:end]`."""
    opened = code.count("(", start, end) + code.count("[", start, end) + code.count("{", start, end)
    return opened - code.count(")", start, end) - code.count("]", start, end) - code.count("}", start, end)


@dataclass
class LexicalPython:
    """A Python file read lexically: its code without literals, and its import aliases."""

    text: str
    module: str | None
    is_package: bool
    _calls: dict[str, list[PyCall]] = field(default_factory=dict, init=False, repr=False, compare=False)

    @cached_property
    def _literals(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        return literal_spans(self.text)

    @cached_property
    def _uncommented(self) -> str:
        """The text with comments blanked, which both views blank further."""
        return blank_spans(self.text, self._literals[1])

    @cached_property
    def code(self) -> str:
        """The text with strings and comments blanked."""
        return blank_spans(self._uncommented, self._literals[0])

    @cached_property
    def without_comments(self) -> str:
        """The text with comments blanked, and the strings that stand as statements of their own
        (docstrings, code disabled inside a string); other strings kept."""
        return blank_spans(self._uncommented, self._statement_strings(self._literals[0]))

    def _statement_strings(self, strings: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
        """Those of `strings` (in order) that are expression statements: each starts its line,
        outside any bracket and not continuing the line before, and nothing but a comment
        follows it on its last line. Brackets are counted in the code view, from one string to
        the next."""
        text, code = self.text, self.code
        depth = counted = line_start = scanned = 0
        for start, end in strings:
            if start and not text[start - 1].isspace():
                continue  # most strings: something stands before them on their line
            newline = text.rfind("\n", scanned, start)  # from the last string on: linear on one long line
            line_start, scanned = (newline + 1 if newline >= 0 else line_start), start
            if _NON_SPACE.search(text, line_start, start):
                continue
            depth = max(depth + _opened(code, counted, start), 0)
            counted = start
            if depth or self._continues_before(line_start):
                continue
            line_end = text.find("\n", end)
            if not code[end : len(text) if line_end < 0 else line_end].strip(" \t;\r"):
                yield start, end

    def _continues_before(self, line_start: int) -> bool:
        """Whether the line before `line_start` ends with a `\\` that continues it (one written
        in code, not in a comment)."""
        last = line_start - 1
        while last >= 0 and self.text[last] in " \t\r\n":
            last -= 1
        return last >= 0 and self.code[last] == "\\"

    def take_views(self, without_comments: str, code: str) -> None:
        """Take `without_comments` and `code` as read elsewhere (by a worker process)."""
        self.__dict__.update(without_comments=without_comments, code=code)

    @cached_property
    def _function_spans(self) -> tuple[tuple[int, int], ...]:
        return function_spans(self.code)

    def function_end(self, line: int) -> int | None:
        """The last line of the outermost function holding `line` (see `air.index.python.function_end`)."""
        return function_end(self._function_spans, line)

    @cached_property
    def _line_starts(self) -> list[int]:
        return [0, *accumulate([len(line) + 1 for line in self.code.split("\n")])][:-1]

    def line_of(self, offset: int) -> int:
        return bisect_right(self._line_starts, offset)

    @cached_property
    def imports(self) -> tuple[PyImport, ...]:
        """`import` and `from ... import` statements that start a line, relative ones resolved."""
        found = []
        for match in _IMPORT.finditer(self.code):
            line = self.line_of(match.start())
            for part in match.group(1).replace("\\\n", " ").split(","):
                name, _, alias = (piece.strip() for piece in part.partition(" as "))
                if _DOTTED.match(name):
                    found.append(PyImport(line, name, None, alias or name.partition(".")[0]))
        for match in _FROM_IMPORT.finditer(self.code):
            line = self.line_of(match.start())
            dots = len(match.group(1)) - len(match.group(1).lstrip("."))
            source = absolute_module(match.group(1).lstrip(".") or None, dots, self.module, self.is_package)
            for part in match.group(2).strip("()").replace("\\\n", " ").split(","):
                name, _, alias = (piece.strip() for piece in part.partition(" as "))
                if name == "*" or _DOTTED.match(name):
                    found.append(PyImport(line, source, name, alias or name))
        return tuple(sorted(found, key=lambda item: item.line))

    @cached_property
    def aliases(self) -> dict[str, str]:
        """What a name stands for, as the parser binds it: by an import, or by an unindented
        `name = a.b` whose root is bound already; the first binding of a name wins."""
        aliases: dict[str, str] = {}
        for item in self.imports:
            if item.name != "*":
                aliases.setdefault(item.alias, binding(item))
        for match in _NAME_ALIAS.finditer(self.code):
            root, dot, rest = (match[2] or match[3]).partition(".")
            if root in aliases:
                aliases.setdefault(match[1], aliases[root] + dot + rest)
        return aliases

    @cached_property
    def defs(self) -> tuple[PyDef, ...]:
        """Function and class definitions, named as the parser names them (`Outer.method`):
        a definition is nested in the one above it until a line of code is indented no
        deeper than that one's head (a continuation line written further left ends the
        body early). Classes come with their bases resolved."""
        found = []
        scopes: list[list] = []  # [indentation, qualified name, offset read up to] of the enclosing ones
        for match in _DEFINITION.finditer(self.code):
            indentation = len(match["indent"])
            while scopes:
                indented, _name, read_to = scopes[-1]
                if indented < indentation and not _left(indented, self.code, read_to, match.start()):
                    break
                scopes.pop()
            for scope in scopes:
                scope[2] = match.start()  # each body goes on at least to here
            name = f"{scopes[-1][1]}.{match['name']}" if scopes else match["name"]
            scopes.append([indentation, name, match.end()])
            line = self.line_of(match.start())
            if match["kind"] == "def":
                found.append(PyDef(line, "function", name))
                continue
            bases = [part.strip() for part in (match["bases"] or "").split(",")]
            resolved = tuple(self._resolve("".join(b.split())) for b in bases if _DOTTED.match(b))
            found.append(PyDef(line, "class", name, resolved))
        return tuple(found)

    @cached_property
    def assigns(self) -> tuple[PyAssign, ...]:
        """Module-level assignments to attributes (`torch.x = y`, unindented), resolved, and
        `setattr(mod, "x", y)` / `mod.__setattr__("x", y)` calls anywhere."""
        found = [
            PyAssign(self.line_of(match.start()), self._resolve(match.group(1)), self._render(match.group(2).strip()))
            for match in _MODULE_ASSIGN.finditer(self.code)
        ]
        for call in [*self.calls_of("setattr"), *self.calls_of("__setattr__")]:
            owner, rest = (
                (call.qualname.rpartition(".")[0], call.args)
                if call.qualname.endswith("__setattr__")
                else ((call.args[0], call.args[1:]) if call.args else ("", ()))
            )
            if owner and rest:
                found.append(PyAssign(call.line, f"{owner}.{rest[0]}", rest[1] if len(rest) > 1 else ""))
        return tuple(sorted(found, key=lambda assign: assign.line))

    def calls_of(self, word: str) -> list[PyCall]:
        """Calls whose callee's last name is `word`, also through an import alias
        (`import x.word as w; w()`), or of any callee when `word` is empty, in source order.
        Found once for each word: clauses ask the same file for the same callee."""
        found = self._calls.get(word)
        if found is None:
            found = self._calls[word] = self._calls_of(word)
        return found

    def _calls_of(self, word: str) -> list[PyCall]:
        code = self.code
        if not word:
            found = (self._call_at(match.start(1), match.end(1)) for match in _ANY_CALLEE.finditer(code))
            return [call for call in found if call is not None]
        spellings = {word} | {alias for alias, bound in self.aliases.items() if bound.rpartition(".")[2] == word}
        calls = []
        for spelling in spellings:
            start = code.find(spelling)
            while start >= 0:
                end = start + len(spelling)
                call = self._call_at(start, end)
                if call is not None:
                    calls.append(call)
                start = code.find(spelling, end)
        return sorted(calls, key=lambda call: call.line)

    def _call_at(self, start: int, end: int) -> PyCall | None:
        code = self.code
        if end < len(code) and (code[end].isalnum() or code[end] == "_"):
            return None
        begin = start
        while begin > 0 and ((char := code[begin - 1]).isalnum() or char in "_."):  # re's [\w.]
            begin -= 1
        dotted = code[begin:end]
        if not dotted or not (dotted[0].isalpha() or dotted[0] == "_") or ".." in dotted:
            return None
        if begin > 0 and code[begin - 1] in ")]}\"'":
            return None  # a method of an expression: the parser does not resolve those either
        line = self.line_of(start)
        after = end
        while after < len(code) and code[after] in " \t":
            after += 1
        qualname = self._resolve(dotted)
        if after < len(code) and code[after] == "(":
            args, kwargs = self._arguments(after)
            return PyCall(line, qualname, args, kwargs)
        line_start = code.rfind("\n", 0, begin) + 1
        if code[line_start:begin].strip() == "@":
            return PyCall(line, qualname, (), ())
        return None

    def _resolve(self, dotted: str) -> str:
        root, dot, rest = dotted.partition(".")
        return self.aliases.get(root, root) + dot + rest

    def _arguments(self, opened: int) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
        pieces, _end = argument_spans(self.code, opened)
        args: list[str] = []
        kwargs: list[tuple[str, str]] = []
        for left, right in pieces:
            raw = self.text[left:right].strip()
            keyword = _KEYWORD_ARGUMENT.match(raw)
            if keyword:
                kwargs.append((keyword.group(1), self._render(raw[keyword.end() :].strip())))
            elif raw and not raw.startswith("*"):
                args.append(self._render(raw))
        return tuple(args), tuple(kwargs)

    def _render(self, raw: str) -> str:
        """As the parser renders values: a string's content, a resolved dotted name, a call as
        `callee(...)`, else the source collapsed to one line."""
        string = _STRING_LITERAL.match(raw)
        if string and string.group(1) not in string.group(2):
            return string.group(2)
        if _DOTTED.match(raw):
            return self._resolve("".join(raw.split()))
        head = _CALL_HEAD.match(raw)
        if head and raw.endswith(")"):
            return f"{self._resolve(''.join(head.group(1).split()))}(...)"
        flat = " ".join(raw.split())
        return flat if len(flat) <= MAX_RENDERED else flat[: MAX_RENDERED - 3] + "..."


def argument_spans(code: str, opened: int) -> tuple[list[tuple[int, int]], int]:
    """The spans of the arguments (or parameters) inside the bracket at `opened` of `code`, cut
    at its top-level commas, and the offset just past the bracket closing it (the end of `code`
    when none does)."""
    depth, pieces, last = 0, [], opened + 1
    for mark in _ARGUMENT_MARKS.finditer(code, opened):
        char, position = mark[0], mark.start()
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                pieces.append((last, position))
                return pieces, position + 1
        elif char == "," and depth == 1:
            pieces.append((last, position))
            last = position + 1
    return pieces, len(code)


@lru_cache(maxsize=64)
def code_at_most(indentation: int) -> re.Pattern[str]:
    return re.compile(rf"(?m)^[ \t]{{0,{indentation}}}\S")


def _left(indentation: int, code: str, start: int, end: int) -> bool:
    """Whether a line of code between `start` and `end` is indented no deeper than
    `indentation`: the body of a definition whose head is so indented has ended there."""
    return code_at_most(indentation).search(code, start, end) is not None
