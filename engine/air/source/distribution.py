"""An installed distribution as a tree to analyse: its files, copied out of site-packages.

The distribution is found with `importlib.metadata` in the site-packages of this interpreter or
another one (`--python PATH`). That interpreter is only asked where its site-packages are, started
with `-I -S` so that no `site` and no `.pth` file of its environment runs; the metadata is then
read here, from the `.dist-info` files. Nothing of the distribution is imported. Its text files are copied into a
temporary directory (so the index sees exactly them); compiled files are counted, and when they
make up most of the distribution it is a binary distribution, whose C/C++ rows cannot be
decided.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from air.errors import InputError
from air.results import BINARY_DIST, Source
from air.source.tree import TreeReader, Unsuitable

COMPILED_SUFFIXES = (".so", ".pyd", ".dll", ".dylib", ".a", ".lib")
BINARY_SHARE = 0.5
PROBE_TIMEOUT = 60
_SITE_DIRS_PROBE = r"""
import json, os, site, sys
bin_dir = os.path.dirname(os.path.abspath(sys.executable))
configs = [os.path.join(d, "pyvenv.cfg") for d in (bin_dir, os.path.dirname(bin_dir))]
config = next((c for c in configs if os.path.isfile(c)), None)
system = config is None
if config:
    with open(config, encoding="utf-8") as lines:
        settings = dict((k.strip().lower(), v.strip().lower()) for k, _, v in (l.partition("=") for l in lines))
    system = settings.get("include-system-site-packages") == "true"
found = site.getsitepackages([os.path.dirname(bin_dir)]) if config else []
print(json.dumps(found + (site.getsitepackages() if system else [])))
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


# PEP 508's names: the tree is named after one, so one that is a path would put it anywhere
DISTRIBUTION_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def candidate_names(name: str, prefixes: Sequence[str]) -> list[str]:
    """`name`, then `name` after each of the framework's package prefixes."""
    return list(dict.fromkeys([name, *(prefix + name for prefix in prefixes)]))


def find_distribution(name: str, prefixes: Sequence[str], python: str | None = None) -> Distribution:
    """The installed distribution `name`, or `<prefix><name>` for one of `prefixes`."""
    found = installed_distribution(name, prefixes, python)
    if found is None:
        tried = ", ".join(candidate_names(name, prefixes))
        raise InputError(f"{name}: no installed distribution named {tried} in {python or 'this interpreter'}")
    return found


def installed_distribution(name: str, prefixes: Sequence[str], python: str | None = None) -> Distribution | None:
    """`find_distribution`, or None when no such distribution is installed."""
    directories = site_directories(python or sys.executable)
    for candidate in candidate_names(name, prefixes):
        found = next(iter(metadata.distributions(name=candidate, path=directories)), None)
        if found is not None:
            named = found.metadata["Name"]
            if not isinstance(named, str) or not DISTRIBUTION_NAME.fullmatch(named):
                where = found.locate_file("")
                raise InputError(f"{candidate}: its metadata in {where} names no valid distribution: {named!r}")
            return Distribution(
                named,
                found.version,
                Path(str(found.locate_file(""))),
                tuple(str(file) for file in found.files or ()),
            )
    return None


def site_directories(python: str) -> list[str]:
    """The site-packages directories of the interpreter `python`, as its `site` would set them up
    (a virtual environment's, and the system's when the environment includes them). Asked with
    `-I -S`: the interpreter starts without `site`, so no `.pth` file of that environment runs."""
    command = [python, "-I", "-S", "-c", _SITE_DIRS_PROBE]
    try:
        result = subprocess.run(command, capture_output=True, timeout=PROBE_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise InputError(f"{python}: cannot ask it for its site-packages ({error})") from None
    try:
        directories = json.loads(result.stdout.decode("utf-8", "replace").strip().splitlines()[-1])
    except (IndexError, ValueError):
        directories = None
    if result.returncode != 0 or not isinstance(directories, list):
        raise InputError(f"{python}: not a Python interpreter that can list its site-packages")
    return [directory for directory in directories if isinstance(directory, str)]


@contextmanager
def materialised(dist: Distribution) -> Iterator[tuple[Path, Source]]:
    """A temporary tree holding the distribution's files that are not compiled, and its
    provenance; removed afterwards, also when interrupted."""
    scratch = Path(tempfile.mkdtemp(prefix="air-dist-"))
    root = scratch / dist.name  # the tree, and the backend, are named after the distribution
    site_packages = TreeReader(dist.location)  # no listed file is read from outside it
    try:
        for relative in dist.files:
            if relative.endswith(COMPILED_SUFFIXES) or ".." in Path(relative).parts or Path(relative).is_absolute():
                continue
            try:
                descriptor, _status = site_packages.open(relative)
            except Unsuitable:
                continue
            target = root / relative
            with open(descriptor, "rb") as origin:
                target.parent.mkdir(parents=True, exist_ok=True)
                with open(target, "wb") as copy:
                    shutil.copyfileobj(origin, copy)
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
