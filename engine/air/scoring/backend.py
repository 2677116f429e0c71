"""The backend's identity: its name, version and targeted framework release, read from the build
metadata of its product distribution, with the files they came from."""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from fnmatch import fnmatchcase
from pathlib import Path

from air.index import CodeIndex
from air.index.build import normalized_name
from air.index.distributions import Distribution, distributions, encloses, holder
from air.index.model import BuildFacts, SourceFile
from air.index.python import module_name
from air.pack.framework import ReleaseDeclaration
from air.regex import PatternTimeout, compile_guarded, required_literals
from air.results import Backend, Source
from air.source.provenance import local_source
from air.source.tree import shown_path

Build = tuple[SourceFile, BuildFacts]


def describe_backend(
    index: CodeIndex,
    root: Path,
    framework_package: str | None,
    source: Source | None,
    framework_version: str | None = None,
    registering: tuple[str, ...] = (),
    declarations: tuple[ReleaseDeclaration, ...] = (),
) -> Backend:
    """The backend's name and version, from the build metadata of its product distribution (see
    `product_distribution`), and the framework release it pins, from the build files nearest
    that distribution, else the release its files declare (see `declared_release`). Without a
    distribution of its own, the backend is named after the package that registers the device,
    else the directory."""
    source = source or local_source(root)
    packages = registering_packages(index, registering, shown_path(root.resolve().name))
    found = distributions(index.build, index.files)
    product = product_distribution(found, registering, packages)
    pin = None
    if framework_version is None:
        package = (framework_package or "").lower()
        pin = framework_pin(index.build, package, product, found) or declared_release(index, declarations)
    return Backend(
        name=product.name if product else (packages[0] if packages else shown_path(root.resolve().name)),
        version=(product.facts.version if product else None) or source.version or _tagged_version(source),
        source=source,
        target_framework_version=framework_version or (pin[0] if pin else None),
        metadata_file=product.named_by if product else None,
        pin_file=pin[1] if pin else None,
    )


def registering_packages(index: CodeIndex, registering: tuple[str, ...], root_name: str) -> list[str]:
    """The top-level Python packages of the `registering` files, the one holding most first; of
    a tree whose root is a package (a checkout of the package's directory), the root's name."""
    found: Counter[str] = Counter()
    for path in registering:
        module = module_name(path, index.package_dirs)
        if module and ("." in module or path.endswith("__init__.py")):  # a lone script is no package
            found[root_name if "" in index.package_dirs else module.partition(".")[0]] += 1
    return sorted(found, key=lambda top: (-found[top], top))


def product_distribution(
    found: list[Distribution], registering: tuple[str, ...], packages: list[str]
) -> Distribution | None:
    """Of the distributions `found`, the one that is the backend's product. With `registering`
    files, only those that may register the device count, best first: one named after a
    package that registers it, then one that lists such a package, then one that lists no
    packages but encloses a registering file; a helper tool's build listing its own packages
    never counts. Among equals, the one holding the most product code, then the top-most."""
    ranked = [(rank, item) for item in found if (rank := _rank(item, registering, packages)) is not None]
    best = min(ranked, key=lambda pair: (pair[0], -pair[1].code_lines, pair[1].depth, pair[1].directory), default=None)
    return best[1] if best else None


def _rank(distribution: Distribution, registering: tuple[str, ...], packages: list[str]) -> int | None:
    if not registering:
        return 0
    declared = distribution.facts.packages
    if normalized_name(distribution.name) in {normalized_name(top) for top in packages}:
        return 0
    if declared is not None and packages:
        return 1 if any(_lists(declared, top) for top in packages) else None
    return 2 if any(distribution.encloses(path) for path in registering) else None


def _lists(declared: tuple[str, ...], package: str) -> bool:
    """Whether `declared` packages (or patterns of them, `pkg*`) hold the top-level `package`."""
    return any(fnmatchcase(package, pattern.partition(".")[0]) for pattern in declared)


def framework_pin(
    builds: list[Build], package: str, product: Distribution | None, found: list[Distribution]
) -> tuple[str, str] | None:
    """(spec, file) of the first requirement of the framework's `package` with a version
    specifier, in the product build files nearest the `product` distribution (see `_nearest`),
    or, without one, in the tree's, top level first."""
    if not package:
        return None
    for source, facts in _nearest(builds, product, found):
        for requirement in facts.requirements:
            if requirement.name == package and requirement.spec:
                return requirement.spec, source.path
    return None


def declared_release(index: CodeIndex, declarations: tuple[ReleaseDeclaration, ...]) -> tuple[str, str] | None:
    """(release, file) of the framework release that the first of `declarations` found in a
    file outside the tests names, the top-most file first; None when none is found, or when
    the strongest found name releases of different minor versions. A declaration may name the
    release through a shell variable the file sets (see `_release_named`)."""
    for declaration in declarations:
        pattern = compile_guarded(declaration.pattern)
        holding = index.select(required_literals(declaration.pattern), include_docs=True)  # install guides too
        found = []
        for source in sorted(holding, key=lambda source: (source.path.count("/"), source.path)):
            name = posixpath.basename(source.path)
            if source.role == "tests" or not any(fnmatchcase(name, glob) for glob in declaration.files):
                continue
            code = index.code_text(source)  # a commented-out install declares nothing
            try:
                named = [_release_named(match.group("VERSION"), code) for match in pattern.finditer(code)]
            except PatternTimeout:
                continue  # a file the pattern cannot read within its budget declares nothing
            found += [(release, source.path) for release in named if release]
        if found:
            release = found[0][0].split(".")[:2]
            return found[0] if all(version.split(".")[:2] == release for version, _path in found) else None
    return None


_RELEASE = re.compile(r"v?(\d+\.\d+(?:\.\d+)?)")
_VARIABLE = re.compile(r"\$\{?(?P<name>[A-Za-z_]\w*)(?::(?P<offset>\d+))?\}?")


def _release_named(value: str, text: str) -> str | None:
    """The release `value` names (`2.7.1`, `v2.7.1`), or that the variable it expands names:
    `$TAG`, `${TAG}` or `${TAG:1}` (from its second character on), set in `text` as `TAG=v2.7.1`,
    `export TAG=...` or, in a YAML environment, `TAG: ...`; the first setting counts."""
    variable = _VARIABLE.fullmatch(value)
    if variable is not None:
        name = variable["name"]
        setting = re.search(rf"(?m)^[ \t]*(?:export[ \t]+)?{name}[ \t]*(?:=|:[ \t])[ \t]*[\"']?([^\s\"'#;]+)", text)
        if setting is None:
            return None
        value = setting[1][int(variable["offset"] or 0) :]
    release = _RELEASE.fullmatch(value)
    return release[1] if release else None


def _nearest(builds: list[Build], product: Distribution | None, found: list[Distribution]) -> list[Build]:
    """The product build files that may pin the `product` distribution's framework: those it
    holds (its own first, then those below it that no nearer distribution of `found` holds),
    then those beside its ancestors, the nearest first. Another distribution's pins are not
    its own."""
    product_builds = [item for item in builds if item[0].role == "product"]  # an example's or a test's does not count
    top_first = sorted(product_builds, key=lambda item: (item[0].path.count("/"), item[0].path))
    if product is None:
        return top_first
    directories = [distribution.directory for distribution in found]
    held = [item for item in top_first if holder(directories, item[0].path) == product.directory]
    above = [item for item in top_first if _is_above(posixpath.dirname(item[0].path), product.directory)]
    return held + sorted(above, key=lambda item: -item[0].path.count("/"))  # stable: by path within a level


def _is_above(directory: str, below: str) -> bool:
    """Whether `directory` is an ancestor of the directory `below`."""
    return directory != below and encloses(directory, below + "/")


def _tagged_version(source: Source) -> str | None:
    """The tag `git describe` names, when the commit is tagged or descends from a tag."""
    described = re.match(r"^(.+?)(?:-\d+-g[0-9a-f]+)?(?:-dirty)?$", source.describe) if source.describe else None
    if described is None or re.fullmatch(r"[0-9a-f]{7,40}", described.group(1)):
        return None  # --always printed a bare commit: there is no tag
    return described.group(1)


def extended_packages(index: CodeIndex, prefixes: tuple[str, ...]) -> tuple[str, ...]:
    """The packages named with one of the framework's `prefixes` that the product imports or
    includes from but the tree does not hold: the backend a component of another one extends
    (an operator library's, a graph compiler's device package)."""
    words = sorted({prefix for prefix in prefixes if prefix.isidentifier()}, key=len, reverse=True)
    if not words:
        return ()
    package = "(?:" + "|".join(map(re.escape, words)) + r")\w+"
    uses = re.compile(
        rf"(?m)^[ \t]*(?:(?:import|from)[ \t]+(?P<imported>{package})\b|#[ \t]*include[ \t]*[<\"](?P<included>{package})/)"
    )
    found: set[str] = set()
    for source in index.files:
        if source.role == "product" and source.language in ("python", "cpp"):
            for match in uses.finditer(index.code_text(source)):
                found.add(match.group("imported") or match.group("included"))
    return tuple(sorted(found - index.product_packages))
