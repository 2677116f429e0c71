"""Build switches a default build leaves off: CMake options declared `OFF` (or with no value,
which CMake takes as off) that nothing in the tree turns on. C/C++ code under `#if NAME` (or
`#elif NAME`) of such an option is not compiled by a default build, and is read as the
preprocessor would leave it: its `#else` branch instead.

An option counts as turned on when the tree sets it (`set(NAME ON)`), passes it on
(`-DNAME=ON` in a script or a preset), defaults an environment variable of its name to on
(`os.getenv("NAME", "ON")`), or `#define`s it; then it is left alone, and so is `#ifdef NAME`,
which a definition `NAME=0` would make true."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from air.index.cpp import CPP_LANGUAGES
from air.index.model import SourceFile

_OPTION = re.compile(
    r"(?im)^[ \t]*option[ \t]*\(\s*(?P<name>[A-Za-z_]\w*)\s+(?:\"(?:[^\"\\]|\\.)*\"|[^\s)]+)(?:\s+(?P<value>[^\s)]+))?\s*\)"
)
_OFF_VALUES = frozenset({"OFF", "FALSE", "NO", "N", "0", "IGNORE", "NOTFOUND"})
_ON = r"(?:ON|TRUE|YES|Y|1)\b"
_TURNED_ON = (
    r"(?i:\bset[ \t]*\(\s*{name}\s+\"?{on}"  # set(NAME ON)
    r"|-D{name}(?::BOOL)?={on}"  # -DNAME=ON
    r"|[\"']{name}[\"'][ \t]*:[ \t]*(?:[\"']{on}|true\b)"  # "NAME": "ON" in a preset
    r"|\b(?:getenv|environ\.get)[ \t]*\([ \t]*[\"']{name}[\"'][ \t]*,[ \t]*[\"']{on})"  # os.getenv("NAME", "ON")
    r"|^[ \t]*\#[ \t]*define[ \t]+{name}\b"
)


def switches_off(files: Iterable[SourceFile]) -> Mapping[str, str]:
    """The options a default build leaves off that C/C++ code tests (`#if NAME`), each with
    where it is declared (`path:line`)."""
    files = [source for source in files if source.role != "docs"]
    declared: dict[str, str] = {}
    for source in files:
        if source.language != "cmake":
            continue
        for option in _OPTION.finditer(source.text):
            value = (option["value"] or "OFF").upper()
            if value in _OFF_VALUES and option["name"] not in declared:
                line = source.text.count("\n", 0, option.start("name")) + 1
                declared[option["name"]] = f"{source.path}:{line}"
    return {
        name: where for name, where in sorted(declared.items()) if _tested(name, files) and not _turned_on(name, files)
    }


def _tested(name: str, files: list[SourceFile]) -> bool:
    """Whether a C/C++ file tests the switch as `#if NAME`, `#if !NAME` or `#elif NAME`."""
    pattern = re.compile(rf"^[ \t]*\#[ \t]*(?:el)?if[ \t]*!?[ \t]*{re.escape(name)}[ \t]*(?:$|/[/*])", re.MULTILINE)
    return any(
        source.language in CPP_LANGUAGES and name in source.text and pattern.search(source.text) for source in files
    )


def _turned_on(name: str, files: list[SourceFile]) -> bool:
    pattern = re.compile(_TURNED_ON.format(name=re.escape(name), on=_ON), re.MULTILINE)
    return any(name in source.text and pattern.search(source.text) for source in files)
