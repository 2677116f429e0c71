"""Plain data records that the index extracts from a tree.

Every record carries the 1-based line it was found on; the file it belongs to is
the `SourceFile` that holds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Role = Literal["product", "tests", "docs"]


# --- Python -----------------------------------------------------------------


@dataclass(frozen=True)
class PyImport:
    """`import a.b as c` -> module="a.b", name=None, alias="c";
    `from a import b as c` -> module="a", name="b", alias="c".
    Relative imports are resolved to absolute module names when the file's module is known."""

    line: int
    module: str
    name: str | None
    alias: str


@dataclass(frozen=True)
class PyCall:
    """A call whose callee resolves to a dotted name through the file's imports.

    `args` holds one entry per positional argument: the value of a str/int/float/bool
    constant, the resolved dotted name of a Name/Attribute, else the unparsed source.
    `kwargs` holds (keyword, value) pairs rendered the same way."""

    line: int
    qualname: str
    args: tuple[str, ...]
    kwargs: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class PyDef:
    """A function or class definition. `name` is qualified inside the module
    (`Cls.method`); `bases` are resolved dotted names (classes only)."""

    line: int
    kind: Literal["function", "class"]
    name: str
    bases: tuple[str, ...] = ()


@dataclass(frozen=True)
class PyAssign:
    """A module-level assignment to an attribute of an imported module
    (`pkg.foo = x`), or the same done through `setattr(pkg, "foo", x)` or
    `pkg.__setattr__("foo", x)`. `target` is the resolved dotted name (`pkg.foo`)."""

    line: int
    target: str
    value: str


@dataclass(frozen=True)
class PythonFacts:
    module: str | None
    imports: tuple[PyImport, ...] = ()
    calls: tuple[PyCall, ...] = ()
    defs: tuple[PyDef, ...] = ()
    assigns: tuple[PyAssign, ...] = ()
    error: str | None = None  # set when the source does not parse


# --- C and C++ --------------------------------------------------------------


@dataclass(frozen=True)
class CppDefine:
    """`#define NAME body` (params is None) or `#define NAME(a, b) body`."""

    line: int
    name: str
    params: tuple[str, ...] | None
    body: str


@dataclass(frozen=True)
class CppInclude:
    line: int
    target: str
    system: bool


@dataclass(frozen=True)
class CppCall:
    """An invocation `NAME(args)`, where NAME may be qualified (`c10::f`).
    Arguments are split at top-level commas, whitespace-collapsed and stripped.
    `in_define` names the macro whose body holds the call, if any."""

    line: int
    name: str
    args: tuple[str, ...]
    in_define: str | None = None
    end: int = field(default=-1, compare=False)  # offset of the closing parenthesis


@dataclass(frozen=True)
class CppBlockCall:
    """A call inside the brace block that follows a macro invocation, with its first
    argument if that is a string literal: `m.impl("add.Tensor", f)` -> ("m.impl", "add.Tensor")."""

    line: int
    callee: str
    literal: str


Span = tuple[int, int]  # offsets of an opening brace and of its closing brace


@dataclass(frozen=True)
class CppMethod:
    """A member function declared or defined in a class body, on the line of its name.
    `body` is where its braces are when the body is written there."""

    line: int
    name: str
    body: Span | None = None


@dataclass(frozen=True)
class CppClass:
    """A class or struct definition (with a body). `bases` are written base names
    without access specifiers or `virtual`; `methods` are the member functions
    declared or defined in the body, in order, overloads included."""

    line: int
    name: str
    bases: tuple[str, ...]
    methods: tuple[CppMethod, ...]

    @property
    def method_names(self) -> tuple[str, ...]:
        """The names of `methods`, each once."""
        return tuple(dict.fromkeys(method.name for method in self.methods))


@dataclass(frozen=True)
class CppMethodDef:
    """An out-of-class member definition `Cls::name(...) {`; `body` is where its braces
    are (None for `= default` and for a constructor with an initialiser list)."""

    line: int
    cls: str
    name: str
    body: Span | None = None


@dataclass(frozen=True)
class CppFacts:
    stripped: str  # the text with comments blanked out, same length and line breaks
    defines: tuple[CppDefine, ...] = ()
    includes: tuple[CppInclude, ...] = ()
    classes: tuple[CppClass, ...] = ()
    method_defs: tuple[CppMethodDef, ...] = ()


# --- Build metadata ---------------------------------------------------------


@dataclass(frozen=True)
class EntryPoint:
    group: str
    name: str
    target: str  # "module:attr" or "module"
    line: int


@dataclass(frozen=True)
class Requirement:
    name: str  # normalised: lower case, "_" and "." become "-"
    spec: str  # version specifier as written, "" if none
    line: int


@dataclass(frozen=True)
class BuildFacts:
    project_name: str | None = None
    version: str | None = None
    entry_points: tuple[EntryPoint, ...] = ()
    requirements: tuple[Requirement, ...] = ()
    error: str | None = None


# --- Files ------------------------------------------------------------------


@dataclass(frozen=True)
class SkippedFile:
    path: str
    reason: str


@dataclass
class SourceFile:
    """One readable text file of the tree. Facts are filled in lazily by the index."""

    path: str  # POSIX, relative to the tree root
    role: Role
    language: str
    text: str
    _lines: list[str] | None = field(default=None, repr=False)

    def line_text(self, line: int) -> str:
        if self._lines is None:
            self._lines = self.text.split("\n")
        return self._lines[line - 1] if 0 < line <= len(self._lines) else ""
