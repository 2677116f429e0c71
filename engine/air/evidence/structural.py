"""`structural`: ast-grep patterns (C/C++ or Python), run in-process over prefiltered files.

Files are parsed in the check's executor when there are enough of them to pay for it.
"""

from __future__ import annotations

import re

from air.evidence.base import Clause, Context, Hit, hit_at, in_clause_files, roles_for

SUMMARY = "ast-grep patterns over C/C++ or Python, in-process, shared with the check's worker processes"
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["language", "pattern"],
    "properties": {
        "language": {"enum": ["cpp", "python"]},
        "pattern": {"type": "string", "minLength": 1},
        "capture": {"$ref": "#/$defs/captures"},
    },
}

LANGUAGES = {"cpp": ("cpp", ("cpp", "template")), "python": ("python", ("python",))}
METAVARIABLE = re.compile(r"(?<!\$)\$+[A-Z_][A-Z0-9_]*")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
POOL_THRESHOLD = 64

Match = tuple[int, tuple[tuple[str, str], ...]]


def literals(spec: dict) -> list[str]:
    """The longest identifier of the pattern outside metavariables: every match contains it."""
    words = WORD.findall(METAVARIABLE.sub(" ", spec["pattern"]))
    return [max(words, key=len)] if words else []


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    spec = clause.spec
    grammar, languages = LANGUAGES[spec["language"]]
    sources = [
        s
        for s in context.index.select(literals(spec), languages=languages, roles=roles_for(clause))
        if in_clause_files(s.path, clause)
    ]
    jobs = [(s.text, grammar, spec["pattern"], tuple(spec.get("capture", []))) for s in sources]
    results, _ = context.index.executor.map(match_source, jobs, min_items=POOL_THRESHOLD)
    hits: list[Hit] = []
    for source, matches in zip(sources, results):
        hits.extend(hit_at(source, line, dict(captures)) for line, captures in matches)
    return hits


def match_source(job: tuple[str, str, str, tuple[str, ...]]) -> list[Match]:
    from ast_grep_py import SgRoot

    text, grammar, pattern, capture = job
    root = SgRoot(text, grammar).root()
    matches = []
    for node in root.find_all(pattern=pattern):
        captures = []
        for name in capture:
            bound = node.get_match(name)
            if bound is not None:
                captures.append((name, " ".join(bound.text().split())))
        matches.append((node.range().start.line + 1, tuple(captures)))
    return matches


def reads_only_cpp(spec: dict) -> bool:
    """Whether a clause of this spec reads C/C++ alone (and so tells nothing about a compiled distribution)."""
    return spec.get("language") == "cpp"
