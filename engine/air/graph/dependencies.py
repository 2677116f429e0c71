"""The dependency graph: files as nodes; import, include and entry-point edges.

Edges are added lazily, file by file, so a query reads only the files it walks through.
Python imports are read lexically (see `air.index.python_lexical`): a walk through a large
package then costs a scan of each file, not a parse.
"""

from __future__ import annotations

from collections.abc import Iterable

from air.index import CodeIndex
from air.index.model import SourceFile

ENTRY_PREFIX = "entry:"


class DependencyGraph:
    def __init__(self, index: CodeIndex) -> None:
        self.index = index
        self._successors: dict[str, set[str]] = {}
        self._entry_targets: dict[str, str] = {}  # entry-point node -> the object it names
        self._expanded: set[str] = set()

    # --- nodes --------------------------------------------------------------

    def module_file(self, module: str) -> str | None:
        return self.index.modules.get(module)

    def entry_points(self, group: str) -> list[str]:
        """Nodes for the entry points of `group`, each linked to its target module's file."""
        nodes = []
        for source, facts in self.index.build:
            if source.role != "product":
                continue  # entry points of examples and tests are not the backend's
            for entry in facts.entry_points:
                if entry.group != group:
                    continue
                node = f"{ENTRY_PREFIX}{entry.group}:{entry.name}"
                self._entry_targets[node] = entry.target
                target = self.module_file(entry.target.split(":")[0].strip())
                if target:
                    self._successors.setdefault(node, set()).add(target)
                nodes.append(node)
        return nodes

    def entry_target(self, node: str) -> str:
        """What the entry point of `node` (one of `entry_points`) names: `module:object`."""
        return self._entry_targets[node]

    # --- edges --------------------------------------------------------------

    def expand(self, path: str) -> None:
        if path in self._expanded or path.startswith(ENTRY_PREFIX):
            return
        self._expanded.add(path)
        source = self.index.by_path.get(path)
        if source is None:
            return
        if source.language == "python":
            targets = self._python_targets(source)
        elif source.language in ("cpp", "template"):
            targets = self._include_targets(source)
        else:
            return
        self._successors.setdefault(path, set()).update(targets - {path})

    def _python_targets(self, source: SourceFile) -> set[str]:
        targets: set[str] = set()
        for imported in self.index.python_lexical(source).imports:
            dotted = imported.module.split(".")
            candidates = [".".join(dotted[:i]) for i in range(1, len(dotted) + 1)]
            if imported.name:
                candidates.append(f"{imported.module}.{imported.name}")
            targets.update(path for path in map(self.module_file, candidates) if path)
        return targets

    def _include_targets(self, source: SourceFile) -> set[str]:
        return {
            target
            for include in self.index.cpp_facts(source).includes
            for target in self.index.included(source.path, include)
        }

    # --- queries ------------------------------------------------------------

    def successors(self, node: str) -> set[str]:
        """The files that `node` imports or includes (once expanded), or that its entry point names."""
        return self._successors.get(node, set())

    def reachable(self, starts: Iterable[str]) -> list[str]:
        """Files reachable from `starts`, starts included, level by level (breadth-first)."""
        order: list[str] = []
        seen: set[str] = set()
        level = sorted(set(starts))
        while level:
            seen.update(level)
            following: set[str] = set()
            for node in level:
                self.expand(node)
                if not node.startswith(ENTRY_PREFIX):
                    order.append(node)
                following.update(self.successors(node) - seen)
            level = sorted(following)
        return order
