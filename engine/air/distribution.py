"""An installed distribution as a tree to analyse: its files, copied out of site-packages.

The distribution is found with `importlib.metadata`, in this interpreter or in another one
(`--python PATH`, asked with a short script run in isolated mode). Neither imports the
distribution: metadata is read from its `.dist-info` files. Its text files are copied into a
temporary directory (so the index sees exactly them); compiled files are counted, and when they
make up most of the distribution it is a binary distribution, whose C/C++ rows cannot be
decided.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from air.errors import InputError
from air.report.model import Source

BINARY_DIST = "binary dist"  # the source kind of a mostly compiled distribution
COMPILED_SUFFIXES = (".so", ".pyd", ".dll", ".dylib", ".a", ".lib")
BINARY_SHARE = 0.5
PROBE_TIMEOUT = 60
_PROBE = r"""
import json, sys
from importlib import metadata
for name in sys.argv[1:]:
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        continue
    files = [str(f) for f in (dist.files or [])]
    print(json.dumps({"name": dist.metadata["Name"], "version": dist.version,
                      "location": str(dist.locate_file("")), "files": files}))
    break
"""


@dataclass(frozen=True)
class Distribution:
    name: str
    version: str
    location: Path
    files: tuple[str, ...]

    @property
    def compiled_share(self) -> float:
        """The share of the distribution's bytes in compiled extension modules and libraries."""
        sizes = {path: _size(self.location / path) for path in self.files}
        total = sum(sizes.values())
        compiled = sum(size for path, size in sizes.items() if path.endswith(COMPILED_SUFFIXES))
        return compiled / total if total else 0.0

    @property
    def is_binary(self) -> bool:
        return self.compiled_share > BINARY_SHARE


def candidate_names(name: str) -> list[str]:
    return list(dict.fromkeys([name, f"torch_{name}", f"torch-{name}"]))


def find_distribution(name: str, python: str | None = None) -> Distribution:
    """The installed distribution `name` (also `torch_<name>`, `torch-<name>`)."""
    found = installed_distribution(name, python)
    if found is None:
        tried = ", ".join(candidate_names(name))
        raise InputError(f"{name}: no installed distribution named {tried} in {python or 'this interpreter'}")
    return found


def installed_distribution(name: str, python: str | None = None) -> Distribution | None:
    """`find_distribution`, or None when no such distribution is installed."""
    command = [python or _this_python(), "-I", "-c", _PROBE, *candidate_names(name)]
    try:
        result = subprocess.run(command, capture_output=True, timeout=PROBE_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise InputError(f"{python or 'python'}: cannot ask it for installed distributions ({error})") from None
    found = result.stdout.decode("utf-8", "replace").strip()
    if result.returncode != 0 or not found:
        return None
    data = json.loads(found.splitlines()[-1])
    return Distribution(data["name"], data["version"], Path(data["location"]), tuple(data["files"]))


@contextmanager
def materialised(dist: Distribution) -> Iterator[tuple[Path, Source]]:
    """A temporary tree holding the distribution's files that are not compiled, and its
    provenance; removed afterwards, also when interrupted."""
    scratch = Path(tempfile.mkdtemp(prefix="air-dist-"))
    root = scratch / dist.name  # the tree, and the backend, are named after the distribution
    try:
        for relative in dist.files:
            if relative.endswith(COMPILED_SUFFIXES) or ".." in Path(relative).parts or Path(relative).is_absolute():
                continue
            origin = dist.location / relative
            if origin.is_file() and not origin.is_symlink():
                target = root / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(origin, target)
        root.mkdir(exist_ok=True)
        kind = BINARY_DIST if dist.is_binary else "dist"
        yield root, Source(kind, f"{dist.name} {dist.version} ({dist.location})", version=dist.version)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _this_python() -> str:
    import sys

    return sys.executable
