"""`semgrep`: semgrep rules, all clauses of a check batched into one semgrep run.

semgrep is an optional extra (`pip install 'air[semgrep]'`). Without it, semgrep clauses
are undecided. The prefiltered files are copied into a scratch directory with an empty
`.semgrepignore`, because semgrep's built-in ignore list silently skips `test/` and `tests/`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import yaml

from air.evidence.base import Clause, Context, Hit, hit_at, in_clause_files

SUMMARY = "semgrep rules, all batched into one run per check (optional extra `air[semgrep]`)"
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["rule"],
    "properties": {
        "rule": {"type": "object", "required": ["languages"]},
        "capture": {"$ref": "#/$defs/captures"},
        "prefilter": {"type": "array", "items": {"type": "string", "minLength": 1}},
    },
}

LANGUAGE_SUFFIXES = {"python": ("python",), "cpp": ("cpp", "template"), "c": ("cpp",)}
SEPARATOR = "\x1f"
TIMEOUT_SECONDS = 600
NOT_INSTALLED = "semgrep is not installed (pip install 'air[semgrep]')"


class SemgrepUnavailable(Exception):
    pass


def literals(spec: dict) -> list[str]:
    return list(spec.get("prefilter", []))


def executable() -> str | None:
    """semgrep on PATH, or installed beside this interpreter (a virtual environment not activated)."""
    beside = Path(sys.executable).parent / "semgrep"
    return shutil.which("semgrep") or (str(beside) if beside.is_file() else None)


def run_batch(clauses: Sequence[Clause], context: Context) -> dict[tuple, list[Hit]]:
    """Evaluate every semgrep clause in one semgrep process; raise SemgrepUnavailable with why not."""
    command = executable()
    if command is None:
        raise SemgrepUnavailable(NOT_INSTALLED)
    rules, targets = [], {}
    for number, clause in enumerate(clauses):
        rule = dict(clause.spec["rule"])
        captures = clause.spec.get("capture", [])
        rule.update(id=f"r{number}", severity="INFO", message=SEPARATOR.join(f"${c}" for c in captures) or "hit")
        rules.append(rule)
        for language in rule.get("languages", []):
            for source in context.index.select(literals(clause.spec), languages=LANGUAGE_SUFFIXES.get(language, ())):
                if in_clause_files(source.path, clause):
                    targets[source.path] = source
    results: dict[tuple, list[Hit]] = {clause.key: [] for clause in clauses}
    if not targets:
        return results
    with tempfile.TemporaryDirectory(prefix="air-semgrep-") as scratch:
        root = Path(scratch) / "tree"
        for path, source in targets.items():
            destination = root / path
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_text(source.text, encoding="utf-8")
        (root / ".semgrepignore").write_text("", encoding="utf-8")
        config = Path(scratch) / "rules.yaml"
        config.write_text(yaml.safe_dump({"rules": rules}), encoding="utf-8")
        output = _run(command, config, root)
    by_id = {f"r{number}": clause for number, clause in enumerate(clauses)}
    seen = set()
    for result in output.get("results", []):
        rule_id = result.get("check_id", "").rsplit(".", 1)[-1]
        rule_clause = by_id.get(rule_id)
        path = result.get("path", "")
        path = os.path.relpath(path, root) if os.path.isabs(path) else path
        line = result.get("start", {}).get("line", 1)
        if rule_clause is None or path not in targets or (rule_id, path, line) in seen:
            continue
        seen.add((rule_id, path, line))
        values = result.get("extra", {}).get("message", "").split(SEPARATOR)
        captures = dict(zip(rule_clause.spec.get("capture", []), values))
        results[rule_clause.key].append(hit_at(targets[path], line, captures))
    return results


def _run(command: str, config: Path, root: Path) -> dict:
    env = {**os.environ, "SEMGREP_ENABLE_VERSION_CHECK": "0", "SEMGREP_SEND_METRICS": "off"}
    arguments = [
        command,
        "scan",
        "--json",
        "--metrics=off",
        "--disable-version-check",
        "--quiet",
        "--no-git-ignore",
        "--config",
        str(config),
        ".",
    ]
    try:
        completed = subprocess.run(
            arguments, cwd=root, capture_output=True, text=True, env=env, timeout=TIMEOUT_SECONDS
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SemgrepUnavailable(f"semgrep did not run: {error}") from None
    try:
        return json.loads(completed.stdout or "{}")
    except json.JSONDecodeError:
        first = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        raise SemgrepUnavailable(f"semgrep failed (exit {completed.returncode}): {first}") from None


def reads_only_cpp(spec: dict) -> bool:
    """Whether a clause of this spec reads C/C++ alone (and so tells nothing about a compiled distribution)."""
    return False
