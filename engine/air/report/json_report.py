"""The JSON report: a plain mapping of the report model, and its inverse.

The output follows `schemas/report.schema.json`. Rendering is deterministic (sorted keys,
fixed indentation) and keeps full float precision.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from functools import cache
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints

from air.errors import InputError
from air.results import IndexStats, Report

TOOL_NAME = "air"
_DIRECTORY_LISTS = ("skipped_directories", "vendored_read")  # (path, reason) pairs, written as objects


def render_json(report: Report) -> str:
    """Render the report as indented JSON with sorted keys and a trailing newline."""
    text = json.dumps(to_dict(report), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return text + "\n"


def to_dict(report: Report) -> dict[str, Any]:
    """Convert the report to JSON-ready data (dicts, lists, strings, numbers, None)."""
    return {
        "schema_version": report.schema_version,
        "tool": {"name": TOOL_NAME, "version": report.tool_version},
        "date": report.date,
        "pack": _plain(report.pack),
        "backend": _plain(report.backend),
        "integration_path": _plain(report.integration_path),
        "readiness": report.readiness,
        "coverage": report.coverage,
        "sections": _plain(report.sections),
        "rows": _plain(report.rows),
        "quick_reference": _plain(report.quick_reference),
        "sources": _plain(report.sources),
        "index": _index_to_dict(report.index),
        "operators": _plain(report.operators),
        "tests": _plain(report.tests),
        "upstream": _plain(report.upstream),
        "runtime": _runtime_to_dict(report),
    }


def _runtime_to_dict(report: Report) -> dict[str, Any] | None:
    if report.runtime is None:
        return None
    return {**_plain(report.runtime), "environment": dict(report.runtime.environment)}


def from_dict(data: dict[str, Any]) -> Report:
    """Rebuild the report model from the data `to_dict` produces."""
    fields_data = {key: value for key, value in data.items() if key != "tool"}
    fields_data["tool_version"] = data["tool"]["version"]
    fields_data["index"] = {
        **data["index"],
        "skipped": [[item["reason"], item["count"]] for item in data["index"]["skipped"]],
        "skipped_files": [[item["path"], item["reason"]] for item in data["index"]["skipped_files"]],
        **{key: [[item["path"], item["reason"]] for item in data["index"][key]] for key in _DIRECTORY_LISTS},
    }
    if data.get("runtime"):
        fields_data["runtime"] = {**data["runtime"], "environment": sorted(data["runtime"]["environment"].items())}
    return _converter(Report)(fields_data)


def _identity(value: Any) -> Any:
    return value


@cache
def _converter(kind: Any) -> Callable[[Any], Any]:
    """The function that turns plain JSON data into an instance of the annotated type `kind`,
    worked out once per type."""
    if isinstance(kind, type) and is_dataclass(kind):
        hints = get_type_hints(kind)
        converters = [(field.name, _converter(hints[field.name])) for field in fields(kind)]
        return lambda value: kind(**{name: convert(value[name]) for name, convert in converters if name in value})
    origin, args = get_origin(kind), get_args(kind)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = _converter(args[0])
        return tuple if item is _identity else lambda value: tuple(map(item, value))
    if origin is tuple:
        items = [_converter(arg) for arg in args]
        return lambda value: tuple(convert(part) for convert, part in zip(items, value))
    if origin in (Union, UnionType):
        chosen = _converter(next(arg for arg in args if arg is not type(None)))
        return _identity if chosen is _identity else lambda value: None if value is None else chosen(value)
    return _identity


def _plain(value: Any) -> Any:
    """Dataclasses become dicts keyed by field name and tuples become lists, recursively."""
    if is_dataclass(value) and not isinstance(value, type):
        return {name: _plain(getattr(value, name)) for name in _field_names(type(value))}
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


@cache
def _field_names(kind: type) -> tuple[str, ...]:
    return tuple(field.name for field in fields(kind))


def _index_to_dict(index: IndexStats) -> dict[str, Any]:
    stats = _plain(index)
    stats["skipped"] = [{"reason": reason, "count": count} for reason, count in index.skipped]
    stats["skipped_files"] = [{"path": path, "reason": reason} for path, reason in index.skipped_files]
    for key in _DIRECTORY_LISTS:
        stats[key] = [{"path": path, "reason": reason} for path, reason in getattr(index, key)]
    return stats


def load_report(path: Path) -> Report:
    """The report a JSON file holds; an InputError naming the file when it is not one."""
    from air.pack.schemas import describe, validator  # loads the evidence kinds: only when reports are read

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"{path}: cannot read a JSON report: {getattr(error, 'strerror', None) or error}") from None
    problems = sorted(
        validator("report").iter_errors(data), key=lambda problem: list(problem.absolute_path), reverse=True
    )
    if problems:
        where = "/".join(map(str, problems[0].absolute_path)) or "the top level"
        raise InputError(f"{path}: not an air JSON report: {describe(problems[0])} (at {where})")
    return from_dict(data)
