"""Which framework APIs an installation has. air runs this file as a script in that
installation's interpreter (`air pack verify-apis --torch-env PYTHON`), so it uses the standard
library alone; air imports only its header search (`found_in_headers`), to read a wheel's.

It reads JSON on standard input: the framework's package, the folder of its C++ headers inside
the package, and the names to look for by kind. It writes JSON: the package's version, whether
each Python name resolves (its longest importable module, then attributes; or, as text, why
that cannot be told), and whether each
C++ name is in the headers: a name at all (`cpp name`), a class or struct declared with it
(`cpp class`), a function declared with it (`cpp method`).
"""

from __future__ import annotations

import fnmatch
import importlib
import json
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path

HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".hxx", ".cuh", ".inc")
# how each kind of C++ name is looked for, {names} the alternation of those wanted
SEARCHES = {
    "cpp name": r"\b({names})\b",
    "cpp class": r"\b(?:class|struct)\s+(?:[A-Z_][A-Z0-9_]*(?:\([^)]*\))?\s+)*({names})\s*(?:final\b\s*)?[:{{]",
    "cpp method": r"\b({names})\s*\(",
}
MISSING = object()


def main() -> None:
    request = json.loads(sys.stdin.read())
    package = importlib.import_module(request["package"])
    python = {name: _resolves(name) for name in request["python"]}
    headers = Path(os.path.dirname(package.__file__ or "")) / request["headers"]
    texts = (
        path.read_text(encoding="utf-8", errors="replace")
        for path in headers.rglob("*")
        if path.suffix in HEADER_SUFFIXES and path.is_file()
    )
    cpp = found_in_headers(texts, request["cpp"])
    answer = {"version": str(getattr(package, "__version__", "unknown")), "headers": headers.is_dir()}
    json.dump({**answer, "python": python, "cpp": cpp}, sys.stdout)


def found_in_headers(texts: Iterable[str], wanted: dict[str, list[str]]) -> dict[str, dict[str, bool]]:
    """For each kind of C++ name (`cpp name`, ...), whether each wanted name is in the headers'
    `texts`."""
    searches = {kind: _search(kind, names) for kind, names in wanted.items() if names}
    found: dict[str, set[str]] = {kind: set() for kind in wanted}
    for text in texts:
        for kind, search in searches.items():
            found[kind].update(search.findall(text))
    return {kind: {name: name in found[kind] for name in names} for kind, names in wanted.items()}


def _search(kind: str, names: list[str]) -> re.Pattern[str]:
    alternation = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(SEARCHES[kind].format(names=alternation))


def _resolves(dotted: str) -> bool | str:
    """Whether `dotted` names something (a last part with `*` is a glob of attribute names), or
    why that cannot be told: a module on its way failed to import for another reason than
    being absent (a dependency of it missing, say)."""
    if "*" in dotted:
        parent, _, glob = dotted.rpartition(".")
        value = _value(parent)
        if isinstance(value, Unresolved):
            return value.why
        return value is not MISSING and any(fnmatch.fnmatchcase(name, glob) for name in dir(value))
    value = _value(dotted)
    return value.why if isinstance(value, Unresolved) else value is not MISSING


class Unresolved:
    def __init__(self, why: str) -> None:
        self.why = why


def _value(dotted: str) -> object:
    """What `dotted` names: its longest importable module, then attributes; MISSING if none."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        module = ".".join(parts[:end])
        try:
            value: object = importlib.import_module(module)
        except ModuleNotFoundError as error:
            if error.name and not module.startswith(error.name):  # absent: another module it needs
                return Unresolved(f"importing {module} failed: {error}")
            continue
        except Exception as error:
            return Unresolved(f"importing {module} failed: {type(error).__name__}: {error}")
        for attribute in parts[end:]:
            value = getattr(value, attribute, MISSING)
            if value is MISSING:
                return MISSING
        return value
    return MISSING


if __name__ == "__main__":
    main()
