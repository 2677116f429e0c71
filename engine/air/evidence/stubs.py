"""Whether a C++ function body implements anything: how `cpp_class` tells a stub override.

A body is a stub when every statement but the last is inert, and the last is inert too or
leaves without doing anything: `throw ...`, a call that always fails (its first argument is
`false` or `0`), or a `return` of nothing, of a constant or of a placeholder. Statements after
one that always leaves never run, and are not read.

- inert: a declaration initialised with a constant or with plain names (a lock, a GIL
  guard), a `using` or `typedef` that only names something, `(void)x`, a write to std::cout,
  cerr or clog, and a call of `assert`,
  `printf` and their kin, of one of the framework's inert calls (checks, warnings,
  errors), or of a function given literals only (`UNSUPPORTED("op")`);
- constant: the caller's arguments as they are (`return c10::Stream(c10::Stream::UNSAFE, d, 0);`:
  a stream of id 0 for whatever device), literals (numbers, characters, strings, true, false,
  nullptr), qualified names (enumerators and static constants: `c10::DeviceType::CPU`), `kName`
  constants, the address of a function or object (`&deleter`), locals the body bound to a
  constant (`void* data = nullptr;`), and values of one of the framework's value types, or of a
  builtin or standard one, made of constants (`c10::DeviceIndex(1)`, `std::string("x")`), and
  what the file declares constant (`static constexpr DeviceType kind = ...;` of the class); an
  other unqualified name may be a variable (`CURRENT_DEVICE`), so it is not a constant, and a
  function given constants may look something up (`at::getHostAllocator(at::kPrivateUse1)`);
- placeholder: an expression naming one of the names the clause gives
  (`return getDefaultStream(d);`), or a call of a stub member function of the same class
  (`return getStream(d);` of a `getStream` that always gives stream 0); a local bound to one
  is one too, and binding it is inert;
- queried: a local bound to what a query returns (a function named `get...`, `current...`,
  `is...`, `has...`, `query...`, `find...` or `lookup...`, given plain names), or to a value
  type made of such locals and constants. Binding it is inert, and a placeholder built from it
  is still one (`auto d = Device(kPrivateUse1, current_index()); return Stream(DEFAULT, d);`),
  but returning it, or anything computed from it, is not constant: the body answers a query;
- itself: a member function that only calls itself again with its own arguments
  (`return hasPrimaryContext(index);`, unqualified: the member, not the free function it hides),
  which never returns;
- unchanged: a name the caller gives that the body returns as it is (a kernel's input:
  `return self;`), or a fresh value of one of the framework's allocation calls
  (`return at::empty(self.sizes(), self.options());`); a local bound to either is one too,
  and binding it is inert. So is binding a local to what the framework's metadata calls tell
  of an input (`const auto n = self.size(0);`, `auto opts = self.options().dtype(kFloat);`),
  and a tuple of unchanged values, constants and such locals is unchanged
  (`return std::make_tuple(out, at::Tensor(), n);`).

A Python method body is judged alike, statement for statement (`is_python_stub`): `pass`,
`...`, a docstring, `assert`, a local bound to a constant and a call of `print`, of an inert
call or of a function given literals only (`warnings.warn("unsupported")`) are inert; `raise`
and a `return` of nothing, of a constant (literals, `None`, `NotImplemented`, containers of
constants) or of a placeholder leave without doing anything. A lookup with a fallback,
`getattr(obj, "name", default)`, stands for a binding that may not exist: returning it or what
calling it gives, binding it to a local and calling that local are a forward to nothing. A
`return` of a setting read from the environment (`os.getenv("GPUS", 1)`, converted or not)
leaves too: it answers with what the user set, not with what the device says. An `if` whose
every branch is a stub is inert.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from typing import Any

from air.evidence.base import UpstreamCode, as_list, last_component
from air.index.cpp import always_fails, reached

GENERIC_INERT_CALLS = frozenset(
    {"assert", "static_assert", "printf", "fprintf", "puts", "perror", "cout", "cerr", "clog"}
)
CONSTANT_WORDS = frozenset(
    """
    true false nullptr NULL static_cast bool char short int long unsigned signed float double
    size_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
    """.split()
)
NOT_A_TYPE = frozenset({"return", "throw", "delete", "goto", "case", "else", "co_return", "co_yield", "new"})

# Statements are whitespace-collapsed: a blank is one space at most, which keeps every
# pattern below linear.
_LITERAL = r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\''
_NUMBER = r"[-+]?\.?\d[\w.']*"
_QUALIFIED = r"(?::: ?)?[A-Za-z_]\w*(?: ?:: ?~?[A-Za-z_]\w*)*"
_TEMPLATE_ARGUMENTS = r"<[^<>;]*(?:<[^<>;]*>[^<>;]*)*>"
_RETURN = re.compile(r"return\b ?(?P<value>.*)", re.S)
_VOID_CAST = re.compile(r"\( ?void ?\)|static_cast ?< ?void ?>")
# a stream written to: `std::cerr << ...`, a macro's or call's (`VENDOR_LOG << ...`, `LOG(INFO) << ...`)
_STREAM = re.compile(rf"(?P<name>{_QUALIFIED}) ?(?:\([^()]*\) ?)?<<")
_NAMING = re.compile(r"(?:using|typedef|namespace)\b")  # a using-declaration, an alias: names, does nothing
_CALLEE = re.compile(rf"(?P<callee>{_QUALIFIED}) ?(?=\()")
_CALL_OR_METHOD = re.compile(rf"(?:{_QUALIFIED} ?(?:\.|->) ?)?(?P<callee>{_QUALIFIED}) ?(?=\()")  # also `x.new_empty(`
_ARGUMENT_TOKEN = re.compile(rf"{_LITERAL}|[()\[\]{{}},]")
_CONSTANT_TOKEN = re.compile(
    rf" ?(?:{_LITERAL}|{_NUMBER}|(?P<address>& ?{_QUALIFIED})(?! ?[(.\[-])|(?P<name>{_QUALIFIED})|[(){{}}<>,!~+\-])",
    re.S,
)
_METADATA_CHAIN = re.compile(r"(?P<owner>[A-Za-z_]\w*)(?: ?(?:\.|->) ?[A-Za-z_]\w* ?\((?:[^()]|\([^()]*\))*\))+")
_METHOD_CALL = re.compile(r" ?(?:\.|->) ?(?P<method>[A-Za-z_]\w*) ?\((?P<arguments>(?:[^()]|\([^()]*\))*)\)")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_DECLARATION = re.compile(
    r"(?:(?:static|const|constexpr|thread_local|volatile|mutable) )*"
    rf"(?P<type>{_QUALIFIED}(?: ?{_TEMPLATE_ARGUMENTS})?)(?: ?[*&]+ ?| )(?P<name>[A-Za-z_]\w*) ?"
    r"(?P<init>=.*|\(.*\)|\{.*\})?",
    re.S,
)
_PLAIN_ARGUMENT = re.compile(rf"{_LITERAL}|{_NUMBER}|[&*]? ?(?:this ?-> ?)?{_QUALIFIED}(?: ?(?:\.|->) ?\w+)*")
_CONSTANT_NAME = re.compile(r"k[A-Z]\w*")
_RETURNED_ADDRESS = re.compile(r"return ?& ?(?P<name>[A-Za-z_]\w*) ?;?")
_THIS = re.compile(r"^\s*this ?-> ?")
_CALLED_NEXT = re.compile(rf" ?(?:{_TEMPLATE_ARGUMENTS} ?)?\(")  # after a name: a call of it
_LITERAL_OR_NUMBER = re.compile(rf"{_LITERAL}|{_NUMBER}")
_QUERY = re.compile(
    r"(?:[Gg]et|[Cc]urrent|[Qq]uery|[Ii]s|[Hh]as|[Ff]ind|[Ll]ookup)(?:[A-Z_]|$)|(?:GET|CURRENT|QUERY|IS|HAS|FIND|LOOKUP)(?:_|$)"
)


@dataclass(frozen=True)
class StubRules:
    """What a clause counts as implementing nothing: the framework's inert calls, the
    placeholders the clause names, and whether a constant return implements the method."""

    inert_calls: tuple[str, ...] = ()
    placeholders: frozenset[str] = frozenset()
    constant_is_real: bool = False
    unchanged: frozenset[str] = frozenset()  # names a stub may return as they are (the inputs)
    allocations: tuple[str, ...] = ()  # calls (globs of their last component) giving a fresh, uncomputed value
    value_types: frozenset[str] = frozenset()  # types whose values made of constants are constants
    own_name: str = ""  # of the member function judged: a body that only calls it again never returns
    stub_members: frozenset[str] = frozenset()  # of its class: a body that returns what one gives is one too
    metadata_calls: tuple[str, ...] = ()  # methods telling a value's metadata (`size`), not computing
    fixed_values: tuple[tuple[str, int], ...] = ()  # (type, argument): a value made with it constant is a placeholder


# The `placeholders` option of the kinds that judge bodies (`cpp_class`, `cpp_field`).
PLACEHOLDERS_SCHEMA = {
    "type": "array",
    "items": {"type": "string", "minLength": 1},
    "description": "names a stub returns (a stream pool that always hands out the default stream, "
    "an error saying the function is unimplemented)",
}


def clause_rules(spec: Mapping[str, Any], upstream: UpstreamCode) -> StubRules:
    """The rules a clause judges bodies by: the framework's inert calls and value types, the
    clause's `placeholders` and `constant_is_real`."""
    return StubRules(
        upstream.inert_calls,
        frozenset(last_component(name) for name in as_list(spec.get("placeholders", []))),
        spec.get("constant_is_real", False),
        value_types=upstream.value_types,
        fixed_values=upstream.fixed_values if spec.get("placeholders") else (),
    )


def is_stub(statements: list[str], rules: StubRules) -> bool:
    """Whether a body made of `statements` (see `air.index.cpp.body_statements`) is a stub;
    those after one that always leaves never run."""
    *leading, last = reached(statements) or [""]
    metadata: set[str] = set()
    queried: set[str] = set()
    message = _message_locals(leading, last) if always_fails(last) else set()
    returned = _RETURNED_ADDRESS.fullmatch(last)
    if returned is not None and returned["name"] in map(_declared_name, leading):
        return False  # an object the body builds (a function-local singleton) is what it serves
    for statement in leading:
        declaration = _DECLARATION.fullmatch(statement)
        name, init = (declaration["name"], declaration["init"] or "") if declaration is not None else ("", "")
        assigned = init[1:].strip() if init.startswith("=") else None  # the value of `T name = value`
        if assigned is not None and (_is_unchanged(assigned, rules) or is_constant(assigned, rules.value_types)):
            rules = replace(rules, unchanged=rules.unchanged | {name})  # returned, as good as a constant
        elif assigned is not None and rules.metadata_calls and _tells_metadata(assigned, rules, metadata):
            metadata.add(name)
        elif init.startswith(("=", "{")) and _is_placeholder(assigned or init, rules, queried):
            rules = replace(rules, placeholders=rules.placeholders | {name})
        elif assigned is not None and _is_query(assigned, rules.value_types, queried):
            queried.add(name)
        elif name not in message and not _inert(statement, rules):
            return False
    return _inert(last, rules) or _leaves(last, rules, metadata, queried)


def _message_locals(leading: list[str], failure: str) -> set[str]:
    """The locals of `leading` that only the statement that always fails reads, itself or
    through other such locals: what its message is made of (`const auto& name =
    op.schema().operator_name(); TORCH_CHECK(false, "no kernel for ", name);`)."""
    declared = {}
    for position, statement in enumerate(leading):
        declaration = _DECLARATION.fullmatch(statement)
        if declaration is not None:
            declared[declaration["name"]] = position
    found: set[str] = set()
    grown = True
    while grown:
        grown = False
        for name, position in declared.items():
            if name in found:
                continue
            word = re.compile(rf"\b{re.escape(name)}\b")
            readers = [other for other, statement in enumerate(leading) if other != position and word.search(statement)]
            by_message = [reader for reader in readers if _declared_name(leading[reader]) in found]
            if len(by_message) == len(readers) and (by_message or word.search(failure)):
                found.add(name)
                grown = True
    return found


def _declared_name(statement: str) -> str | None:
    declaration = _DECLARATION.fullmatch(statement)
    return None if declaration is None else declaration["name"]


def _is_placeholder(value: str, rules: StubRules, queried: Collection[str] = ()) -> bool:
    """Whether `value` names one of the clause's placeholders (`c10::Stream(DEFAULT, d)`) or is
    a call of a stub member (`getStream(d)`). Naming a queried local too, it must make a value
    of the framework's types (the default stream of the device found): an expression that
    combines a placeholder with what a query answered (`built && found`) computes something."""
    names = set(_IDENTIFIER.findall(value))
    if names & set(queried) and not _makes_value(value, rules.value_types):
        return False
    if names & rules.placeholders or _is_fixed_value(value, rules.fixed_values):
        return True
    call = _member_call(value) if rules.stub_members else None
    return call is not None and call[0] in rules.stub_members


def _is_fixed_value(value: str, fixed_values: tuple[tuple[str, int], ...]) -> bool:
    """`c10::Stream(c10::Stream::UNSAFE, device, 0)`: a value of a type of `fixed_values` made
    with a constant at the argument that tells one value from another (a stream's id)."""
    call = _whole_call(value) if fixed_values else None
    if call is None:
        return False
    position = dict(fixed_values).get(last_component(call["callee"]))
    if position is None:
        return False
    arguments = _split_arguments(value[value.index("(", call.end()) + 1 : -1])
    return position < len(arguments) and _LITERAL_OR_NUMBER.fullmatch(arguments[position]) is not None


def _is_query(value: str, value_types: Collection[str], queried: Collection[str]) -> bool:
    """`get_device_index()`, `c10::Device(kPrivateUse1, index)`: a call of a query (a function
    named get..., current..., is..., has..., query..., find... or lookup...) or a value of
    one of `value_types`, given constants, plain names and such locals. Binding a local to it
    changes nothing; the local is no constant, so a body returning it (or what it computes)
    implements something, but one that only builds a placeholder from it does not."""
    call = _whole_call(value)
    if call is None:
        return False
    callee = call["callee"]
    if not (_QUERY.match(last_component(callee.replace(" ", ""))) or _names_a_type(callee, value_types)):
        return False
    arguments = _split_arguments(value[call.end() + 1 : -1])
    return all(
        argument in queried or _PLAIN_ARGUMENT.fullmatch(argument) or is_constant(argument, value_types)
        for argument in arguments
    )


def _makes_value(value: str, value_types: Collection[str]) -> bool:
    """`c10::Stream(...)`: the whole of `value` is a value of one of `value_types`."""
    call = _whole_call(value)
    return call is not None and _names_a_type(call["callee"], value_types)


def _whole_call(value: str) -> re.Match[str] | None:
    """The call that `value` is, all of it (`f(a, b)`, not `f(a) + 1`): its callee's match."""
    call = _CALL_OR_METHOD.match(value)
    return call if call is not None and _closing(value, call.end()) == len(value) - 1 else None


def _tells_metadata(value: str, rules: StubRules, metadata: Collection[str]) -> bool:
    """`x.size(0)`, `x.options().dtype(at::kFloat)`: metadata calls, given constants or such
    locals, made on an unchanged value or such a local."""
    chained = _METADATA_CHAIN.fullmatch(value)
    if chained is None or (chained["owner"] not in rules.unchanged and chained["owner"] not in metadata):
        return False
    for call in _METHOD_CALL.finditer(value, chained.end("owner")):
        arguments = _split_arguments(call["arguments"])
        if call["method"] not in rules.metadata_calls or not all(
            argument in metadata or is_constant(argument, rules.value_types) for argument in arguments
        ):
            return False
    return True


def _unchanged_tuple(value: str, rules: StubRules, metadata: Collection[str]) -> bool:
    """`std::make_tuple(a, b)`, `std::pair(a, b)` (a call without template arguments) or
    `{a, b}` of unchanged values, constants and locals bound to metadata."""
    braced = value.startswith("{") and _closing(value, 0) == len(value) - 1
    call = None if braced else _CALL_OR_METHOD.match(value)
    if call is not None and last_component(call["callee"]) not in ("make_tuple", "tuple", "make_pair", "pair"):
        call = None
    opened = 0 if braced else (value.index("(", call.end()) if call is not None else -1)
    if opened < 0 or _closing(value, opened) != len(value) - 1:
        return False
    elements = _split_arguments(value[opened + 1 : -1])
    return bool(elements) and all(
        element in metadata or _is_unchanged(element, rules) or is_constant(element, rules.value_types)
        for element in elements
    )


def _is_unchanged(value: str, rules: StubRules) -> bool:
    if value in rules.unchanged:
        return True
    call = _whole_call(value)
    return call is not None and any(
        fnmatchcase(last_component(call["callee"]), pattern) for pattern in rules.allocations
    )


def _leaves(statement: str, rules: StubRules, metadata: Collection[str] = (), queried: Collection[str] = ()) -> bool:
    """Whether `statement` ends the function without doing anything."""
    if always_fails(statement) or (rules.own_name and _calls_itself(statement, rules.own_name)):
        return True
    returned = _RETURN.fullmatch(statement)
    if returned is None:
        return False
    value = returned["value"].strip()
    if not value:
        return True
    if _is_unchanged(value, rules) or (rules.unchanged and _unchanged_tuple(value, rules, metadata)):
        return True
    if _is_placeholder(value, rules, queried):
        return True
    return not rules.constant_is_real and is_constant(value, rules.value_types, rules.unchanged)


def _inert(statement: str, rules: StubRules) -> bool:
    if not statement or _VOID_CAST.match(statement) or _NAMING.match(statement):
        return True
    declaration = _DECLARATION.fullmatch(statement)
    if declaration is not None and declaration["type"].split("<")[0].strip() not in NOT_A_TYPE:
        return _inert_initialiser(declaration["init"], rules.value_types)
    stream = _STREAM.match(statement)
    if stream is not None:
        return _inert_name(last_component(stream["name"]), rules)
    call = split_call(statement)
    if call is None:
        return False
    callee, args = call
    return _inert_name(last_component(callee), rules) or (
        bool(args) and all(_is_literal(arg) for arg in args) and any(arg.startswith('"') for arg in args)
    )


def _inert_name(name: str, rules: StubRules) -> bool:
    return name in GENERIC_INERT_CALLS or any(fnmatchcase(name, pattern) for pattern in rules.inert_calls)


def _inert_initialiser(init: str | None, value_types: frozenset[str]) -> bool:
    """Whether a declaration's initialiser does nothing: none, a constant, or a
    constructor given plain names or what calls given plain names return (a lock guard,
    `DeviceGuard guard(device_of(self))`)."""
    if init is None:
        return True
    if init.startswith("="):
        return is_constant(init[1:], value_types)
    inner = init[1:-1]
    return not inner.strip() or all(map(_plain_or_plain_call, _split_arguments(inner)))


def _plain_or_plain_call(argument: str) -> bool:
    if _PLAIN_ARGUMENT.fullmatch(argument):
        return True
    call = _CALL_OR_METHOD.match(argument)  # a function or a method
    closing = _closing(argument, call.end()) if call is not None else None
    inner = _split_arguments(argument[call.end() + 1 : closing]) if call is not None and closing is not None else None
    return closing == len(argument) - 1 and inner is not None and all(map(_PLAIN_ARGUMENT.fullmatch, inner))


def _calls_itself(statement: str, name: str) -> bool:
    """`return name(a, b)` or `name(a, b)`, unqualified or through `this->`, given plain names: in
    a member function of that name, the call of itself with its own arguments, which never ends."""
    call = _member_call(statement.removeprefix("return "))
    return call is not None and call[0] == name and all(_IDENTIFIER.fullmatch(argument) for argument in call[1])


def _member_call(text: str) -> tuple[str, list[str]] | None:
    """(callee, arguments) of `text` when it is a call, unqualified or through `this->`, as a
    member function calls another of its class."""
    call = split_call(_THIS.sub("", text, count=1).strip())
    return (call[0].replace(" ", ""), call[1]) if call is not None else None


def split_call(statement: str) -> tuple[str, list[str]] | None:
    """(callee, arguments) of a statement that is a call, maybe followed by `<< ...`
    (as `LOG(WARNING) << "x"` is); None for any other statement."""
    head = _CALLEE.match(statement)
    if head is None or last_component(head["callee"]) in NOT_A_TYPE:
        return None
    close = _closing(statement, head.end())
    if close is None:
        return None
    rest = statement[close + 1 :].strip()
    if rest and not rest.startswith("<<"):
        return None
    return "".join(head["callee"].split()), _split_arguments(statement[head.end() + 1 : close])


def _closing(text: str, opened: int) -> int | None:
    depth = 0
    for token in _ARGUMENT_TOKEN.finditer(text, opened):
        char = token.group()
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return token.start()
    return None


def _split_arguments(text: str) -> list[str]:
    args = []
    depth = 0
    start = 0
    for token in _ARGUMENT_TOKEN.finditer(text):
        char = token.group()
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            args.append(text[start : token.start()].strip())
            start = token.end()
    args.append(text[start:].strip())
    return [] if args == [""] else args


def _is_literal(text: str) -> bool:
    return _LITERAL_OR_NUMBER.fullmatch(text) is not None


def is_constant(expression: str, value_types: Collection[str] = (), given: Collection[str] = ()) -> bool:
    """Whether `expression` is built of constants only (see the module's docstring), values of
    `value_types` and the names `given` (the caller's arguments) among them."""
    if not expression.strip():
        return False
    pos = 0
    while pos < len(expression):
        token = _CONSTANT_TOKEN.match(expression, pos)
        if token is None or token.end() == pos:
            return not expression[pos:].strip()
        name = token["name"]
        pos = token.end()
        if name is not None and _CALLED_NEXT.match(expression, pos):  # a value made, not a function called
            if not _names_a_type(name, value_types):
                return False
        elif name is not None and not _constant_name(name) and name not in given:
            return False
    return True


_DECLARED_CONSTANT = re.compile(
    r"\b(?:static\s+const(?:expr)?|constexpr)\b[^;(){}=]*?\b(?P<name>[A-Za-z_]\w*)\s*(?:=|\{)"
)


def declared_constants(code: str) -> frozenset[str]:
    """The variables C/C++ `code` declares constant, at any scope: `static const`, `static
    constexpr` and `constexpr` ones (`static constexpr c10::DeviceType kind = ...;`), whose
    unqualified names a body may return as constants."""
    return frozenset(found["name"] for found in _DECLARED_CONSTANT.finditer(code))


def _constant_name(name: str) -> bool:
    return "::" in name or name in CONSTANT_WORDS or _CONSTANT_NAME.fullmatch(name) is not None


def _names_a_type(name: str, value_types: Collection[str]) -> bool:
    """Whether a called name makes a value of a type rather than calling a function: one of
    `value_types`, a builtin type or cast, or a value type of the standard library."""
    last = last_component(name.replace(" ", ""))
    return last in value_types or last in CONSTANT_WORDS or last in _STANDARD_VALUE_TYPES


_STANDARD_VALUE_TYPES = frozenset({"string", "string_view", "optional", "make_optional", "pair", "make_pair", "tuple"})


GENERIC_PYTHON_INERT_CALLS = frozenset({"print"})
PYTHON_CONSTANT_NAMES = frozenset({"NotImplemented"})


def is_python_stub(statements: Sequence[ast.stmt], rules: StubRules) -> bool:
    """Whether a Python function body made of `statements` is a stub."""
    if not statements:
        return False
    forwards = _fallback_locals(statements)
    if forwards - rules.placeholders:
        rules = replace(rules, placeholders=rules.placeholders | forwards)
    *leading, last = statements
    return all(_inert_python(statement, rules) for statement in leading) and (
        _inert_python(last, rules) or _leaves_python(last, rules)
    )


def _leaves_python(statement: ast.stmt, rules: StubRules) -> bool:
    if isinstance(statement, ast.Raise):
        return True
    if not isinstance(statement, ast.Return):
        return False
    if statement.value is None or _fallback_lookup(statement.value) or _environment_read(statement.value):
        return True
    named = {node.id for node in ast.walk(statement.value) if isinstance(node, ast.Name)}
    named |= {node.attr for node in ast.walk(statement.value) if isinstance(node, ast.Attribute)}
    return bool(named & rules.placeholders) or (not rules.constant_is_real and _python_constant(statement.value))


def _inert_python(statement: ast.stmt, rules: StubRules) -> bool:
    if isinstance(statement, (ast.Pass, ast.Assert)):
        return True
    if isinstance(statement, ast.If):
        return all(is_python_stub(branch, rules) for branch in (statement.body, statement.orelse) if branch)
    if isinstance(statement, (ast.Assign, ast.AnnAssign)):
        return statement.value is None or _python_constant(statement.value) or _fallback_lookup(statement.value)
    if not isinstance(statement, ast.Expr):
        return False
    value = statement.value
    if isinstance(value, ast.Constant):
        return True
    if not isinstance(value, ast.Call):
        return False
    callee = value.func.id if isinstance(value.func, ast.Name) else getattr(value.func, "attr", "")
    literal_args = [*value.args, *(keyword.value for keyword in value.keywords)]
    return (
        callee in GENERIC_PYTHON_INERT_CALLS
        or (isinstance(value.func, ast.Name) and callee in rules.placeholders)
        or _fallback_lookup(value)
        or any(fnmatchcase(callee, pattern) for pattern in rules.inert_calls)
        or (
            bool(literal_args)
            and all(isinstance(arg, ast.Constant) for arg in literal_args)
            and any(isinstance(arg, ast.Constant) and isinstance(arg.value, str) for arg in literal_args)
        )
    )


def _fallback_lookup(node: ast.expr) -> bool:
    """`getattr(obj, "name", default)`, or a call of what it gives."""
    if isinstance(node, ast.Call) and _fallback_lookup(node.func):
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) == 3
    )


def _environment_read(node: ast.expr) -> bool:
    """A setting read from the environment, converted or not: `os.getenv("N", 1)`,
    `int(os.environ.get("N", "1"))`, `os.environ["N"]`, a helper named `getenv`."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CONVERSIONS:
        if len(node.args) != 1:
            return False
        node = node.args[0]
    if isinstance(node, ast.Subscript):
        return _names_environ(node.value)
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id == "getenv"
    return isinstance(func, ast.Attribute) and (
        func.attr == "getenv" or func.attr == "get" and _names_environ(func.value)
    )


def _names_environ(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


_CONVERSIONS = {"int", "bool", "str", "float"}


def _fallback_locals(statements: Sequence[ast.stmt]) -> frozenset[str]:
    """The names a body binds to a lookup with a fallback (`fn = getattr(obj, "name", None)`)."""
    return frozenset(
        target.id
        for statement in statements
        for node in ast.walk(statement)
        if isinstance(node, ast.Assign) and _fallback_lookup(node.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    )


def _python_constant(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id in PYTHON_CONSTANT_NAMES
    if isinstance(node, ast.UnaryOp):
        return _python_constant(node.operand)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_python_constant(element) for element in node.elts)
    if isinstance(node, ast.Dict):
        return all(key is not None and _python_constant(key) for key in node.keys) and all(
            _python_constant(value) for value in node.values
        )
    return False
