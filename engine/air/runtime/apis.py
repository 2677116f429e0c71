"""`air pack verify-apis --torch-env PYTHON`: every framework API a pack names, looked for in an
installation, run as `api_check.py` in that installation's interpreter (it imports the
framework there, and reads its headers).

A name the installation lacks is an `alternative` when every clause naming it finds another of
its names (the spelling of another release, say), `missing` when a row that names it applies to
the installed release (its `framework_versions` admit it, or it declares none), and `expected`
when every such row is declared for other releases. A row declared for other releases whose
names are all present is `present outside its range`: its range may be narrower than the API's
life. A missing name is not always the pack's mistake: a clause may look for a backend's own
convention (a macro the OpenReg example defines) or another library's function; the report
lists it, and the pack's author decides.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from air.errors import InputError
from air.pack.apis import ApiUse, pack_apis
from air.pack.load import Pack
from air.runtime.wheel_apis import wheel_answer
from air.versions import satisfies

CHECKER = Path(__file__).with_name("api_check.py")
CHECK_TIMEOUT = 600  # seconds: importing the framework and reading its headers


@dataclass(frozen=True)
class ApiFinding:
    name: str
    kind: str
    verdict: str  # "missing", "expected" (its rows are declared for other releases), "alternative", "unchecked"
    rows: tuple[str, ...]
    why: str = ""  # for "unchecked": why the installation could not tell


@dataclass(frozen=True)
class ApiReport:
    version: str
    checked: int
    findings: tuple[ApiFinding, ...]
    outside_range: tuple[str, ...]  # rows declared for other releases whose names all exist


def verify_apis(pack: Pack, python: str | None = None, wheel: Path | None = None) -> ApiReport:
    """The pack's APIs looked up in the installation whose interpreter is `python`, or in the
    framework's `wheel`, read and not installed (see `air.runtime.wheel_apis`)."""
    uses = pack_apis(pack)
    package, headers = pack.framework.package, pack.framework.headers
    if package is None:
        raise InputError(f"framework {pack.framework.id} names no package to look the APIs up in")
    request = {
        "package": package,
        "headers": headers or "include",
        "python": [name for name, use in uses.items() if use.kind == "python"],
        "cpp": {
            kind: [name for name, use in uses.items() if use.kind == kind]
            for kind in ("cpp name", "cpp class", "cpp method")
        },
    }
    answer = wheel_answer(wheel, request) if wheel is not None else _checked(python or sys.executable, request)
    present = {**answer["python"], **{name: found for table in answer["cpp"].values() for name, found in table.items()}}
    version = answer["version"]
    ranges = {row.id: row.framework_versions for row in pack.rows}

    def applies(row_id: str) -> bool:
        return not ranges.get(row_id) or satisfies(version, ranges[row_id])

    findings = []
    for name, use in uses.items():
        found = present.get(name, True)
        if isinstance(found, str):
            findings.append(ApiFinding(name, use.kind, "unchecked", tuple(sorted(use.rows)), found))
            continue
        if found:
            continue
        if all(any(present.get(other) is True for other in group) for group in use.alternatives):
            verdict = "alternative"  # each clause that names it finds another of its names
        else:
            verdict = "missing" if any(applies(row_id) for row_id in use.rows) else "expected"
        findings.append(ApiFinding(name, use.kind, verdict, tuple(sorted(use.rows))))
    outside = tuple(
        sorted(
            row_id
            for row_id in ranges
            if not applies(row_id)
            and _names_of(row_id, uses)
            and all(present.get(n, True) is True for n in _names_of(row_id, uses))
        )
    )
    return ApiReport(version, len(uses), tuple(findings), outside)


def _names_of(row_id: str, uses: dict[str, ApiUse]) -> list[str]:
    return [name for name, use in uses.items() if row_id in use.rows]


def _checked(python: str, request: dict) -> dict:
    try:
        done = subprocess.run(
            [python, str(CHECKER)], input=json.dumps(request), capture_output=True, text=True, timeout=CHECK_TIMEOUT
        )
    except FileNotFoundError:
        raise InputError(f"{python}: no such interpreter") from None
    except subprocess.TimeoutExpired:
        raise InputError(f"{python}: the API check did not finish within {CHECK_TIMEOUT} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise InputError(f"{python}: the API check failed: {last}")
    try:
        answer = json.loads(done.stdout)
    except json.JSONDecodeError:
        answer = None
    if not isinstance(answer, dict) or not {"version", "python", "cpp"} <= set(answer):
        raise InputError(f"{python}: the API check gave no answer: is it a Python interpreter?")
    return answer


def render_api_report(report: ApiReport, pack: Pack, fmt: str) -> str:
    if fmt == "json":
        data = {
            "pack": f"{pack.id} {pack.version}",
            "version": report.version,
            "checked": report.checked,
            "findings": [finding.__dict__ | {"rows": list(finding.rows)} for finding in report.findings],
            "present_outside_range": list(report.outside_range),
        }
        return json.dumps(data, indent=2, sort_keys=True) + "\n"
    by_verdict = {
        verdict: [finding for finding in report.findings if finding.verdict == verdict]
        for verdict in ("missing", "expected", "alternative", "unchecked")
    }
    missing, expected, alternative, unchecked = by_verdict.values()
    lines = [
        f"# {pack.id} {pack.version} against {pack.framework.package} {report.version}",
        "",
        f"{report.checked} APIs checked: {len(missing)} missing, {len(expected)} absent as their rows' ranges say, "
        f"{len(alternative)} absent where another name of their clause is present, {len(unchecked)} not checked.",
    ]
    sections = (
        ("Missing", missing),
        ("Absent, as declared", expected),
        ("Absent, another name present", alternative),
        ("Not checked: what was read could not tell", unchecked),
    )
    for title, listed in sections:
        if listed:
            lines += ["", f"## {title}", ""]
            lines += [f"- `{f.name}` ({f.kind}): {', '.join(f.rows)}{f'; {f.why}' if f.why else ''}" for f in listed]
    if report.outside_range:
        lines += ["", "## Present outside the declared range", ""]
        lines += [f"- {row_id}: {pack.row(row_id).framework_versions}" for row_id in report.outside_range]
    return "\n".join(lines) + "\n"
