"""Safe YAML loading that remembers the line of every value, for one-line error messages.

Aliases are expanded into plain data, within two bounds that keep a small file from growing
into a huge document: the number of nodes visited and the characters of scalar text built.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from air.errors import PackError
from air.regular_file import NotRegular, open_regular

MAX_NODES = 200_000
MAX_BYTES = 4 * 1024 * 1024
MAX_EXPANDED_CHARS = 4 * MAX_BYTES

YamlPath = tuple[Any, ...]
COMPOSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: same nodes, faster


@dataclass
class YamlDocument:
    source: str  # the path shown in messages
    data: Any
    lines: dict[YamlPath, int]

    def line_of(self, path: YamlPath) -> int | None:
        """The line of `path`, or of its nearest ancestor that has one."""
        path = tuple(path)
        while path not in self.lines and path:
            path = path[:-1]
        return self.lines.get(path)

    def error(self, path: YamlPath, message: str) -> PackError:
        return PackError(self.source, message, self.line_of(path), format_path(path))


def format_path(path: YamlPath) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def load_yaml(path: Path, shown_as: str | None = None) -> YamlDocument:
    shown = shown_as or str(path)
    raw = read_bounded(path, shown)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise PackError(shown, f"not UTF-8 (byte {error.start})") from None
    return parse_yaml(text, shown)


def read_bounded(path: Path, shown: str) -> bytes:
    """The bytes of the regular file `path`, at most MAX_BYTES of them; opened without waiting,
    so that a FIFO in its place is refused rather than waited on."""
    try:
        handle, _info = open_regular(path, follow_links=True)
        with os.fdopen(handle, "rb") as stream:
            raw = stream.read(MAX_BYTES + 1)
    except NotRegular:
        raise PackError(shown, "not a regular file") from None
    except OSError as error:
        raise PackError(shown, f"cannot read: {error.strerror or error}") from None
    if len(raw) > MAX_BYTES:
        raise PackError(shown, f"larger than {MAX_BYTES // (1024 * 1024)} MiB")
    return raw


def parse_yaml(text: str, shown: str) -> YamlDocument:
    try:
        node = yaml.compose(text, Loader=COMPOSER)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise PackError(shown, f"invalid YAML: {problem}", mark.line + 1 if mark else None) from None
    lines: dict[YamlPath, int] = {}
    if node is None:
        return YamlDocument(shown, None, lines)
    builder = _Builder(shown, lines)
    return YamlDocument(shown, builder.build(node, ()), lines)


class _Builder:
    """Turns composed nodes into plain data. Aliases are expanded, but every node visited and
    every character of scalar text built is counted, so an exponential alias structure (a
    "billion laughs") or a large scalar aliased many times is refused before the data is used."""

    def __init__(self, shown: str, lines: dict[YamlPath, int]) -> None:
        self.shown = shown
        self.lines = lines
        self.visited = 0
        self.expanded_chars = 0
        self.constructor = yaml.SafeLoader("")

    def build(self, node: yaml.Node, path: YamlPath) -> Any:
        self.visited += 1
        if self.visited > MAX_NODES:
            raise PackError(
                self.shown, f"more than {MAX_NODES} YAML nodes (alias expansion bomb?)", node.start_mark.line + 1
            )
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, path + (i,)) for i, item in enumerate(node.value)]
        self._count_text(node)
        try:
            return self.constructor.construct_object(node, deep=True)
        except yaml.YAMLError as error:
            raise PackError(self.shown, f"invalid value: {error}".splitlines()[0], node.start_mark.line + 1) from None

    def _count_text(self, node: yaml.Node) -> None:
        self.expanded_chars += len(node.value)
        if self.expanded_chars > MAX_EXPANDED_CHARS:
            raise PackError(
                self.shown,
                f"expands to more than {MAX_EXPANDED_CHARS // (1024 * 1024)} MiB of text "
                "(a large value aliased many times?)",
                node.start_mark.line + 1,
            )

    def _mapping(self, node: yaml.MappingNode, path: YamlPath) -> dict:
        self.constructor.flatten_mapping(node)
        result: dict = {}
        for key_node, value_node in node.value:
            key = self.build(key_node, path + ("<key>",))
            if not isinstance(key, (str, int, float, bool)) or key is None:
                raise PackError(
                    self.shown, "mapping keys must be scalars", key_node.start_mark.line + 1, format_path(path)
                )
            if key in result:
                raise PackError(self.shown, f"duplicate key {key!r}", key_node.start_mark.line + 1, format_path(path))
            self.lines[path + (key,)] = key_node.start_mark.line + 1
            result[key] = self.build(value_node, path + (key,))
        self.lines.pop(path + ("<key>",), None)
        return result
