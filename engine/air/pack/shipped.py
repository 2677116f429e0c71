"""The shipped frameworks and packs, and what a check reads of them without loading them: a
pack's directory, framework and fingerprint, and a framework's settings that the index needs.
A check answered from the result cache reads nothing else of either."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import TypeGuard

import yaml

from air import __version__
from air.errors import InputError, PackError
from air.index.vendored import Vendoring
from air.resources import data_dir
from air.versions import is_range, satisfies
from air.yamldoc import COMPOSER, load_yaml, read_bounded

DEFAULT_FIXTURES = "fixtures"
FRAMEWORK_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")  # as the pack schema has it: never a path
VERSION_OPTION = "--framework-version"
RELEASES_OPTION = "--releases"
ENV_OPTION = "--framework-env"
VERSION_OPTION_ALIAS = re.compile(r"--[a-z][a-z0-9]*(?:-[a-z0-9]+)*-version")  # as the framework schema has it


def shipped_packs() -> list[str]:
    root = data_dir("rulepacks")
    return sorted(p.name for p in root.iterdir() if (p / "pack.yaml").is_file()) if root.is_dir() else []


def resolve_pack(name_or_dir: str) -> Path:
    """A pack directory from a path or a shipped pack's name; `NAME@VERSION` only when the pack
    has that version."""
    if _is_pack(Path(name_or_dir)):
        return Path(name_or_dir).resolve()
    name, at, version = name_or_dir.partition("@")
    directory = _shipped_pack(name) if not _is_pack(Path(name)) else Path(name).resolve()
    if at:
        actual = _unvalidated_version(directory)
        if actual != version:
            raise PackError(name_or_dir, f"pack {name} here is version {actual}, not {version}")
    return directory


def _unvalidated_version(directory: Path) -> str:
    try:
        data = yaml.safe_load((directory / "pack.yaml").read_bytes())
    except (OSError, yaml.YAMLError):
        return "unreadable"
    return str(data.get("version")) if isinstance(data, dict) else "unknown"


def _shipped_pack(name: str) -> Path:
    shipped = data_dir("rulepacks") / name
    if "/" not in name and _is_pack(shipped):
        return shipped
    known = ", ".join(shipped_packs()) or "none"
    raise PackError(name, f"no such pack (a directory with pack.yaml, or one of the shipped packs: {known})")


def _is_pack(directory: Path) -> bool:
    try:
        return (directory / "pack.yaml").is_file()
    except OSError:  # a name too long to be a path, say
        return False


def pack_fingerprint(directory: Path) -> str:
    """A hash of everything a pack's evaluation depends on, read without loading the pack:
    its files (fixtures aside), those of the packs it extends, its framework's files, the
    schemas and air's version. Two checks with the same fingerprint score the same way."""
    digest = hashlib.sha256(__version__.encode())
    seen: set[Path] = set()
    pending = [directory]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        header = _raw_header(current)
        _hash_files(digest, current, skip=current / DEFAULT_FIXTURES)
        framework = header.get("framework")
        if is_framework_name(framework):
            _hash_files(digest, framework_dir(framework))
        if isinstance(header.get("extends"), str):
            try:
                pending.append(extended_pack(current, header["extends"]))
            except (PackError, Refused):  # loading the pack says what is wrong
                digest.update(b"unresolved:" + header["extends"].encode())
    _hash_files(digest, data_dir("schemas"))
    return digest.hexdigest()


def refuse_release_outside(directory: Path, release: str) -> None:
    """An input error when the pack in `directory` declares the framework releases it supports
    (`framework_versions`, read without loading the pack) and `release` is not one of them."""
    supported = _raw_header(directory).get("framework_versions")
    if isinstance(supported, str) and is_range(supported) and not satisfies(release, supported):
        raise InputError(f"release {release} is outside the ones pack {directory.name} supports ({supported})")


def pack_framework(name_or_dir: str) -> str:
    """The framework a pack names, read without loading the pack."""
    directory = resolve_pack(name_or_dir)
    framework = _raw_header(directory).get("framework")
    if not is_framework_name(framework):
        raise PackError(
            str(directory / "pack.yaml"), f"{framework!r} is not the name of a shipped framework", yaml_path="framework"
        )
    return framework


def _raw_header(directory: Path) -> dict:
    """pack.yaml as plain data, {} when it does not parse (loading the pack says why); a file
    that cannot be read, or is too large, is a PackError already."""
    path = directory / "pack.yaml"
    try:
        data = yaml.load(read_bounded(path, str(path)).decode("utf-8"), Loader=COMPOSER)
    except (UnicodeDecodeError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def _hash_files(digest, directory: Path, skip: Path | None = None) -> None:
    """The names and contents of the files in `directory` (but `skip`), leaving out links out of it."""
    home = os.path.realpath(directory)
    found = []
    for folder, folders, files in os.walk(directory):
        folders[:] = [name for name in folders if Path(folder, name) != skip]
        for name in files:
            path = Path(folder, name)
            if path.is_file() and (not path.is_symlink() or is_within(os.path.realpath(path), home)):
                found.append(path)
    for path in sorted(found):
        digest.update(str(path.relative_to(directory)).encode("utf-8", "surrogateescape") + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())


def is_framework_name(name: object) -> TypeGuard[str]:
    return isinstance(name, str) and FRAMEWORK_NAME.fullmatch(name) is not None


def framework_dir(name: str) -> Path:
    """The directory of the shipped framework `name`; a name that is a path is refused."""
    if not is_framework_name(name):
        raise PackError("framework", f"{name!r} is not the name of a shipped framework")
    return data_dir("frameworks") / name


def framework_vendoring(name: str) -> Vendoring:
    """The framework's rules for vendored code, read without loading the whole framework (a
    check answered from the cache needs nothing else of it); loading a pack validates them."""
    vendored = _unvalidated_setting(name, "vendored")
    return Vendoring.from_data(vendored) if isinstance(vendored, dict) else Vendoring()


def framework_package_prefixes(name: str) -> tuple[str, ...]:
    """The prefixes of the framework's backends' package names, read without loading the
    whole framework; loading a pack validates them."""
    prefixes = _unvalidated_setting(name, "package_prefixes")
    return tuple(prefix for prefix in prefixes if isinstance(prefix, str)) if isinstance(prefixes, list) else ()


def version_option_names() -> tuple[str, ...]:
    """The names of the option that gives the targeted framework release: VERSION_OPTION, and
    the alias each shipped framework gives it (`cli_alias`)."""
    aliases = [alias for alias in _shipped_settings("cli_alias") if isinstance(alias, str)]
    return tuple(dict.fromkeys([VERSION_OPTION, *filter(VERSION_OPTION_ALIAS.fullmatch, aliases)]))


def release_option_names() -> tuple[str, ...]:
    """The names of `pack diff`'s option that compares two framework releases: RELEASES_OPTION,
    and each framework version alias without `-version` (`--torch`)."""
    aliases = [name.removesuffix("-version") for name in version_option_names() if name != VERSION_OPTION]
    return tuple(dict.fromkeys([RELEASES_OPTION, *aliases]))


def env_option_names() -> tuple[str, ...]:
    """The names of the option that gives the interpreter of a framework installation:
    ENV_OPTION, and `--<package>-env` for each shipped framework's package (`--torch-env`)."""
    packages = [package for package in _shipped_settings("package") if isinstance(package, str)]
    return tuple(dict.fromkeys([ENV_OPTION, *(f"--{p}-env" for p in packages if re.fullmatch(r"[a-z][a-z0-9]*", p))]))


def _shipped_settings(key: str) -> Iterator[object]:
    """The setting `key` of each shipped framework; one whose files cannot be read gives none
    (loading its pack says why)."""
    for name in shipped_frameworks():
        try:
            yield _unvalidated_setting(name, key)
        except PackError:
            continue


def shipped_frameworks() -> list[str]:
    root = data_dir("frameworks")
    return sorted(p.name for p in root.iterdir() if (p / "framework.yaml").is_file()) if root.is_dir() else []


def _unvalidated_setting(name: str, key: str) -> object:
    """The value of the top-level `key` in the framework's files, None when none sets it; the
    files it includes are read only while framework.yaml does not set it."""
    return next((data[key] for data in _framework_documents(name) if isinstance(data, dict) and key in data), None)


def _framework_documents(name: str) -> Iterator[object]:
    directory = framework_dir(name)
    main = load_yaml(directory / "framework.yaml").data
    yield main
    for include in main.get("include", []) if isinstance(main, dict) else ():
        yield load_yaml(directory / include).data


class Refused(Exception):
    """A path a pack names that leads out of it."""


def extended_pack(directory: Path, extends: str) -> Path:
    """A pack inside `directory` or beside it (`../base`), links resolved; else a shipped pack."""
    written = PurePosixPath(extends)
    if written.is_absolute():
        raise Refused(f"{extends!r} is an absolute path; name a shipped pack or a pack beside this one (../NAME)")
    if ".." in written.parts and (written.parts[0] != ".." or len(written.parts) != 2 or written.name == ".."):
        raise Refused(f"{extends!r} climbs out of the directory holding this pack")
    home = os.path.realpath(directory)
    resolved = os.path.realpath(directory / extends)
    if os.path.dirname(resolved) != os.path.dirname(home) and not is_within(resolved, home):
        raise Refused(f"{extends!r} leads through a link out of the directory holding this pack")
    return Path(resolved) if _is_pack(Path(resolved)) else _shipped_pack(extends)


def is_within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(os.path.join(directory, ""))
