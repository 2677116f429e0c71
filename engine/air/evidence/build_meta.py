"""`build`: entry points and requirements declared in setup.py, pyproject.toml, setup.cfg, requirements."""

from __future__ import annotations

from fnmatch import fnmatchcase

from air.evidence.base import Clause, Context, Hit, hit_at, in_clause_files

SUMMARY = "entry points and requirements from build metadata"
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "oneOf": [{"required": ["entry_point"]}, {"required": ["requirement"]}],
    "properties": {"entry_point": {"type": "string"}, "requirement": {"type": "string"}},
}


def literals(spec: dict) -> list[str]:
    return []


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    spec = clause.spec
    hits = []
    for source, facts in context.index.build:
        if not in_clause_files(source.path, clause):
            continue
        if "entry_point" in spec:
            for entry in facts.entry_points:
                if fnmatchcase(entry.group, spec["entry_point"]):
                    captures = {"GROUP": entry.group, "NAME": entry.name, "TARGET": entry.target}
                    hits.append(hit_at(source, entry.line, captures))
        if "requirement" in spec:
            for requirement in facts.requirements:
                if fnmatchcase(requirement.name, spec["requirement"]):
                    captures = {"NAME": requirement.name, "SPEC": requirement.spec}
                    hits.append(hit_at(source, requirement.line, captures))
    return hits


def reads_only_cpp(spec: dict) -> bool:
    """Whether a clause of this spec reads C/C++ alone (and so tells nothing about a compiled distribution)."""
    return False
