"""Checks a pack or framework file's values must pass beyond its schema, each failing at the
line of the value: regular expressions compile under the backtracking guard, conditions parse
and name only defined evidence, and each clause passes its evidence kind's own checks."""

from __future__ import annotations

from functools import lru_cache, partial
from pathlib import Path
from typing import NoReturn

from air.evidence import KINDS
from air.evidence.base import SpecChecks
from air.graph.operators import OperatorSyntax
from air.pack.conditions import ConditionError, Node, parse_condition, referenced_names
from air.regex import UnsafePattern, compile_guarded, distrust, ship
from air.resources import data_dir
from air.yamldoc import YamlDocument

_PATTERN_OPERATORS = ("matches", "bound_matches", "not_bound_matches", "defined_matches")


def check_clause(document: YamlDocument, path: tuple, clause: dict, operators: OperatorSyntax | None) -> None:
    """Hold a clause to its kind's checks (`validate` of the kind's module) and compile the
    patterns of its capture constraints and its `file_matches`."""
    (kind,) = [key for key in clause if key in KINDS]
    validate = getattr(KINDS[kind], "validate", None)
    if validate is not None:
        at = path + (kind,)
        validate(
            clause[kind], SpecChecks(operators, partial(_pattern_at, document, at), partial(_refuse_at, document, at))
        )
    for capture, constraint in clause.get("where", {}).items():
        for operator in _PATTERN_OPERATORS:
            if constraint.get(operator) is not None:
                checked_pattern(document, path + ("where", capture, operator), constraint[operator])
    if "file_matches" in clause:
        checked_pattern(document, path + ("file_matches",), clause["file_matches"])


def _pattern_at(document: YamlDocument, at: tuple, inner: tuple, pattern: str) -> None:
    checked_pattern(document, at + inner, pattern)


def _refuse_at(document: YamlDocument, at: tuple, inner: tuple, message: str) -> NoReturn:
    raise document.error(at + inner, message)


def checked_pattern(document: YamlDocument, path: tuple, pattern: str) -> None:
    """Compile a regular expression with the backtracking guard, or fail at its line. A
    pattern air does not ship is kept off PCRE2 (see `air.regex.distrust` and `ship`)."""
    if _shipped(document.source):
        ship(pattern)
    else:
        distrust(pattern)
    try:
        compile_guarded(pattern)
    except UnsafePattern as error:
        raise document.error(path, str(error)) from None
    except Exception as error:  # re.error and its kin
        raise document.error(path, f"invalid regular expression: {error}") from None


@lru_cache(maxsize=256)
def _shipped(source: str) -> bool:
    """Whether the document read from `source` is a file of air's own packs or frameworks."""
    path = Path(source).resolve()
    return any(path.is_relative_to(data_dir(kind).resolve()) for kind in ("rulepacks", "frameworks"))


def checked_condition(document: YamlDocument, path: tuple, text: str, names) -> Node:
    """Parse a condition of `document`, refusing names that are not defined beside it."""
    try:
        node = parse_condition(text)
    except ConditionError as error:
        raise document.error(path, str(error)) from None
    unknown = sorted(referenced_names(node) - set(names))
    if unknown:
        raise document.error(path, f"condition refers to undefined evidence {', '.join(unknown)}")
    return node
