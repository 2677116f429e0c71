"""Classes read from a C/C++ text: class heads with their bases, the member functions
declared in a class body, and member functions defined outside their class (`Cls::name(...) {`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator

from air.index.cpp.lexing import (
    NOT_FUNCTION_NAMES,
    Braces,
    Brackets,
    Lines,
    collapse,
    identifier_start,
    is_identifier_char,
    matching_opener,
    qualifier_start,
    skip_group,
    skip_space,
    skip_space_back,
    split_top_level,
)
from air.index.model import CppClass, CppMethod, CppMethodDef, Span

# --- Class heads -------------------------------------------------------------

# Searched for apart: the regex engine finds a literal word far quicker than one of two.
_CLASS_KEYS = (re.compile(r"class\b"), re.compile(r"struct\b"))
_CLASS_HEAD_END = re.compile(r"[{;}]")
_CLASS_HEAD_ITEM = re.compile(r"\s*(?:(?P<attribute>\[\[)|(?P<name>(?:::\s*)?[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*))")
_FINAL = re.compile(r"\s*final\b")
_BASE_ACCESS = re.compile(r"^(?:(?:public|protected|private|virtual)\b\s*)*")
_MAX_CLASS_HEAD = 2000


def read_classes(code: str, lines: Lines, macros: Collection[str], braces: Callable[[], Braces]) -> Iterator[CppClass]:
    """The classes that `code` (comments, literals and directives blanked) defines with a body.
    Names among `macros` are not taken for the class name; `braces` matches the braces of
    `code` when a class body is first read."""
    found = (key for pattern in _CLASS_KEYS for key in pattern.finditer(code))
    keys = sorted((key for key in found if _starts_class_head(code, key.start())), key=re.Match.start)
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
    if start > 0 and is_identifier_char(code[start - 1]):
        return False
    before = skip_space_back(code, start)
    return code[identifier_start(code, before) : before] != "enum"


def _parse_class_head(head: str, macros: Collection[str]) -> tuple[str, tuple[str, ...]] | None:
    """Name and bases from what stands between `class`/`struct` and `{`, or None if
    that is not a class head (an elaborated type, a template parameter, ...)."""
    named = _class_name(head, macros)
    if named is None:
        return None
    name, pos = named
    if head.startswith("<", pos):
        closed = skip_group(head, pos)
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
            after = skip_group(head, item.start("attribute"))
        elif name is not None and item["name"] == "final":
            break
        elif item["name"] in macros:
            after = item.end()
        elif head.startswith("(", skip_space(head, item.end())):
            if name is not None:
                return None  # `struct S f(...)`: a function returning S
            after = skip_group(head, skip_space(head, item.end()))
        else:
            name, after = item["name"], item.end()
        if after is None:
            return None
        pos = after
    if name is None:
        return None
    return "".join(name.split()), skip_space(head, pos)


def _split_bases(text: str) -> tuple[str, ...]:
    """`public A, virtual B<int, X>` -> ("A", "B<int, X>")."""
    bases = (collapse(_BASE_ACCESS.sub("", part.strip(), count=1)) for part in split_top_level(text))
    return tuple(base for base in bases if base)


# --- Member functions declared in a class body -------------------------------

_ACCESS_LABELS = re.compile(r"\s*(?:(?:public|protected|private)\s*:(?!:)\s*)*")
_TEMPLATE_PREFIX = re.compile(r"template\s*(?=<)")
_NOT_A_MEMBER_FUNCTION = re.compile(r"\s*(?:using|typedef|friend)\b")
# A `(`, or an `=` that is not part of `==`, `!=`, `<=` or `>=`; each alternative starts with
# its character, so that the regex engine skips ahead to them.
_DECLARATION_EVENT = re.compile(r"\(|=(?<![=!<>]=)(?!=)")


def _member_functions(code: str, braces: Braces, opened: int, class_name: str, lines: Lines) -> tuple[CppMethod, ...]:
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
                name, offset, paren = declared
                last = start + len(declaration) == segment_end
                virtual, const, overrides = _qualifiers(declaration, offset, paren)
                methods.append(
                    CppMethod(lines.of(start + offset), name, block if last else None, virtual, const, overrides)
                )
            start += len(declaration) + 1
        cursor = block[1] + 1 if block else segment_end
    return tuple(methods)


def _segments(braces: Braces, opened: int) -> Iterator[tuple[int, Span | None]]:
    """The text of the class body opened at `opened` cut at the brace groups directly
    inside it: (end of each piece, the group that follows it or None for the last)."""
    for inner_open, inner_close in braces.children(opened):
        yield inner_open, (inner_open, inner_close)
    yield braces.closing[opened], None


def _declared_function(declaration: str, constructor: str) -> tuple[str, int, int] | None:
    """The function a member declaration declares, the offset of its name and that of the `(`
    opening its parameters, or None for data members, type aliases, friends, operators and
    macro invocations."""
    labels = _ACCESS_LABELS.match(declaration)
    assert labels is not None  # the pattern matches the empty string
    begin = labels.end()
    if template := _TEMPLATE_PREFIX.match(declaration, begin):
        begin = skip_group(declaration, template.end()) or len(declaration)
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
            return (*declared, paren)
        after = skip_group(declaration, paren)
        if after is None:
            return None
        pos = after
    return None


_VIRTUAL = re.compile(r"\bvirtual\b")
_CONST = re.compile(r"\bconst\b")
_OVERRIDES = re.compile(r"\b(?:override|final)\b")
_SPECIFIERS_END = re.compile(r"=|(?<!:):(?!:)")  # `= 0`/`= default`, an initialiser list


def _qualifiers(declaration: str, name: int, paren: int) -> tuple[bool, bool, bool]:
    """Whether the member function declared with its name at `name` and its parameters opened
    at `paren` is written `virtual`, `const` (after its parameters, before any trailing return
    type) and `override`/`final` (which follow a trailing return type)."""
    closed = skip_group(declaration, paren)
    trailer = declaration[closed:] if closed is not None else ""
    if end := _SPECIFIERS_END.search(trailer):
        trailer = trailer[: end.start()]
    returned = trailer.find("->")
    return (
        _VIRTUAL.search(declaration, 0, name) is not None,
        _CONST.search(trailer, 0, returned if returned >= 0 else len(trailer)) is not None,
        _OVERRIDES.search(trailer) is not None,
    )


def _function_name_before(declaration: str, begin: int, paren: int, constructor: str) -> tuple[str, int] | None:
    """The declared name and its offset if the `(` at `paren` opens a function's parameter list."""
    end = skip_space_back(declaration, paren, begin)
    start = identifier_start(declaration, end, begin)
    name = declaration[start:end]
    if not name or name in NOT_FUNCTION_NAMES or name[0].isdigit():
        return None
    before = skip_space_back(declaration, start, begin)
    if before > begin and declaration[before - 1] == "~":
        name = "~" + name
        before = skip_space_back(declaration, before - 1, begin)
    if before == begin:
        # With no type in front, only a constructor or destructor is a function;
        # anything else is a macro invocation such as `DISABLE_COPY(Foo)`.
        return (name, start) if name.lstrip("~") == constructor else None
    preceding = declaration[identifier_start(declaration, before, begin) : before]
    return None if preceding == "operator" else (name, start)


# --- Out-of-class member definitions -----------------------------------------

# Possessive quantifiers: no match needs what they took back, and a failed try gives up at once.
_SCOPED_DECLARATOR = re.compile(r"::\s*+(?P<name>(?:~\s*+)?[A-Za-z_]\w*+)\s*+\(")
_TRAILER_TOKEN = re.compile(r"\s*(::|->|&&|[A-Za-z_]\w*|[(\[]|.)", re.S)
_TRAILER_PASSES = frozenset({"::", "->", "&&", "&", "*", "<", ">", ","})
_MAX_TRAILER_TOKENS = 32
_NOT_BEFORE_DECLARATOR = frozenset(",:(<=.!?+-/%|^")
_MAX_TEMPLATE_ARGUMENTS = 256


def read_method_defs(code: str, lines: Lines, braces: Callable[[], Braces]) -> Iterator[CppMethodDef]:
    """The member functions that `code` defines outside their class, in order."""
    brackets = Brackets(code)
    for declarator in _SCOPED_DECLARATOR.finditer(code):
        scope = _scope_before(code, declarator.start())
        if scope is None:
            continue
        start, cls = scope
        if not _may_begin_declarator(code, qualifier_start(code, start)):
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
    before = skip_space_back(code, start)
    return code[before - 1 : before] not in _NOT_BEFORE_DECLARATOR


def _scope_before(code: str, colons: int) -> tuple[int, str] | None:
    """(start, name) of the class or namespace written before the `::` at `colons`,
    template arguments dropped: `Foo<T>::` -> "Foo"."""
    end = skip_space_back(code, colons)
    if code[end - 1 : end] == ">":
        opening = matching_opener(code, end - 1, "<>", _MAX_TEMPLATE_ARGUMENTS, stops=";{}()")
        if opening is None:
            return None
        end = skip_space_back(code, opening)
    start = identifier_start(code, end)
    if start == end or code[start].isdigit():
        return None
    return start, code[start:end]


def _definition_after(code: str, pos: int, brackets: Brackets, constructor: bool) -> tuple[bool, int | None]:
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
        elif text in _TRAILER_PASSES or is_identifier_char(text[0]):
            pos = token.end()
        else:
            return False, None
    return False, None
