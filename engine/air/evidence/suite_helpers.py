"""A suite's own helpers of a kind, named in a `text` clause's pattern where it says
`{helpers}`: the functions of the product's and the tests' Python whose code matches the
clause's `body` (a comparison, say), whose name matches its `names` (compare, diff, close...)
and that take two arguments or more; test functions and special methods aside. A call of one
then counts as what the helper does: `get_diff(y_cpu, y_dev) > 1e-6` compares. The names are
literal text put into a pattern of the pack, which keeps the pack's trust (see
`air.regex.inherit_trust`)."""

from __future__ import annotations

from air.evidence.base import Context
from air.index.python_lexical import argument_spans, code_at_most
from air.regex import alternatives, compile_guarded, inherit_trust, required_literals, searching

HELPERS = "{helpers}"


def with_helpers(pattern: str, helpers: dict, context: Context) -> str:
    """`pattern` with `{helpers}` standing for the names of the helpers `helpers` describes (a
    pattern that matches nothing when there are none); trusted as `pattern` is."""
    key = ("text helpers", helpers["body"], helpers.get("names"), tuple(helpers.get("prefilter", ())))
    names = context.memo(key, lambda: helper_names(helpers, context))
    derived = pattern.replace(HELPERS, alternatives(names))
    inherit_trust(pattern, derived)
    return derived


def helper_names(helpers: dict, context: Context) -> tuple[str, ...]:
    """The names of the functions of Python files whose code matches the `body` of `helpers`,
    whose name matches its `names`, and that take two arguments or more (what a helper
    compares); test functions and special methods (`__init__`) aside."""
    body = compile_guarded(helpers["body"])
    named = compile_guarded(helpers.get("names", r"\w"))
    index = context.index
    literals = helpers.get("prefilter") or list(required_literals(helpers["body"]))
    names: set[str] = set()
    for source in index.select(literals, languages=["python"], roles=("product", "tests")):
        code = index.python_lexical(source).code
        for definition in _HELPER_DEFINITION.finditer(code):
            name = definition["name"]
            if name in names or name.startswith("__") or named.search(name) is None:
                continue
            arguments, signature_end = _signature(code, definition.end() - 1)
            if arguments < 2:
                continue
            end = code_at_most(len(definition["indent"])).search(code, signature_end)
            with searching(source.path):
                if body.search(code[signature_end : len(code) if end is None else end.start()]) is not None:
                    names.add(name)
    return tuple(sorted(names))


_HELPER_DEFINITION = compile_guarded(
    r"^(?P<indent>[ \t]*)(?:async[ \t]+)?def[ \t]+(?!test)(?P<name>[A-Za-z_]\w*)[ \t]*\("
)


def _signature(code: str, opened: int) -> tuple[int, int]:
    """Of the parameter list whose `(` is at `opened`: how many parameters it names, `self` and
    `cls` aside, and where it ends."""
    spans, end = argument_spans(code, opened)
    parameters = [code[left:right].strip() for left, right in spans]
    return len([part for part in parameters if part and part not in ("self", "cls", "*", "/")]), end
