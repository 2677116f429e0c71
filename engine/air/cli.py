"""The `air` command line.

Exit codes: 0 done; 1 readiness below --fail-under (check) or a regression (diff --fail-on-regression);
2 usage, pack or input error; 3 internal error; 130 interrupted (SIGINT, Ctrl-C); 143 terminated (SIGTERM).
Everything printed passes through `air.printable`, so text from the analysed tree (file and
package names) cannot carry terminal controls. Each command imports the stages it runs when it
runs: a check the result cache answers loads no evidence kind and no pack.
"""

from __future__ import annotations

import gc
import json
import os
import re
import shutil
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from air import __version__
from air.errors import (
    EXIT_BELOW_THRESHOLD,
    EXIT_INTERNAL,
    EXIT_USAGE,
    AirError,
    InputError,
    interrupt_behind,
    interruption,
)
from air.index.files import DEFAULT_EXCLUDES, IndexOptions
from air.pack.shipped import (
    VERSION_OPTION,
    env_option_names,
    framework_dir,
    framework_package_prefixes,
    pack_framework,
    release_option_names,
    shipped_packs,
    version_option_names,
)
from air.printable import printable
from air.progress import Progress
from air.report.badge import render_badge
from air.report.html import render_html
from air.report.json_report import render_json
from air.report.junit import render_junit
from air.report.links import evidence_links
from air.report.markdown import render_markdown
from air.report.output import is_standard_output, write_atomic
from air.report.sarif import render_sarif
from air.report.terminal import fail_under_line, render_summary
from air.resources import SCHEMA_FILES
from air.results import Backend, Report, Source
from air.run import check_tree
from air.runtime import DEFAULT_BUDGET, DEFAULT_OPS_BUDGET, MAX_OPS_BUDGET, RuntimeOptions
from air.source.locate import KnownBackend, Located, is_bare_name, locate, path_exists
from air.versions import is_release

if TYPE_CHECKING:
    from air.packtest import FixtureResult

RENDERERS: dict[str, tuple[Callable[..., str], str]] = {  # each takes the report (and EvidenceLinks if linked)
    "markdown": (render_markdown, ".md"),
    "json": (render_json, ".json"),
    "sarif": (render_sarif, ".sarif"),
    "junit": (render_junit, ".junit.xml"),
    "badge": (render_badge, ".badge.json"),
    "html": (render_html, ".html"),
}
DEFAULT_PACK = "pytorch-2.x"
EXPLAIN_FORMATS = ("text", "markdown", "json")
LINKED_FORMATS = ("markdown", "html")  # whose citations link into the tree or to its host
DEFAULT_OUTPUT_DIR = "air-report"
SHORT_COMMIT = 12


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="air")
def cli() -> None:
    """air: how completely, and how provably, a hardware backend integrates with a framework."""


@cli.command("check")
@click.argument("target", required=False)
@click.option(
    "--dist",
    "dist_name",
    default=None,
    help="Analyse an installed distribution instead (NAME, or NAME after a package prefix of the framework).",
)
@click.option(
    "--python",
    "python",
    default=None,
    help="The interpreter whose distributions --dist searches, and where --runtime runs its probes (default: air's own).",
)
@click.option(
    "--sdist",
    "sdist_name",
    default=None,
    help="Analyse the newest source distribution of NAME on pip's package index, unbuilt.",
)
@click.option(
    "--pack", "pack_name", default=DEFAULT_PACK, show_default=True, help="A shipped pack's name or a pack directory."
)
@click.option(
    "--format",
    "formats",
    multiple=True,
    type=click.Choice(sorted(RENDERERS)),
    help="Report format; repeat for several, each paired with an --output.",
)
@click.option(
    "--output",
    "outputs",
    multiple=True,
    type=click.Path(path_type=Path),
    help="File for the matching --format ('-' for standard output).",
)
@click.option(
    "--fail-under", type=click.FloatRange(0, 100), default=None, help="Exit 1 when readiness is below this percentage."
)
@click.option("--exclude", "excludes", multiple=True, help="Extra glob of files to leave out (repeatable).")
@click.option(
    "--include-vendored", is_flag=True, help="Also read every vendored directory (third_party/, ...) and build output."
)
@click.option("--ref", default=None, help="Branch, tag or commit of a git URL (same as TARGET@REF).")
@click.option("--subdir", default=None, help="Analyse one folder of the repository; provenance stays the repository's.")
@click.option(
    *version_option_names(),
    "framework_version",
    default=None,
    help="The framework release the backend targets (overrides its pins); rows for other releases are N/A.",
)
@click.option("--no-cache", is_flag=True, help="Check afresh, without reading or writing the result cache.")
@click.option(
    "--runtime", is_flag=True, help="Also run the pack's probes against the installed backend (runs its code)."
)
@click.option("--device", default=None, help="With --runtime: the device to probe (default: the one the source names).")
@click.option(
    "--import",
    "module",
    default=None,
    help="With --runtime: the module that loads the backend (default: its package, when it imports).",
)
@click.option(
    "--runtime-timeout",
    type=click.FloatRange(min=1),
    default=DEFAULT_BUDGET,
    show_default=True,
    help="With --runtime: seconds for the whole probe suite; probes left when it runs out are skipped.",
)
@click.option("--ops", "ops", default=None, help="With --runtime: the operators to sweep (a glob of their names).")
@click.option(
    "--ops-budget",
    type=click.FloatRange(min=1, max=MAX_OPS_BUDGET),
    default=DEFAULT_OPS_BUDGET,
    show_default=True,
    help="With --runtime: seconds for the sweep of the operators; those left are reported as not run.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress on standard error.")
def check_command(
    target: str | None,
    dist_name: str | None,
    python: str | None,
    sdist_name: str | None,
    pack_name: str,
    formats: tuple[str, ...],
    outputs: tuple[Path, ...],
    fail_under: float | None,
    excludes: tuple[str, ...],
    include_vendored: bool,
    ref: str | None,
    subdir: str | None,
    framework_version: str | None,
    no_cache: bool,
    runtime: bool,
    device: str | None,
    module: str | None,
    runtime_timeout: float,
    ops: str | None,
    ops_budget: float,
    quiet: bool,
) -> None:
    """Evaluate the backend at TARGET (a directory, a git URL with an optional @REF, or the name of
    a known backend) against a rule pack and write its readiness report."""
    if sum(given is not None for given in (target, dist_name, sdist_name)) != 1:
        raise click.UsageError("give one of TARGET, --dist NAME or --sdist NAME")
    if python is not None and dist_name is None and not runtime:
        raise click.UsageError("--python applies only with --dist or --runtime")
    if not runtime and (device is not None or module is not None or ops is not None):
        raise click.UsageError("--device, --import and --ops apply only with --runtime")
    if target is not None and path_exists(target) and not Path(target).is_dir():
        raise InputError(f"{target}: not a directory")
    if outputs and len(outputs) != len(formats):
        raise click.UsageError("give one --output per --format")
    if not outputs and Path(DEFAULT_OUTPUT_DIR).is_symlink():
        raise InputError(f"{DEFAULT_OUTPUT_DIR}: a symbolic link, not a directory; remove it or give --output")
    progress = None if quiet else Progress(sys.stderr, bar=sys.stderr.isatty())
    options = IndexOptions(
        excludes=(() if include_vendored else DEFAULT_EXCLUDES) + excludes, include_vendored=include_vendored
    )
    # Syntax trees hold no cycles; collecting over them costs more than it frees (torch_npu, cold,
    # best of five: 2.56 s without collection, 2.95 s with it).
    gc.disable()
    if framework_version is not None and not is_release(framework_version):
        raise click.BadParameter(f"not a release number: {framework_version!r}", param_hint=VERSION_OPTION)
    probing = (
        RuntimeOptions(_interpreter(python), device, module, runtime_timeout, ops, ops_budget) if runtime else None
    )
    try:
        with _located(target, dist_name, sdist_name, python, ref, subdir, pack_name, progress) as located:
            report = _checked(located, pack_name, options, progress, framework_version, no_cache, probing)
            tree = located.root
    finally:
        if progress:
            progress.finish()
    targets = list(zip(formats, outputs)) if outputs else _default_targets(formats, report.backend)
    for fmt, destination in targets:
        render, _suffix = RENDERERS[fmt]
        if fmt in LINKED_FORMATS:
            folder = Path.cwd() if is_standard_output(destination) else destination.parent
            text = render(report, evidence_links(report.backend.source, tree, folder))
        else:
            text = render(report)
        written = write_atomic(destination, text)
        if written and not quiet:
            _say(f"air: wrote {written}", err=True)
    if not quiet and not any(is_standard_output(t) for _f, t in targets):
        _print_summary(report)
    if fail_under is not None and report.readiness < fail_under:
        click.echo(fail_under_line(report, fail_under), err=True)
        sys.exit(EXIT_BELOW_THRESHOLD)


def _print_summary(report: Report) -> None:
    """The summary box, coloured on a terminal (unless NO_COLOR is set), framed in ASCII where
    standard output cannot encode the box characters."""
    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    encoding = (getattr(sys.stdout, "encoding", None) or "ascii").lower().replace("-", "")
    click.echo(render_summary(report, colour=colour, unicode=encoding == "utf8"), nl=False, color=colour)


@contextmanager
def _located(
    target: str | None,
    dist_name: str | None,
    sdist_name: str | None,
    python: str | None,
    ref: str | None,
    subdir: str | None,
    pack_name: str,
    progress,
) -> Iterator[Located]:
    """The tree to analyse: an installed distribution's files or an unpacked sdist (both removed
    afterwards), or TARGET. The modules that find either are imported only for the inputs that need them."""
    if sdist_name is not None:
        from air.source.sdist import unpacked_sdist

        with unpacked_sdist(sdist_name) as (root, source):
            yield Located.known(root, source)
        return
    framework = pack_framework(pack_name)
    prefixes = framework_package_prefixes(framework)
    bare = target if target is not None and is_bare_name(target) else None  # perhaps a distribution's name
    if dist_name is not None or bare is not None:
        from air.source.distribution import candidate_names, find_distribution, installed_distribution, materialised

        dist = find_distribution(dist_name, prefixes, python) if dist_name is not None else None
        if dist is None and bare is not None and not path_exists(bare):
            dist = installed_distribution(bare, prefixes)
            if dist is not None and progress:
                progress(f"{bare}: the installed distribution {dist.name} {dist.version}")
        if dist is not None:
            if dist.is_binary and progress:
                progress(
                    f"{dist.name} {dist.version} is mostly compiled code: rows whose evidence is all C/C++ are unknown"
                )
            with materialised(dist) as (root, source):
                yield Located.known(root, source)
            return
    assert target is not None  # neither --dist nor --sdist was given
    tried = f"not an installed distribution ({', '.join(candidate_names(bare, prefixes))})" if bare else ""
    yield locate(target, ref, progress, partial(_known_backends, framework), subdir, tried)


def _known_backends(framework: str) -> tuple[KnownBackend, ...]:
    """The framework's known backends, loaded only for a target that may name one."""
    from air.pack.framework import known_backends

    return known_backends(framework_dir(framework))


def _checked(
    located: Located,
    pack_name: str,
    options: IndexOptions,
    progress,
    framework_version: str | None,
    no_cache: bool,
    runtime: RuntimeOptions | None,
) -> Report:
    return check_tree(
        located.root,
        pack_name,
        options,
        progress,
        located.provenance,
        framework_version,
        use_cache=not no_cache,
        runtime=runtime,
        watch=progress.advance if progress else None,
    )


def _interpreter(python: str | None) -> str:
    """The interpreter --runtime probes: `python` as a path or a command on PATH, else this one."""
    if python is None:
        return sys.executable
    found = shutil.which(python)
    if found is None:
        raise InputError(f"--python {python}: no such interpreter")
    return found


def _default_targets(formats: tuple[str, ...], backend: Backend) -> list[tuple[str, Path]]:
    """air-report/<backend>.md and .json; `<backend>@<ref>` when the code came from a commit, so
    that checks of two refs of one repository never overwrite each other's reports."""
    stem = _file_name(backend.name) or "backend"
    ref = source_ref(backend.source)
    if ref:
        stem = f"{stem}@{_file_name(ref)}"
    return [(fmt, Path(DEFAULT_OUTPUT_DIR) / f"{stem}{RENDERERS[fmt][1]}") for fmt in formats or ("markdown", "json")]


def _file_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")


def source_ref(source: Source) -> str | None:
    """The tag the commit carries (`git describe` names it exactly), else the short commit;
    `-dirty` when tracked files differ from it. None when the code came from no commit."""
    if source.commit is None:
        return None
    described = (source.describe or "").removesuffix("-dirty")
    exact_tag = described and not re.search(r"-\d+-g[0-9a-f]+$", described) and not source.commit.startswith(described)
    ref = described if exact_tag else source.commit[:SHORT_COMMIT]
    return f"{ref}-dirty" if source.dirty else ref


def _say(line: str, err: bool = False) -> None:
    click.echo(printable(line), err=err)


@cli.command("diff")
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(("markdown", "json")), default="markdown", show_default=True)
@click.option(
    "--output", type=click.Path(path_type=Path), default=Path("-"), help="File to write ('-': standard output)."
)
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when readiness fell or a row lost points.")
def diff_command(old: Path, new: Path, fmt: str, output: Path, fail_on_regression: bool) -> None:
    """What changed between two JSON reports of one backend: rows, readiness, findings, operators."""
    from air.report.diff import diff_reports, render_diff_json, render_diff_markdown
    from air.report.json_report import load_report

    changes = diff_reports(load_report(old), load_report(new))
    write_atomic(output, (render_diff_json if fmt == "json" else render_diff_markdown)(changes))
    if fail_on_regression and changes.regressed:
        readiness = changes.readiness
        click.echo(
            f"air: regression: readiness {readiness[0]:.1f} % -> {readiness[1]:.1f} %, "
            f"{sum(1 for change in changes.rows if change.delta < 0)} rows lost points",
            err=True,
        )
        sys.exit(EXIT_BELOW_THRESHOLD)


@cli.command("compare")
@click.argument("reports", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(("markdown", "html", "json")), default="markdown", show_default=True)
@click.option(
    "--output", type=click.Path(path_type=Path), default=Path("-"), help="File to write ('-': standard output)."
)
def compare_command(reports: tuple[Path, ...], fmt: str, output: Path) -> None:
    """Backends side by side from their JSON reports: readiness, sections and the rows that differ."""
    from air.report import compare
    from air.report.json_report import load_report

    if len(reports) < 2:
        raise click.UsageError("give two reports or more")
    render = {
        "markdown": compare.render_comparison_markdown,
        "html": compare.render_comparison_html,
        "json": compare.render_comparison_json,
    }[fmt]
    write_atomic(output, render(compare.compare_reports([load_report(path) for path in reports])))


@cli.command("explain")
@click.argument("row")
@click.option(
    "--pack", "pack_name", default=DEFAULT_PACK, show_default=True, help="A shipped pack's name or a pack directory."
)
@click.option("--format", "fmt", type=click.Choice(EXPLAIN_FORMATS), default="text", show_default=True)
def explain_command(row: str, pack_name: str, fmt: str) -> None:
    """What ROW (an id or a checklist item) checks, why it matters, how it is detected and fixed."""
    from air.pack.load import load_pack
    from air.report.explain import explanation, find_row, render_explanation

    pack = load_pack(pack_name)
    found = find_row(pack, row)
    if found is None:
        raise InputError(f"{row}: no row of pack {pack.id} has that id or item; `air rules` lists them")
    click.echo(printable_lines(render_explanation(explanation(pack, found), fmt)), nl=False)


@cli.command("rules")
@click.option(
    "--pack", "pack_name", default=DEFAULT_PACK, show_default=True, help="A shipped pack's name or a pack directory."
)
@click.option("--section", default=None, help="Only the rows of this section (its id or number).")
@click.option("--priority", type=click.IntRange(1, 3), default=None, help="Only the rows of this priority.")
@click.option("--path", "path", default=None, help="Only the rows that apply on this integration path.")
@click.option("--format", "fmt", type=click.Choice(EXPLAIN_FORMATS), default="text", show_default=True)
def rules_command(pack_name: str, section: str | None, priority: int | None, path: str | None, fmt: str) -> None:
    """List a pack's rows: item, id, priority, paths and title."""
    from air.pack.load import load_pack
    from air.report.explain import render_rules, select_rows

    pack = load_pack(pack_name)
    known_paths = {spec.id for spec in pack.framework.paths}
    if path is not None and path not in known_paths:
        raise click.BadParameter(f"{path!r}; the pack's paths: {', '.join(sorted(known_paths))}", param_hint="--path")
    rows = select_rows(pack, section, priority, path)
    if not rows and section is not None:
        raise InputError(f"--section {section}: no rows of pack {pack.id} in such a section")
    click.echo(printable_lines(render_rules(rows, fmt)), nl=False)


def printable_lines(text: str) -> str:
    """`text` made safe to print line by line (a pack's prose is data, like a tree's)."""
    return "".join(printable(line) + "\n" for line in text.splitlines())


@cli.command("docs")
@click.argument("pack_name", default=DEFAULT_PACK)
@click.option(
    "-o", "--output", "directory", type=click.Path(path_type=Path), required=True, help="The folder to write."
)
def docs_command(pack_name: str, directory: Path) -> None:
    """Write a pack's reference: a Markdown page per row and an index."""
    from air.pack.load import load_pack
    from air.report.explain import render_docs

    pages = render_docs(load_pack(pack_name))
    for name, text in sorted(pages.items()):
        write_atomic(directory / name, text)
    _say(f"air: wrote {len(pages)} pages to {directory}", err=True)


@cli.group("pack")
def pack_group() -> None:
    """Inspect and validate rule packs."""


@pack_group.command("list")
def pack_list() -> None:
    """List the shipped packs."""
    from air.pack.load import load_pack

    for name in shipped_packs():
        pack = load_pack(name)
        fields = (pack.id, pack.version, f"{len(pack.rows)} rows", pack.framework.name)
        click.echo("\t".join(map(printable, fields)))


@pack_group.command("kinds")
def pack_kinds() -> None:
    """List the evidence kinds a row's clauses may use, each with what it finds (markdown)."""
    from air.evidence import kind_table

    click.echo(kind_table(), nl=False)


@pack_group.command("schema")
@click.argument("name", type=click.Choice(SCHEMA_FILES))
def pack_schema(name: str) -> None:
    """Print a JSON schema air validates with, the row schema completed with every evidence kind."""
    from air.pack.schemas import schema

    click.echo(json.dumps(schema(name), indent=2))


@pack_group.command("validate")
@click.argument("pack_name")
def pack_validate(pack_name: str) -> None:
    """Load and validate a pack (name or directory); report the first problem and exit 2."""
    from air.pack.load import load_pack

    pack = load_pack(pack_name)
    encoded = sum(1 for row in pack.rows if row.encoded)
    _say(f"{pack.id} {pack.version}: valid, {len(pack.rows)} rows ({encoded} encoded), digest {pack.digest}")


@pack_group.command("diff")
@click.argument("old")
@click.argument("new", required=False)
@click.option(
    *release_option_names(),
    "releases",
    nargs=2,
    metavar="OLD NEW",
    help="What the pack (one argument) says differently for two releases of its framework.",
)
@click.option("--format", "fmt", type=click.Choice(("markdown", "json")), default="markdown", show_default=True)
@click.option(
    "--against",
    "against",
    multiple=True,
    type=click.Path(path_type=Path),
    help="A backend to check with both (repeatable).",
)
@click.option("--changelog", is_flag=True, help="Print the CHANGELOG.md entry for the change instead.")
def pack_diff(
    old: str, new: str | None, releases: tuple[str, str] | None, fmt: str, against: tuple[Path, ...], changelog: bool
) -> None:
    """What changed between two packs (directories, NAME@VERSION or NAME@GIT-REF) and the version
    bump it requires; exit 1 when NEW's own bump is smaller. With --releases (--torch), what one
    pack says differently for two releases of its framework."""
    from air.pack.diff import changelog_entry, diff_packs, read_pack, render_pack_diff
    from air.pack.revisions import pack_at

    if releases:
        if new is not None or against or changelog:
            raise click.UsageError(
                "--releases compares one pack across two releases: give one pack, without --against or --changelog"
            )
        _diff_releases(old, releases, fmt)
        return
    if new is None:
        raise click.UsageError("pack diff needs two packs, OLD and NEW (or one pack with --releases)")

    with pack_at(old) as old_dir, pack_at(new) as new_dir:
        changes = diff_packs(read_pack(old_dir), read_pack(new_dir))
        text = changelog_entry(changes) if changelog else render_pack_diff(changes, fmt)
        if against and not changelog:
            text += "".join(_checked_with_both(path, old_dir, new_dir, fmt) for path in against)
    click.echo(text, nl=False)
    if changes.under_bumped:
        _say(
            f"air: {changes.new}: the change needs a {changes.required} bump, the version shows a {changes.declared} one",
            err=True,
        )
        sys.exit(EXIT_BELOW_THRESHOLD)


def _diff_releases(name: str, releases: tuple[str, str], fmt: str) -> None:
    from air.pack.load import load_pack
    from air.pack.release_diff import diff_releases, render_release_diff
    from air.pack.revisions import pack_at

    with pack_at(name) as directory:
        click.echo(render_release_diff(diff_releases(load_pack(str(directory)), *releases), fmt), nl=False)


def _checked_with_both(path: Path, old_dir: Path, new_dir: Path, fmt: str) -> str:
    """The backend at `path` checked with both packs: the readiness delta and each row whose
    points change."""
    from air.report.diff import diff_reports

    if not path.is_dir():
        raise InputError(f"--against {path}: not a directory")
    options = IndexOptions(excludes=DEFAULT_EXCLUDES)
    changes = diff_reports(
        check_tree(path, str(old_dir), options, use_cache=False),
        check_tree(path, str(new_dir), options, use_cache=False),
    )
    moved = [change for change in changes.rows if change.before != change.after]
    (before, after) = changes.readiness
    if fmt == "json":
        data = {
            "backend": str(path),
            "readiness": {"old": before, "new": after},
            "rows": [
                {"id": change.id, "old": _points(change.before), "new": _points(change.after)} for change in moved
            ],
        }
        return json.dumps(data, indent=2, sort_keys=True) + "\n"
    lines = [
        "",
        f"## Checked: {printable(str(path))}",
        "",
        f"Readiness {before:.1f} % → {after:.1f} % ({after - before:+.1f} pp).",
    ]
    lines += [f"- {change.item} `{change.id}`: {change.before} → {change.after}" for change in moved]
    return "\n".join(lines) + "\n"


def _points(label: str) -> int | None:
    """The points a score label shows; None for N/A, unknown or a row that is absent."""
    return int(label) if label.isdigit() else None


@pack_group.command("new")
@click.argument("name")
@click.option("--extends", "parent", default=DEFAULT_PACK, show_default=True, help="The pack it extends.")
@click.option(
    "-o", "--output", "directory", type=click.Path(path_type=Path), default=Path("."), help="Where to create it."
)
def pack_new(name: str, parent: str, directory: Path) -> None:
    """Create a vendor pack NAME that extends a pack: a row, an override, fixtures and a README."""
    from air.pack.load import load_pack
    from air.pack.scaffold import scaffold_pack

    created = scaffold_pack(name, load_pack(parent), directory)
    _say(f"air: created {created}; `air pack test {created}` checks it", err=True)


@pack_group.command("lint")
@click.argument("pack_name", default=DEFAULT_PACK)
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
@click.option(
    "--baseline",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="A file of known warnings (one per line, as printed): those are shown, but never fail.",
)
def pack_lint(pack_name: str, strict: bool, baseline: Path | None) -> None:
    """Check a pack's house style; exit 1 on an error, or with --strict on a new warning."""
    from air.pack.lint import lint_pack
    from air.pack.load import load_pack

    known = set()
    if baseline is not None:
        try:
            known = {line.strip() for line in baseline.read_text(encoding="utf-8").splitlines() if line.strip()}
        except OSError as error:
            raise InputError(f"--baseline {baseline}: {error.strerror or error}") from None
    problems = lint_pack(load_pack(pack_name))
    failing = [p for p in problems if p.level == "error" or (strict and str(p) not in known)]
    for problem in problems:
        _say(f"{problem}{' (known)' if str(problem) in known else ''}")
    _say(f"{len(problems)} problems, {len(failing)} failing")
    if failing:
        sys.exit(EXIT_BELOW_THRESHOLD)


@pack_group.command("verify-apis")
@click.argument("pack_name", default=DEFAULT_PACK)
@click.option(
    *env_option_names(),
    "python",
    default=None,
    help="The interpreter of the installation to check against (it imports the framework there).",
)
@click.option(
    "--wheel",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A wheel of the framework to check against instead, of any platform: read, never installed or run.",
)
@click.option("--format", "fmt", type=click.Choice(("markdown", "json")), default="markdown", show_default=True)
def pack_verify_apis(pack_name: str, python: str | None, wheel: Path | None, fmt: str) -> None:
    """Look up every framework API the pack names in an installation (or a wheel), and report
    those it lacks."""
    from air.pack.load import load_pack
    from air.runtime.apis import render_api_report, verify_apis

    if (python is None) == (wheel is None):
        raise click.UsageError(f"give one of {env_option_names()[0]} PYTHON or --wheel WHEEL")
    pack = load_pack(pack_name)
    report = verify_apis(pack, python, wheel)
    click.echo(render_api_report(report, pack, fmt), nl=False)


@pack_group.command("test")
@click.argument("pack_name", default=DEFAULT_PACK)
@click.option("--fixture", "only", default=None, help="Run one fixture only (no check of untested rows).")
@click.option("--verbose", "-v", is_flag=True, help="Show every row a fixture checks, passed or not.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def pack_test(pack_name: str, only: str | None, verbose: bool, as_json: bool) -> None:
    """Check a pack against its fixture trees; exit 1 when an expectation fails or a row is untested."""
    from air.pack.load import load_pack
    from air.packtest import run_pack_tests

    pack = load_pack(pack_name)

    def show(result: FixtureResult) -> None:
        _say(f"{'ok  ' if result.passed else 'FAIL'} {result.name} ({len(result.checks)} rows)")
        for check in result.checks if verbose else ():
            verdict = "ok  " if check.passed else "FAIL"
            _say(f"     {verdict} {check.row} ({check.item}): expected {check.expected}, got {check.actual}")
        for failure in result.failures:
            _say(f"     {failure}")

    outcome = run_pack_tests(pack, only, progress=None if as_json else show)
    if only and not outcome.fixtures:
        raise InputError(f"no fixture named {only!r} in {pack.fixtures}")
    passed = sum(check.passed for fixture in outcome.fixtures for check in fixture.checks)
    failed = sum(len(fixture.failures) for fixture in outcome.fixtures) + len(outcome.untested)
    if as_json:
        data = {
            "pack": f"{pack.id} {pack.version}",
            "passed": passed,
            "failed": failed,
            "untested": outcome.untested,
            "fixtures": [
                {
                    "name": fixture.name,
                    "passed": fixture.passed,
                    "rows": [check.__dict__ | {"passed": check.passed} for check in fixture.checks],
                    "failures": fixture.failures,
                }
                for fixture in outcome.fixtures
            ],
        }
        click.echo(json.dumps(data, indent=2))
    else:
        for line in outcome.untested:
            _say(f"UNTESTED {line}")
        fixtures_failed = sum(not f.passed for f in outcome.fixtures)
        _say(
            f"{passed} passed, {failed} failed ({len(outcome.fixtures)} fixtures, {fixtures_failed} failed; "
            f"{len(outcome.untested)} rows untested)"
        )
    if not outcome.passed:
        sys.exit(EXIT_BELOW_THRESHOLD)


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort as abort:  # click's form of an interrupt (and of the end of input)
        _interrupted(abort.__cause__)
    except click.ClickException as error:
        error.show()
        sys.exit(EXIT_USAGE)
    except AirError as error:
        _say(f"air: error: {error}", err=True)
        sys.exit(error.exit_code)
    except KeyboardInterrupt as interrupt:
        _interrupted(interrupt)
    except Exception as error:  # the last line of defence: one line, never a traceback
        behind = interrupt_behind(error)
        if behind is not None:
            _interrupted(behind)
        if os.environ.get("AIR_DEBUG"):
            traceback.print_exc()
        _say(f"air: internal error: {type(error).__name__}: {error} (set AIR_DEBUG=1 for details)", err=True)
        sys.exit(EXIT_INTERNAL)


def _interrupted(cause: BaseException | None) -> NoReturn:
    message, code = interruption(cause)
    click.echo(f"air: {message}", err=True)
    sys.exit(code)
