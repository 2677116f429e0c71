"""The score-condition language: parse once, evaluate with three-valued logic.

A condition is True, False or None (unknown: it depends on evidence that could not
be gathered, such as a semgrep clause without semgrep installed). `and`/`or`/`not`
follow Kleene's logic, so an unknown operand only matters when it could change the
result. What an undecided clause did find counts: it is present, and its count, unique
captures or coverage already reaching `>=`/`>` a number decide the comparison; so does a
coverage that could not reach the number even were everything undecided found.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import TYPE_CHECKING, Protocol

from air.versions import OPERATORS

if TYPE_CHECKING:
    from lark import Lark, Token, Transformer

Truth = bool | None

COMPARATORS: dict[str, Callable[[float, float], bool]] = {
    symbol: OPERATORS[symbol] for symbol in (">=", "<=", "==", "!=", ">", "<")
}


# What an undecided clause found is there; more may be: its measures are lower bounds, enough to
# decide a comparison that they already pass from below.
LOWER_BOUNDS = frozenset({">=", ">"})


class ConditionError(ValueError):
    """A condition that does not parse."""


class EvidenceResult(Protocol):
    """What a condition can ask of an evaluated evidence clause."""

    @property
    def decided(self) -> bool: ...

    def count(self) -> int: ...

    def unique(self, capture: str) -> int: ...

    def covered_share(self) -> float: ...

    def possible_share(self) -> float: ...


@dataclass(frozen=True)
class Present:
    name: str

    def evaluate(self, env: Mapping[str, EvidenceResult]) -> Truth:
        result = env[self.name]
        return True if result.count() > 0 else (False if result.decided else None)


@dataclass(frozen=True)
class Comparison:
    name: str
    measure: str  # count | unique | coverage
    capture: str | None
    comparator: str
    number: float

    def evaluate(self, env: Mapping[str, EvidenceResult]) -> Truth:
        result = env[self.name]
        if self.measure == "coverage":
            value: float = result.covered_share()
        else:
            value = result.unique(self.capture) if self.capture else result.count()
        holds = COMPARATORS[self.comparator](value, self.number)
        if result.decided or (holds and self.comparator in LOWER_BOUNDS):
            return holds
        if self.measure == "coverage" and self.comparator in LOWER_BOUNDS:
            return None if COMPARATORS[self.comparator](result.possible_share(), self.number) else False
        return None


@dataclass(frozen=True)
class Not:
    operand: Node

    def evaluate(self, env: Mapping[str, EvidenceResult]) -> Truth:
        value = self.operand.evaluate(env)
        return None if value is None else not value


@dataclass(frozen=True)
class AllOf:
    operands: tuple[Node, ...]

    def evaluate(self, env: Mapping[str, EvidenceResult]) -> Truth:
        values = [operand.evaluate(env) for operand in self.operands]
        if False in values:
            return False
        return None if None in values else True


@dataclass(frozen=True)
class AnyOf:
    operands: tuple[Node, ...]

    def evaluate(self, env: Mapping[str, EvidenceResult]) -> Truth:
        values = [operand.evaluate(env) for operand in self.operands]
        if True in values:
            return True
        return None if None in values else False


Node = Present | Comparison | Not | AllOf | AnyOf


@lru_cache(maxsize=1)
def _parser() -> tuple[Lark, Transformer]:
    """The grammar's parser and the transformer of its trees to nodes. lark is imported here, when
    a pack is read from its files: a kept pack's conditions are parsed already."""
    from lark import Lark, Transformer

    class ToNodes(Transformer):
        def present(self, items: list[Token]) -> Present:
            return Present(str(items[0]))

        def count(self, items: list[Token]) -> tuple[str, str, None]:
            return (str(items[0]), "count", None)

        def unique(self, items: list[Token]) -> tuple[str, str, str]:
            return (str(items[0]), "unique", str(items[1]))

        def coverage(self, items: list[Token]) -> tuple[str, str, None]:
            return (str(items[0]), "coverage", None)

        def comparison(self, items: list) -> Comparison:
            (name, measure, capture), comparator, number = items
            return Comparison(name, measure, capture, str(comparator), float(number))

        def negation(self, items: list[Node]) -> Not:
            return Not(items[0])

        def all_of(self, items: list[Node]) -> AllOf:
            return AllOf(tuple(items))

        def any_of(self, items: list[Node]) -> AnyOf:
            return AnyOf(tuple(items))

    grammar = files("air.pack").joinpath("condition.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", maybe_placeholders=False), ToNodes()


MAX_CONDITION_LENGTH = 2000


@lru_cache(maxsize=4096)
def parse_condition(text: str) -> Node:
    """Parse a condition; raise ConditionError with a one-line message if it is malformed."""
    if len(text) > MAX_CONDITION_LENGTH:
        raise ConditionError(f"condition longer than {MAX_CONDITION_LENGTH} characters")
    from lark.exceptions import LarkError, VisitError

    parser, to_nodes = _parser()
    try:
        return to_nodes.transform(parser.parse(text))
    except (LarkError, VisitError, RecursionError) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ConditionError(f"cannot parse condition {text!r}: {first_line}") from None


def measured_names(node: Node, measure: str) -> set[str]:
    """Evidence names a condition compares by `measure` (count, unique or coverage)."""
    if isinstance(node, Comparison):
        return {node.name} if node.measure == measure else set()
    if isinstance(node, Present):
        return set()
    if isinstance(node, Not):
        return measured_names(node.operand, measure)
    return set().union(*(measured_names(operand, measure) for operand in node.operands))


def referenced_names(node: Node) -> set[str]:
    """Evidence names a condition reads."""
    if isinstance(node, (Present, Comparison)):
        return {node.name}
    if isinstance(node, Not):
        return referenced_names(node.operand)
    return set().union(*(referenced_names(operand) for operand in node.operands))


def affirmed_names(node: Node) -> set[str]:
    """Evidence names a condition reads other than under `not`: what it wants to find."""
    if isinstance(node, (Present, Comparison)):
        return {node.name}
    if isinstance(node, Not):
        return set()
    return set().union(*(affirmed_names(operand) for operand in node.operands))
