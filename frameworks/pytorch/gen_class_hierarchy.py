"""Regenerate the framework's map of upstream C++ classes to their bases and virtual member
functions (classes.yaml, beside this script) from torch's headers.

    python frameworks/pytorch/gen_class_hierarchy.py [--include DIR] [--pack DIR] [--output PATH]

The pack's `cpp_class` clauses name base classes (`derives_from`). A backend class may derive
from them through an upstream class instead (`c10::DeviceAllocator` derives from
`c10::Allocator`), so the framework lists, for every class the pack names, every upstream
class that derives from one of them and their ancestors, its direct bases, and the names of its
virtual member functions declared `const` and not (a backend method that matches neither, and
is not marked `override`, hides the virtual: PyTorch still calls the base's). Classes are read with air's own C++
reader from the headers of an installed torch (torch/include, of which the directories in
HEADER_DIRS); nothing of torch is imported or run, find_spec only locates it. A name the pack
writes unqualified stands for every upstream class of that name; a qualified one
(`torch::autograd::Function`) for that class only.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

FRAMEWORK_DIR = Path(__file__).resolve().parent
ROOT = FRAMEWORK_DIR.parent.parent
sys.path.insert(0, str(ROOT / "engine"))

from air.index.cpp import extract_cpp  # noqa: E402

DEFAULT_PACK = ROOT / "rulepacks" / "pytorch-2.x"
DEFAULT_FRAMEWORK = FRAMEWORK_DIR
DEFAULT_OUTPUT = DEFAULT_FRAMEWORK / "classes.yaml"
HEADER_DIRS = ("ATen", "c10", "torch", "kineto")
HEADER_SUFFIXES = (".h", ".hpp", ".cuh")

# Blanked before namespaces are followed: comments, then literals and preprocessor lines.
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_LITERAL_OR_DIRECTIVE = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|^[ \t]*#(?:[^\\\n]|\\.)*', re.M | re.S)
_SCOPE_TOKEN = re.compile(r"\bnamespace\s+(?P<name>[A-Za-z_][\w:]*(?:\s*::\s*[A-Za-z_]\w*)*)?\s*\{|[{}]")
_TEMPLATE_ARGUMENTS = re.compile(r"<[^<>]*>")
_USING = re.compile(r"\busing\s+(?!namespace\b)(?P<target>(?:::\s*)?[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)+)\s*;")
MAX_ALIAS_DEPTH = 8


def locate_include() -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch not found: install torch==<version> or pass --include")
    return Path(next(iter(spec.submodule_search_locations))) / "include"


def torch_version_beside(include: Path) -> str:
    for info in sorted(include.parents[1].glob("torch-*.dist-info")):
        return info.name.removeprefix("torch-").removesuffix(".dist-info").split("+")[0]
    return "unknown"


def named_bases(*directories: Path) -> set[str]:
    """The base classes the `cpp_class` clauses of the YAML files under `directories` name."""
    names: set[str] = set()
    for directory in directories:
        for path in sorted(directory.rglob("*.yaml")):
            if "fixtures" not in path.relative_to(directory).parts:
                _collect(yaml.safe_load(path.read_text(encoding="utf-8")), names)
    return names


def _collect(data: object, names: set[str]) -> None:
    if isinstance(data, dict):
        spec = data.get("cpp_class")
        if isinstance(spec, dict) and "derives_from" in spec:
            bases = spec["derives_from"]
            names.update([bases] if isinstance(bases, str) else bases)
        for value in data.values():
            _collect(value, names)
    elif isinstance(data, list):
        for value in data:
            _collect(value, names)


@dataclass
class Headers:
    """What the headers define: qualified class name -> (base as written, namespace it is
    written in); qualified name made visible by `using ns::Name;` -> (target, namespace); and
    qualified class name -> its virtual member functions (declared `virtual`, `override` or
    `final`) -> whether each declaration of that name is `const`."""

    classes: dict[str, set[tuple[str, str]]] = field(default_factory=lambda: defaultdict(set))
    aliases: dict[str, tuple[str, str]] = field(default_factory=dict)
    virtuals: dict[str, dict[str, set[bool]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))


def read_headers(include: Path) -> Headers:
    headers = Headers()
    for directory in HEADER_DIRS:
        for path in sorted((include / directory).rglob("*")):
            if path.suffix in HEADER_SUFFIXES and path.is_file():
                _read_header(path.read_text(encoding="utf-8", errors="replace"), headers)
    return headers


def _read_header(text: str, headers: Headers) -> None:
    code = _LITERAL_OR_DIRECTIVE.sub(_blank, _COMMENT.sub(_blank, text))
    scopes = namespaces_by_line(code)
    if "class" in text or "struct" in text:
        for cls in extract_cpp(text).classes:
            scope = scopes[cls.line - 1]
            name = _qualified(scope, cls.name)
            headers.classes[name].update((base, scope) for base in cls.bases)
            for method in cls.methods:
                if (method.virtual or method.overrides) and not method.name.startswith("~"):
                    headers.virtuals[name][method.name].add(method.const)
    for using in _USING.finditer(code):
        scope = scopes[code.count("\n", 0, using.start())]
        target = "".join(using["target"].split()).removeprefix("::")
        headers.aliases.setdefault(_qualified(scope, target.rpartition("::")[2]), (target, scope))


def _qualified(scope: str, name: str) -> str:
    return f"{scope}::{name}" if scope else name


def namespaces_by_line(code: str) -> list[str]:
    """The namespace open at the start of each line of `code` (comments, literals and
    preprocessor lines blanked); index 0 is line 1."""
    stack: list[str | None] = []  # a namespace's name, or None for any other brace
    scopes = []
    for line in code.split("\n"):
        scopes.append("::".join(name for name in stack if name))
        for token in _SCOPE_TOKEN.finditer(line):
            if token.group() == "}":
                if stack:
                    stack.pop()
            elif token.group() == "{":
                stack.append(None)
            else:
                stack.append("".join((token["name"] or "").split()))
    return scopes


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group())


def resolve(base: str, scope: str, headers: Headers, by_last: dict[str, list[str]], depth: int = 0) -> str:
    """The qualified name of the class a base written in `scope` names: looked up from the
    innermost namespace outwards (through `using` declarations), then by its qualified
    suffix or, failing that, its name when only one class has it; as written if unknown."""
    written = "".join(_without_template_arguments(base).split()).removeprefix("::")
    parts = scope.split("::") if scope else []
    for level in range(len(parts), -1, -1):
        candidate = "::".join(parts[:level] + [written])
        if candidate in headers.classes:
            return candidate
        if candidate in headers.aliases and depth < MAX_ALIAS_DEPTH:
            target, target_scope = headers.aliases[candidate]
            return resolve(target, target_scope, headers, by_last, depth + 1)
    same_name = by_last.get(written.rpartition("::")[2], [])
    suffixed = [name for name in same_name if f"::{name}".endswith(f"::{written}")]
    if suffixed or len(same_name) == 1:
        return (suffixed or same_name)[0]
    return written


def _without_template_arguments(name: str) -> str:
    while (shorter := _TEMPLATE_ARGUMENTS.sub("", name)) != name:
        name = shorter
    return name


def matches(qualified: str, wanted: str) -> bool:
    return qualified == wanted or qualified.endswith("::" + wanted)


def hierarchy(headers: Headers, wanted: set[str]) -> dict[str, list[str]]:
    """Class -> sorted direct bases, for the classes matching `wanted` and their descendants."""
    by_last: dict[str, list[str]] = defaultdict(list)
    for name in sorted(headers.classes):
        by_last[name.rpartition("::")[2]].append(name)
    bases = {
        name: sorted({resolve(base, scope, headers, by_last) for base, scope in written})
        for name, written in headers.classes.items()
    }
    derived: dict[str, set[str]] = defaultdict(set)
    for name, direct in bases.items():
        for base in direct:
            derived[base].add(name)
    selected = {name for name in bases if any(matches(name, w) for w in wanted)}
    frontier = set(selected)
    while frontier:
        frontier = {child for parent in frontier for child in derived[parent]} - selected
        selected |= frontier
    frontier = set(selected)
    while frontier:  # and their ancestors, whose virtual member functions they inherit
        frontier = {parent for child in frontier for parent in bases.get(child, ()) if parent in bases} - selected
        selected |= frontier
    return {name: bases[name] for name in sorted(selected)}


def virtual_members(headers: Headers, classes: Iterable[str]) -> dict[str, dict[str, list[str]]]:
    """Class -> `const` and `mutable`: the names of its virtual member functions declared so."""
    members = {}
    for name in classes:
        declared = headers.virtuals.get(name, {})
        by_kind = {
            kind: sorted(method for method, consts in declared.items() if const in consts)
            for kind, const in (("const", True), ("mutable", False))
        }
        if any(by_kind.values()):
            members[name] = {kind: names for kind, names in by_kind.items() if names}
    return members


def write(output: Path, version: str, bases: dict[str, list[str]], virtuals: dict[str, dict[str, list[str]]]) -> None:
    lines = [
        "# Upstream C++ classes the pack's cpp_class clauses name, the upstream classes that derive",
        "# from them and their ancestors, each with its direct bases: a backend class deriving from",
        "# any of them derives from what the pack names. With the names of their virtual member",
        "# functions declared const and not: a backend's method of that name, not marked override,",
        "# that is neither hides the virtual instead of overriding it.",
        "# Generated by gen_class_hierarchy.py; do not edit.",
        "upstream_classes:",
        f"  source: torch {version} headers ({', '.join(HEADER_DIRS)})",
        "  bases:",
    ]
    lines += [f"    {name}: [{', '.join(direct)}]" for name, direct in bases.items()]
    lines.append("  virtuals:")
    for name, by_kind in virtuals.items():
        lines.append(f"    {name}:")
        lines += [f"      {kind}: [{', '.join(methods)}]" for kind, methods in by_kind.items()]
    output.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--include", type=Path, help="torch/include of an installed torch")
    parser.add_argument("--pack", type=Path, default=DEFAULT_PACK)
    parser.add_argument("--framework", type=Path, default=DEFAULT_FRAMEWORK)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    options = parser.parse_args()
    include = options.include or locate_include()
    wanted = named_bases(options.pack, options.framework)
    headers = read_headers(include)
    unknown = sorted(w for w in wanted if not any(matches(name, w) for name in headers.classes))
    if unknown:
        print(f"not found in the headers: {', '.join(unknown)}", file=sys.stderr)
    bases = hierarchy(headers, wanted)
    write(options.output, torch_version_beside(include), bases, virtual_members(headers, bases))
    print(f"{len(bases)} classes written to {options.output}")


if __name__ == "__main__":
    main()
