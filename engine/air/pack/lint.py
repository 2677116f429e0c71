"""`air pack lint DIR`: a pack's house style, beyond what loading it checks (the schemas, the
references between its parts, the patterns' safety).

Errors: a row without a title, a remediation or docs; a row whose item number is not in its
section (3.2 belongs to section 3). Warnings, errors under `--strict`: a row crediting stubs
with no remediation for them; a shared evidence definition no row uses; a fixture that expects
nothing; a text pattern that matches nothing in any fixture the pack is tested with (its own,
and those of the packs it extends).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from air.pack.conditions import affirmed_names
from air.pack.load import Pack, Row
from air.yamldoc import load_yaml

EXPECTED_FILE = "expected.yaml"
MAX_FIXTURE_FILE = 1_000_000  # bytes of a fixture file a pattern is tried on


@dataclass(frozen=True)
class Problem:
    level: str  # "error" or "warning"
    where: str  # a row id, a definition, a fixture
    message: str

    def __str__(self) -> str:
        return f"{self.level}: {self.where}: {self.message}"


def lint_pack(pack: Pack) -> list[Problem]:
    problems = [
        *_rows(pack),
        *_stubs_without_remedy(pack),
        *_unused_definitions(pack),
        *_empty_fixtures(pack),
        *_dead_patterns(pack),
    ]
    return sorted(problems, key=lambda problem: (problem.level != "error", problem.where, problem.message))


def _rows(pack: Pack) -> list[Problem]:
    numbers = {section.id: section.number for section in pack.framework.sections}
    problems = []
    for row in pack.rows:
        for name, value in (("title", row.title), ("remediation", row.remediation), ("docs", row.docs)):
            if not value or (isinstance(value, str) and not value.strip()):
                problems.append(Problem("error", row.id, f"no {name}"))
        if row.item.split(".")[0] != str(numbers.get(row.section)):
            problems.append(
                Problem(
                    "error",
                    row.id,
                    f"item {row.item} is not in its section ({row.section}, §{numbers.get(row.section)})",
                )
            )
    return problems


def _stubs_without_remedy(pack: Pack) -> list[Problem]:
    """Rows that give partial credit for stubs (evidence with `bodies: stub`) where only their
    default remediation holds: it asks for the method or class, which the backend has. Tried
    on what a backend may show: each stub found, alone or with one or two other findings."""
    problems = []
    for row in pack.rows:
        partial = row.score.get(1)
        if partial is None:
            continue
        stubs = {name for name, clause in row.evidence.items() if clause.spec.get("bodies") == "stub"}
        for stub in sorted(stubs & affirmed_names(partial)):
            shown = _default_shown_with(row, stub)
            if shown is not None:
                listed = ", ".join(f"`{name}`" for name in shown)
                problems.append(
                    Problem(
                        "warning",
                        row.id,
                        f"with {listed} found the row earns 1 for stubs, but only the default remediation holds",
                    )
                )
    return problems


def _default_shown_with(row: Row, stub: str) -> tuple[str, ...] | None:
    """The fewest findings, `stub` among them, for which `row` earns 1 while only its default
    remediation holds; None when there are none."""
    others = sorted(set(row.evidence) - {stub})
    for size in range(MAX_OTHER_FINDINGS + 1):
        for extra in combinations(others, size):
            found = {stub, *extra}
            results = {name: _Found(name in found) for name in row.evidence}
            if row.level(results)[0] == 1 and not any(remedy.when.evaluate(results) for remedy in row.remedies):
                return tuple(sorted(found))
    return None


MAX_OTHER_FINDINGS = 2


@dataclass(frozen=True)
class _Found:
    """An evidence clause's result as the lint imagines it: found once, or not at all."""

    found: bool
    decided: bool = True

    def count(self) -> int:
        return int(self.found)

    def unique(self, capture: str) -> int:
        return int(self.found)

    def covered_share(self) -> float:
        return float(self.found)

    def possible_share(self) -> float:
        return float(self.found)


def _unused_definitions(pack: Pack) -> list[Problem]:
    written = json.dumps([pack.row_data, pack.evidence], default=str, sort_keys=True)
    used = set(re.findall(r'"use": "([^"]+)"', written))
    return [
        Problem("warning", f"evidence {name}", "a shared definition no row uses")
        for name in sorted(set(pack.evidence) - used)
    ]


def _fixture_directories(pack: Pack) -> list[Path]:
    directories = []
    current: Pack | None = pack
    while current is not None:
        if current.fixtures.is_dir():
            directories += sorted(path for path in current.fixtures.iterdir() if (path / EXPECTED_FILE).is_file())
        current = current.parent
    return directories


def _empty_fixtures(pack: Pack) -> list[Problem]:
    if not pack.fixtures.is_dir():
        return []
    problems = []
    for directory in sorted(pack.fixtures.iterdir()):
        expected = directory / EXPECTED_FILE
        if not expected.is_file():
            continue
        data = load_yaml(expected).data
        if not isinstance(data, dict) or not data.get("rows"):
            problems.append(Problem("warning", f"fixture {directory.name}", "expects no row outcome"))
    return problems


def _dead_patterns(pack: Pack) -> list[Problem]:
    """The `text` clauses of the pack's own rows whose pattern matches no fixture file."""
    texts = [_text(path) for directory in _fixture_directories(pack) for path in sorted(directory.rglob("*"))]
    corpus = [text for text in texts if text]
    problems = []
    for row in pack.rows:
        if row.id not in pack.own_rows:
            continue
        for name, clause in row.evidence.items():
            pattern = _pattern(clause.spec) if clause.kind == "text" else None
            if pattern is None:
                continue
            try:
                compiled = re.compile(pattern, re.MULTILINE)
            except re.error:
                continue  # written for PCRE2 alone: loading the pack checked it there
            if not any(compiled.search(text) for text in corpus):
                problems.append(Problem("warning", row.id, f"the pattern of `{name}` matches nothing in any fixture"))
    return problems


def _pattern(spec: Any) -> str | None:
    pattern = spec.get("pattern") if isinstance(spec, dict) else None
    return pattern if isinstance(pattern, str) else None


def _text(path: Path) -> str:
    if not path.is_file() or path.name == EXPECTED_FILE or path.stat().st_size > MAX_FIXTURE_FILE:
        return ""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
