"""Plain data records that the index extracts from a tree.

Every record carries the 1-based line it was found on; the file it belongs to is
the `SourceFile` that holds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

Role = Literal["product", "tests", "docs"]
ScopeKind = Literal["module", "function", "class"]


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
    (`Cls.method`); `bases` are resolved dotted names (classes only); `decorators` the
    resolved names of its decorators, outermost first (read by the parser only)."""

    line: int
    kind: Literal["function", "class"]
    name: str
    bases: tuple[str, ...] = ()
    decorators: tuple[str, ...] = ()


@dataclass(frozen=True)
class PyAssign:
    """An assignment. In `PythonFacts`: a module-level one to an attribute of an imported
    module (`pkg.foo = x`), or the same done through `setattr(pkg, "foo", x)` or
    `pkg.__setattr__("foo", x)`; in a `PyScope`, any binding of the scope. `target` is the
    resolved dotted name (`pkg.foo`)."""

    line: int
    target: str
    value: str


@dataclass(frozen=True)
class PyScope:
    """The body of a module, function or class and what running it binds; the bodies of the
    functions and classes defined in it are scopes of their own. `name` is qualified as a
    `PyDef`'s ("" for the module), `lines` the first and last line it spans.

    `bindings` are its assignments to a name or to an attribute (`target` resolved through the
    file's imports, as in `PyAssign`), in every spelling Python has for them: `x = v`,
    `x.a = v`, `setattr(x, "a", v)`, `x.__setattr__("a", v)`, `x.__dict__.update(a=v)`,
    `vars(x).update({"a": v})`, `x.__dict__["a"] = v`, and `setattr(x, n, v)` in a loop of
    `n` over a literal list of names (or a module-level name bound to one, such as `__all__`). `returns` are the values of its `return` statements,
    `members` the functions and classes defined directly in it, `params` a function's
    parameter names in order."""

    name: str
    kind: ScopeKind
    lines: tuple[int, int]
    bindings: tuple[PyAssign, ...] = ()
    returns: tuple[str, ...] = ()
    members: tuple[PyDef, ...] = ()
    params: tuple[str, ...] = ()


@dataclass(frozen=True)
class PyBinding:
    """`target = value` anywhere in the file, functions included, where the target is a name
    or an attribute chain, as written (`lib`, `self._lib`), and the value a call or a name:
    `value` is rendered like a call argument (`pkg.mod.Factory(...)`, `lib`) and `line`
    is the value's, which is the line of the `PyCall` a called value is recorded as."""

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
    bindings: tuple[PyBinding, ...] = ()

    def calls_of(self, name: str) -> tuple[PyCall, ...]:
        """The calls whose callee, resolved through the imports, has `name` as its last name."""
        return self._calls_by_name.get(name, ())

    @cached_property
    def _calls_by_name(self) -> dict[str, tuple[PyCall, ...]]:
        found: dict[str, list[PyCall]] = {}
        for call in self.calls:
            found.setdefault(call.qualname.rpartition(".")[2], []).append(call)
        return {name: tuple(calls) for name, calls in found.items()}


# --- C and C++ --------------------------------------------------------------


@dataclass(frozen=True)
class CppDefine:
    """`#define NAME body` (params is None) or `#define NAME(a, b) body`."""

    line: int
    name: str
    params: tuple[str, ...] | None
    body: str


@dataclass(frozen=True)
class CppConstant:
    """`constexpr TYPE name = value;` and its kin: a constant initialised with a name, or with a
    macro invocation (`value` as written, whitespace-collapsed)."""

    line: int
    name: str
    type: str
    value: str


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
    start: int = field(default=-1, compare=False)  # offset of the name's last component


@dataclass(frozen=True)
class CppBlockCall:
    """A call inside the brace block that follows a macro invocation, with its first
    argument if that is a string literal: `m.impl("add.Tensor", f)` -> ("m.impl", "add.Tensor"),
    and its arguments, split and collapsed as `CppCall.args`."""

    line: int
    callee: str
    literal: str
    args: tuple[str, ...] = ()
    start: int = field(default=-1, compare=False)  # offset of the callee
    end: int = field(default=-1, compare=False)  # offset of the closing parenthesis, -1 if unclosed


Span = tuple[int, int]  # offsets of an opening brace and of its closing brace


@dataclass(frozen=True)
class CppMethod:
    """A member function declared or defined in a class body, on the line of its name.
    `body` is where its braces are when the body is written there; `virtual`, `const` and
    `overrides` (`override` or `final` written after its parameters) say how it is declared."""

    line: int
    name: str
    body: Span | None = None
    virtual: bool = False
    const: bool = False
    overrides: bool = False


@dataclass(frozen=True)
class CppClass:
    """A class or struct definition (with a body). `bases` are written base names
    without access specifiers or `virtual`; `methods` are the member functions
    declared or defined in the body, in order, overloads included."""

    line: int
    name: str
    bases: tuple[str, ...]
    methods: tuple[CppMethod, ...]


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
    """What a build file says of its distribution. `packages` are the import packages and
    modules it declares, as written (the `include` patterns of a package finder among them);
    None when it does not list them (a finder that takes everything under its directory). A
    version the build reads from a file is `version_file`, a path relative to the build file's
    directory, until the index reads it."""

    project_name: str | None = None
    version: str | None = None
    version_file: str | None = None  # the file whose text is the version, beside the build file
    entry_points: tuple[EntryPoint, ...] = ()
    requirements: tuple[Requirement, ...] = ()
    error: str | None = None
    packages: tuple[str, ...] | None = None


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
