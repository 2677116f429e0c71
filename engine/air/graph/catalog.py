"""An operator catalog: which operators a framework release has, which need no backend kernel
and which belong to the core opset; and a pack's catalogs, one per release.

A catalog (generated from the framework's own operator definitions) says which operators
exist, which need no backend kernel and which belong to the core opset. An overload flagged
`composite` decomposes into other ops and needs none. One flagged `composite_explicit` has a
kernel served to every backend but written with other ops, often of its own family (the
functional form through its `out` form): it needs none only when every overload of its family
is flagged one way or the other.
"""

from __future__ import annotations

import glob
import json
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

from air.errors import PackError
from air.versions import is_release, parse_release, ranges_overlap

_KERNEL_FREE = frozenset({"composite", "composite_explicit"})


@dataclass(frozen=True)
class Catalog:
    ops: dict[str, frozenset[str]]  # overload name -> flags ("composite", "composite_explicit", "core")
    framework_version: str  # of the framework whose operator definitions the catalog was generated from
    variants: tuple[tuple[str, ...], ...] | None = None  # overloads sharing one signature; None: not known

    @classmethod
    def load(cls, path: Path) -> Catalog:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            ops = {name: frozenset(flags) for name, flags in data["ops"].items()}
            variants = data.get("variants")
            grouped = None if variants is None else tuple(tuple(str(name) for name in group) for group in variants)
            return cls(ops, str(data["framework_version"]), grouped)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise PackError(str(path), f"cannot read the operator catalog: {error}") from None

    def served(self, registered: Iterable[str], by_family: Iterable[str] = ()) -> Served:
        """What kernels registered for the operators `registered` serve (see `is_served`); those
        of `by_family` are bound to their operators by a name that tells only the family (a
        dispatch stub's)."""
        names, loose = set(registered), set(by_family)
        return Served(
            groups=frozenset(self._group(name) for name in names if name in self.ops),
            families=frozenset(family(name) for name in names | loose),
            whole_families=frozenset(
                family(name) for name in names | loose if name in loose or ("." not in name and name not in self.ops)
            ),
        )

    def is_served(self, name: str, served: Served) -> bool:
        """Whether the overload `name` has a kernel among `served`: one of its variants, the
        overloads that share its signature (its functional, in-place and out= forms: `max.dim`
        and `max.dim_max`, not `max.other`), has one; or its family was registered without an
        overload (an op list naming `eq`); or it is an explicit composite (written with other
        overloads, often of its own family: `randperm` runs through `randperm.generator_out`)
        and some overload of its family has one. A name the catalog does not know as an
        overload, and every name of a catalog without variants, needs only its family; a kernel
        registered under an overload the catalog does not know serves no other."""
        base = family(name)
        if base in served.whole_families:
            return True
        if self.variants is None or name not in self.ops:
            return base in served.families
        if self._group(name) in served.groups:
            return True
        return "composite_explicit" in self.ops[name] and base in served.families

    def variant_families(self, name: str) -> frozenset[str]:
        """The families of the overloads that share `name`'s signature: `normal_` shares it
        with `normal_functional`."""
        group = self._group(name)
        return frozenset({family(name), *(family(other) for other in self._members.get(group, ()))})

    def _group(self, name: str) -> str:
        """The first overload of `name`'s variants, the `_overrideable` suffix of a backend hook
        dropped (`convolution_overrideable` does the work of `convolution`)."""
        base, dot, overload = self._first_variant.get(name, name).partition(".")
        return base.removesuffix("_overrideable") + dot + overload

    @cached_property
    def _first_variant(self) -> dict[str, str]:
        return {name: group[0] for group in self.variants or () for name in group}

    @cached_property
    def _members(self) -> dict[str, tuple[str, ...]]:
        members: dict[str, list[str]] = {}
        for name in self.ops:
            members.setdefault(self._group(name), []).append(name)
        return {group: tuple(names) for group, names in members.items()}

    @cached_property
    def families(self) -> frozenset[str]:
        return frozenset(family(name) for name in self.ops)

    @cached_property
    def _families_needing_kernels(self) -> frozenset[str]:
        return frozenset(family(name) for name, flags in self.ops.items() if not flags & _KERNEL_FREE)

    def is_composite(self, name: str) -> bool:
        """Whether the overload `name` needs no backend kernel (see the module's docstring)."""
        flags = self.ops.get(name, frozenset())
        if "composite" in flags:
            return True
        return "composite_explicit" in flags and family(name) not in self._families_needing_kernels

    def knows(self, name: str) -> bool:
        return name in self.ops or family(name) in self.families

    @cached_property
    def core(self) -> tuple[str, ...]:
        return tuple(name for name in self.ops if "core" in self.ops[name] and not self.is_composite(name))


@dataclass(frozen=True)
class Served:
    """Operators with a kernel, as `Catalog.is_served` reads them."""

    groups: frozenset[str]  # variant groups with a kernel for one of their overloads
    families: frozenset[str]  # families with a kernel for one of their overloads
    whole_families: frozenset[str]  # families registered by name alone, without an overload


def family(name: str) -> str:
    """`add_.Tensor`, `add.out` and `add` are one family: `add`; so are `convolution` and
    `convolution_overrideable`, the variant out-of-tree backends implement."""
    base = name.split(".", 1)[0].removesuffix("_overrideable")
    return base.rstrip("_") or base


RELEASE_FIELD = "{release}"


@dataclass(frozen=True)
class Catalogs:
    """A pack's operator catalogs, each generated from one release of its framework: the files
    its `catalog` path names with a release number in place of `{release}`
    (`data/ops-{release}.json`), or one file for every release."""

    files: tuple[tuple[str, Path], ...]  # (release, file), oldest first; ("", file): one for every release

    @classmethod
    def find(cls, pack_dir: Path, pattern: str) -> Catalogs:
        if RELEASE_FIELD not in pattern:
            return cls((("", pack_dir / pattern),))
        directory, name = posixpath.split(pattern)
        prefix, _, suffix = name.partition(RELEASE_FIELD)
        found = []
        for path in (pack_dir / directory).glob(f"{glob.escape(prefix)}*{glob.escape(suffix)}"):
            release = path.name[len(prefix) : len(path.name) - len(suffix)]
            if is_release(release) and path.is_file():
                found.append((release, path))
        return cls(tuple(sorted(found, key=lambda item: parse_release(item[0]))))

    def choose(self, target: str | None) -> tuple[Path, str]:
        """The catalog to check a backend that targets `target` against (a release, or a range
        from its pins; None when it pins none), and why that one ("" when there is one catalog)."""
        if len(self.files) == 1 and not self.files[0][0]:
            return self.files[0][1], ""
        release, why = _chosen([release for release, _path in self.files], target)
        return dict(self.files)[release], why

    def catalog(self, target: str | None) -> Catalog:
        return _loaded(self.choose(target)[0])

    def knows(self, name: str) -> bool:
        """Whether some catalog knows the operator `name`, the newest asked first."""
        return any(_loaded(path).knows(name) for _release, path in reversed(self.files))


def _chosen(releases: list[str], target: str | None) -> tuple[str, str]:
    """Of `releases` (oldest first), the one whose catalog fits a backend that targets `target`,
    and why."""
    oldest, newest = releases[0], releases[-1]
    if target is None:
        return newest, "the newest the pack ships: the backend pins no release"
    if not is_release(target):  # the range its pins allow
        admitted = [release for release in releases if ranges_overlap(target, _series(release))]
        if admitted:
            return admitted[-1], f"the newest release the backend's pins ({target}) admit"
        earlier = [release for release in releases if ranges_overlap(target, f">={release}")]
        if earlier:
            return earlier[-1], f"the newest the pack ships before the releases the backend's pins ({target}) admit"
        return oldest, f"the oldest the pack ships: the backend's pins ({target}) admit none of its releases"
    wanted = parse_release(target)[:2]
    earlier = [release for release in releases if parse_release(release) <= wanted]
    if not earlier:
        return oldest, f"the oldest the pack ships: the backend targets {target}"
    if parse_release(earlier[-1]) == wanted:
        return earlier[-1], f"the release the backend targets ({target})"
    return earlier[-1], f"the newest the pack ships before {target}, which the backend targets"


def _series(release: str) -> str:
    """The range of a minor release's patch releases: 2.7 -> >=2.7,<2.8."""
    major, minor = parse_release(release)[:2]
    return f">={major}.{minor},<{major}.{minor + 1}"


@cache
def _loaded(path: Path) -> Catalog:
    return Catalog.load(path)
