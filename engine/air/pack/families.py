"""Row families: a row written once, with a `foreach` list, stands for one row per entry.

    - foreach:
        - {id: hook-init, item: "2.12", priority: 2, method: init, base: does nothing}
        - {id: hook-device-count, item: "2.9", priority: 1, method: deviceCount, base: returns 0}
      defaults: {base: throws}
      title: Hook {method}() is implemented
      ...

The other keys of the family are the template, a row like any other. An entry's keys that are
row fields (`id`, `item`, `priority`, even `evidence`) are merged into the template: maps key
by key, any other value replaced. Its other keys are parameters: `{name}` in any text of the
row becomes the entry's value, else the value `defaults` gives, in which the entry's own
parameters are substituted in turn. A parameter may be a list, which stands for a whole value
(`of: "{operators}"`). Braces around anything that is not a parameter of the family stay as they
are (`${dispatch_key}`, `{0,40}`).

Every generated row keeps the lines of the text it came from, for error messages, and an error
names it by its entry (`rows[1].foreach[3]`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from air.errors import PackError
from air.yamldoc import YamlDocument, YamlPath, format_path

FAMILY_KEYS = ("foreach", "defaults")
PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


@dataclass
class ExpandedDocument(YamlDocument):
    """A row file whose families are expanded: `rows[n]` is named as written (`shown`)."""

    shown: dict[int, YamlPath] = field(default_factory=dict)

    def error(self, path: YamlPath, message: str) -> PackError:
        path = tuple(path)
        written = path
        if path[:1] == ("rows",) and len(path) > 1 and path[1] in self.shown:
            written = self.shown[path[1]] + path[2:]
        return PackError(self.source, message, self.line_of(path), format_path(written))


def expand_families(document: YamlDocument, row_fields: frozenset[str]) -> YamlDocument:
    """`document` with every well-formed family replaced by its rows (a malformed one is left
    for the schema to describe)."""
    rows = document.data.get("rows") if isinstance(document.data, dict) else None
    if not isinstance(rows, list) or not any(_is_family(row) for row in rows):
        return document
    written_lines = _lines_by_row(document.lines)
    lines = {path: line for path, line in document.lines.items() if path[:1] != ("rows",) or len(path) == 1}
    expanded: list[Any] = []
    shown: dict[int, YamlPath] = {}
    for number, row in enumerate(rows):
        sources = _family_rows(document, number, row, row_fields) if _is_family(row) else [(("rows", number), row)]
        for source, data in sources:
            shown[len(expanded)] = source
            _copy_lines(written_lines[number], source, ("rows", len(expanded)), row_fields, lines)
            expanded.append(data)
    return ExpandedDocument(document.source, {**document.data, "rows": expanded}, lines, shown)


def _is_family(row: Any) -> bool:
    if not isinstance(row, dict) or "foreach" not in row:
        return False
    entries, defaults = row["foreach"], row.get("defaults", {})
    return (
        isinstance(entries, list)
        and bool(entries)
        and all(isinstance(entry, dict) for entry in entries)
        and isinstance(defaults, dict)
    )


def _family_rows(
    document: YamlDocument, number: int, family: dict, row_fields: frozenset[str]
) -> list[tuple[YamlPath, dict]]:
    """(the entry's path, its row) for each entry of the family at `rows[number]`."""
    where = ("rows", number)
    template = {key: value for key, value in family.items() if key not in FAMILY_KEYS}
    defaults = family.get("defaults", {})
    _check_parameters(document, where + ("defaults",), defaults)
    for name in sorted(set(defaults) & row_fields):
        raise document.error(where + ("defaults", name), f"{name!r} is a row field: write it in the row itself")
    declared = set(defaults) | _parameter_names(family["foreach"], row_fields)
    generated, used = [], set()
    for index, entry in enumerate(family["foreach"]):
        at = where + ("foreach", index)
        own = {key: value for key, value in entry.items() if key not in row_fields}
        _check_parameters(document, at, own)
        row = _merged(template, {key: value for key, value in entry.items() if key in row_fields})
        named = _placeholders(row) & declared
        try:
            generated.append((at, _substituted(row, _entry_values(document, at, named, defaults, own, declared))))
        except _ListInText as embedded:
            raise document.error(
                at, f'parameter {embedded.name!r} is a list: it can only stand for a whole value, "{{{embedded.name}}}"'
            ) from None
        used |= named
    for name in sorted(set(defaults) - used):
        raise document.error(where + ("defaults", name), f"parameter {name!r} is used nowhere in the family")
    return generated


def _entry_values(
    document: YamlDocument, at: YamlPath, named: set[str], defaults: dict, own: dict, declared: set[str]
) -> dict[str, Any]:
    """The value of each parameter the row names: the entry's, else the default, in which the
    entry's own parameters are substituted (`call: "{method}()"`). Every name must have a value,
    and every parameter the entry gives must be used."""
    taken = {name for name in named if name not in own and name in defaults}
    inner = set().union(*(_placeholders(defaults[name]) for name in taken)) & declared
    missing = sorted(named - set(defaults) - set(own))
    if missing:
        raise document.error(at, f"no value for {{{missing[0]}}}: give it here or in the family's defaults")
    missing = sorted(inner - set(own))
    if missing:
        raise document.error(at, f"no value for {{{missing[0]}}}, which a default uses: give it here")
    unused = sorted(set(own) - named - inner)
    if unused:
        raise document.error(at + (unused[0],), f"parameter {unused[0]!r} is used nowhere in the row")
    return {**{name: _substituted(defaults[name], own) for name in taken}, **own}


def _check_parameters(document: YamlDocument, at: YamlPath, parameters: dict) -> None:
    for name, value in parameters.items():
        if not isinstance(value, (str, list)):
            raise document.error(at + (name,), f"the value of parameter {name!r} must be text (quote it) or a list")


def _parameter_names(entries: Iterable[dict], row_fields: frozenset[str]) -> set[str]:
    return {key for entry in entries for key in entry if key not in row_fields}


def _merged(base: dict, changes: dict) -> dict:
    """`base` with `changes` merged in: maps key by key, any other value replaced."""
    merged = dict(base)
    for key, value in changes.items():
        both_maps = isinstance(value, dict) and isinstance(base.get(key), dict)
        merged[key] = _merged(base[key], value) if both_maps else value
    return merged


def _placeholders(value: Any) -> set[str]:
    if isinstance(value, str):
        return set(PLACEHOLDER.findall(value))
    if isinstance(value, dict):
        return set().union(*map(_placeholders, value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*map(_placeholders, value)) if value else set()
    return set()


class _ListInText(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _substituted(value: Any, values: dict[str, Any]) -> Any:
    """`value` with `{name}` replaced in every text (map keys aside); always a fresh copy. A text
    that is one placeholder alone becomes the parameter's value as it is, a list included."""
    if isinstance(value, str):
        alone = PLACEHOLDER.fullmatch(value)
        if alone and alone.group(1) in values:
            return _substituted(values[alone.group(1)], {})
        return PLACEHOLDER.sub(lambda match: _as_text(match.group(1), values, match.group(0)), value)
    if isinstance(value, dict):
        return {key: _substituted(item, values) for key, item in value.items()}
    if isinstance(value, list):
        return [_substituted(item, values) for item in value]
    return value


def _as_text(name: str, values: dict[str, Any], written: str) -> str:
    if name not in values:
        return written
    if not isinstance(values[name], str):
        raise _ListInText(name)
    return values[name]


def _lines_by_row(lines: dict[YamlPath, int]) -> dict[int, dict[YamlPath, int]]:
    grouped: dict[int, dict[YamlPath, int]] = defaultdict(dict)
    for path, line in lines.items():
        if path[:1] == ("rows",) and len(path) > 1:
            grouped[path[1]][path] = line
    return grouped


def _copy_lines(
    written: dict[YamlPath, int],
    source: YamlPath,
    target: YamlPath,
    row_fields: frozenset[str],
    lines: dict[YamlPath, int],
) -> None:
    """The lines of a generated row at `target`: the template's, then those of the entry at `source`."""
    for path, line in written.items():
        if path[2:3] not in (("foreach",), ("defaults",)):
            lines[target + path[2:]] = line
    if len(source) == 2:
        return
    for path, line in written.items():
        rest = path[len(source) :]
        if path[: len(source)] == source and (not rest or rest[0] in row_fields):
            lines[target + rest] = line
