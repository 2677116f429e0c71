"""The registry of evidence kinds, and the evaluation of a pack's clauses over one index.

Each kind is one module, listed in `KINDS` under the key a clause names it by. A kind module
defines `SUMMARY` (what it finds: its line in the README and in `air pack kinds`), `SCHEMA`
(its spec's JSON schema, which completes the row schema's clause), `literals(spec)` (the literal prefilter: strings every file it can match holds),
`reads_only_cpp(spec)` (whether its clauses read C/C++ alone, and so say nothing about a
compiled distribution) and `evaluate(clause, context)` (its hits), or, for a kind whose clauses
all run at once, `run_batch(clauses, context)` (their hits by clause key). It may define
`validate(spec, checks)` (what a spec must pass beyond its schema), `TREE_WIDE = True` (its
clauses share facts built over the whole tree, so they run first, together), `prefilters` (it
parses the files it selects), `parsed_files(context)` (the Python files it parses whatever
its clauses), `READS_SCOPES = True` (it reads their scopes too), `measure`
(coverage), `upstream_literals` and `tree_literals`.
Adding a kind is one module and one line in `KINDS`.

Every clause also takes the common options `scope` (product, tests or all), `where` (constraints
on captures; one marked `optional` holds when its capture is absent), `files`, `exclude`,
`file_matches` (a pattern a file's code must also match for its findings to count), `describe`,
`any_test_file`, `expected_errors` and `tests_fallback`. A clause that reads tests counts a
finding in a test-role file only where a test that runs on the device holds it (see
`air.graph.live_tests`), once the check knows the backend's names; with `any_test_file: true` it
counts one in any test-role file: examples, benchmarks, test requirements; with
`expected_errors: true` one where a test or block expects an error too (for a row about that
error). A product clause that finds nothing in product code is searched in the tests as well,
to say where else it was found (which never counts); `tests_fallback: false` leaves that out,
for evidence that says nothing when found in tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from types import ModuleType
from typing import TypeVar, overload

from air.evidence import (
    build_meta,
    cpp_class,
    cpp_field,
    cpp_macro,
    file_glob,
    graph_query,
    ops,
    python_assign,
    python_call,
    python_def,
    semgrep,
    structural,
    text,
)
from air.evidence.base import (
    Clause,
    ClauseResult,
    Context,
    Hit,
    apply_where,
    in_running_tests,
    python_candidates,
    remember_candidates,
    roles_for,
)
from air.index.model import SourceFile
from air.regex import PatternTimeout

KINDS: dict[str, ModuleType] = {
    "text": text,
    "python_call": python_call,
    "python_def": python_def,
    "python_assign": python_assign,
    "cpp_macro": cpp_macro,
    "cpp_class": cpp_class,
    "cpp_field": cpp_field,
    "structural": structural,
    "build": build_meta,
    "file": file_glob,
    "graph": graph_query,
    "semgrep": semgrep,
    "ops": ops,
}
BATCHED_KINDS = frozenset(name for name, module in KINDS.items() if hasattr(module, "run_batch"))


def kind_table() -> str:
    """The evidence kinds as a markdown table: the README's, and what `air pack kinds` prints."""
    lines = ["| kind | finds |", "|---|---|"]
    for name, module in KINDS.items():
        summary = module.SUMMARY.replace("|", "\\|")  # a bar inside a cell would end it
        lines.append(f"| `{name}` | {summary} |")
    return "\n".join(lines) + "\n"


T = TypeVar("T")
TREE_WIDE_KINDS = frozenset(name for name, module in KINDS.items() if getattr(module, "TREE_WIDE", False))
MIN_FORKED_CLAUSES = 64  # below this, workers cost more than they save


def clause_from_data(name: str, data: dict) -> Clause:
    """Build a clause from its validated pack data: exactly one kind key plus common options."""
    (kind,) = [key for key in data if key in KINDS]
    return Clause(
        name=name,
        kind=kind,
        spec=data[kind],
        scope=data.get("scope", "product"),
        where=data.get("where", {}),
        files=tuple(data.get("files", ())),
        exclude=tuple(data.get("exclude", ())),
        describe=data.get("describe", ""),
        any_test_file=data.get("any_test_file", False),
        expected_errors=data.get("expected_errors", False),
        tests_fallback=data.get("tests_fallback", True),
        file_matches=data.get("file_matches", ""),
    )


class Evaluator:
    """Evaluates clauses over one index; each distinct clause runs once per check."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self._results: dict[tuple, ClauseResult] = {}
        self._parsed: dict[str, SourceFile] = {}  # the Python files the clauses parse, by path
        self._scoped: set[str] = set()  # those of them whose scopes are read too
        self._selected = False
        self._deferring = False
        self._product_hits: dict[tuple, list[Hit]] = {}  # of the clauses whose search in the tests was deferred
        self._provisional: dict[tuple, ClauseResult] = {}  # their results meanwhile

    @overload
    def select(self, clauses: Iterable[Clause], literals: Iterable[str] = (), alongside: None = None) -> None: ...

    @overload
    def select(self, clauses: Iterable[Clause], literals: Iterable[str], alongside: Callable[[], T]) -> T: ...

    def select(
        self, clauses: Iterable[Clause], literals: Iterable[str] = (), alongside: Callable[[], T] | None = None
    ) -> T | None:
        """Find the files holding each clause's prefilter literals (and `literals`, for the
        caller's own selections) in one pass over the tree, in the workers while `alongside`
        runs here, then choose the Python files that `prepare` parses for the clauses. Returns
        what `alongside` returns."""
        clauses = list(clauses)
        wanted = [
            part
            for clause in clauses
            for literal in _prefilter_literals(clause, self.context)
            for part in ((literal,) if isinstance(literal, str) else literal)
        ]
        extra = self.context.index.scan_literals([*wanted, *literals], alongside)
        self._selected = True
        for name in sorted({clause.kind for clause in clauses}):
            parsed_files = getattr(KINDS[name], "parsed_files", None)  # of the kinds that parse files of their own
            if parsed_files is not None:
                self._parsed.update((source.path, source) for source in parsed_files(self.context))
        choosing = [clause for clause in clauses if self._parses(clause)]
        chosen, _ = self.context.index.executor.map(self._candidate_paths, choosing)  # both processes share the work
        by_path = self.context.index.by_path
        for clause, paths in zip(choosing, chosen):
            if isinstance(paths, str):
                self._results[clause.key] = _timed_out(clause, paths)
                continue
            candidates = remember_candidates(clause, self.context, [by_path[path] for path in paths])
            self._parsed.update((source.path, source) for source in candidates)
            if getattr(KINDS[clause.kind], "READS_SCOPES", False):
                self._scoped.update(source.path for source in candidates)
        return extra

    def _candidate_paths(self, clause: Clause) -> tuple[str, ...] | str:
        """The paths of the Python files `clause` parses, or why they cannot be told."""
        try:
            return tuple(source.path for source in self._candidates(clause))
        except PatternTimeout as timeout:
            return str(timeout)

    def prepare(self, clauses: Iterable[Clause]) -> None:
        """`select` the clauses' files, unless done, and parse the Python files chosen in one
        parallel batch."""
        clauses = list(clauses)
        if not self._selected:
            self.select(clauses)
        self.context.index.prefetch_python(self._parsed.values(), self._scoped)

    def run_batched(self, clauses: Iterable[Clause]) -> None:
        """Run the batched kinds (semgrep) once for every clause of the check, once the tests
        that run are known (see `counts_in_tests`)."""
        pending = {c.key: c for c in clauses if c.kind in BATCHED_KINDS and c.key not in self._results}
        if not pending:
            return
        batch = list(pending.values())
        try:
            found = semgrep.run_batch(batch, self.context)
        except semgrep.SemgrepUnavailable as error:
            for clause in batch:
                self._results[clause.key] = ClauseResult(clause, [], decided=False, undecided_reason=str(error))
            return
        for clause in batch:
            hits, not_run = in_running_tests(apply_where(found[clause.key], clause, self.context), clause, self.context)
            self._results[clause.key] = ClauseResult(clause, _sorted(hits), not_run=_sorted(not_run))

    def _parses(self, clause: Clause) -> bool:
        """Whether `clause` parses the Python files it selects: those of the kinds that parse
        what they select do, outside tests, which are read lexically."""
        return getattr(KINDS[clause.kind], "prefilters", None) is not None and clause.scope != "tests"

    def _candidates(self, clause: Clause) -> Iterable[SourceFile]:
        """The Python files `clause` parses (found once)."""
        return python_candidates(clause, self.context, *KINDS[clause.kind].prefilters(clause))

    def evaluate_all(self, clauses: Iterable[Clause]) -> None:
        """Evaluate `clauses` ahead of the rows that read them, in the index's executor: clause
        evaluation is CPU-bound, and the workers share the index copy-on-write. This process
        builds the tree-wide facts while the workers start on the clauses that read tests, the
        costliest first; it then takes the product's clauses from the other end, the costliest
        first, so that what a file's tests share (which of them run, say) is mostly worked out
        in one process. A clause's result is the same whichever process computes it."""
        pending = list({c.key: c for c in clauses if c.key not in self._results}.values())
        shared = [c for c in pending if c.kind in TREE_WIDE_KINDS]
        rest = [c for c in pending if c.kind not in TREE_WIDE_KINDS]
        tests = sorted((c for c in rest if c.scope != "product"), key=self._weight, reverse=True)
        product = sorted((c for c in rest if c.scope == "product"), key=self._weight)

        def first() -> None:
            for clause in shared:
                self.result(clause)

        results, _ = self.context.index.executor.map(
            self.result, tests + product, first, min_items=MIN_FORKED_CLAUSES, here_from_end=True
        )
        for result in results:
            self._results.setdefault(result.clause.key, result)

    def _weight(self, clause: Clause) -> int:
        """About what evaluating `clause` costs: the heaviest are taken first, so that neither
        process is left with a long clause when the other has finished."""
        return self.context.index.weight(KINDS[clause.kind].literals(clause.spec), roles_for(clause))

    @contextmanager
    def fallbacks_deferred(self) -> Iterator[None]:
        """While held, a product clause that finds nothing in product code is not searched in
        the tests (see `_evaluated`): its result, which counts exactly what the whole one
        counts, is not kept, and the search in the tests is left to whichever process
        evaluates the clause next, with the product's findings kept for it. For the work that
        only counts findings and must be done before the clauses are shared out."""
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False
            self._provisional.clear()

    def result(self, clause: Clause) -> ClauseResult:
        cached = self._results.get(clause.key) or self._provisional.get(clause.key)
        if cached is None:
            if clause.kind in BATCHED_KINDS:
                self.run_batched([clause])
                return self.result(clause)
            try:
                cached = self._evaluated(clause)
            except PatternTimeout as timeout:
                cached = _timed_out(clause, timeout)
            (self._provisional if clause.key in self._product_hits and self._deferring else self._results)[
                clause.key
            ] = cached
        if cached.clause != clause:  # the same evidence under another name or description
            return replace(cached, clause=clause)
        return cached

    def _evaluated(self, clause: Clause) -> ClauseResult:
        found = self._product_hits.get(clause.key)
        hits, not_run = in_running_tests(self._hits(clause) if found is None else found, clause, self.context)
        if clause.scope == "product" and clause.tests_fallback and not any(hit.role == "product" for hit in hits):
            if self._deferring:
                self._product_hits[clause.key] = hits
            else:
                # to say "found only in tests"; what it finds in product files (a module a test
                # registers, say) is no more the product's than before
                hits = [
                    hit for hit in self._hits(replace(clause, scope="tests", any_test_file=True)) if hit.role == "tests"
                ]
        result = ClauseResult(clause, _sorted(hits), not_run=_sorted(not_run))
        measure = getattr(KINDS[clause.kind], "measure", None)
        if measure is not None:
            result.coverage = measure(clause, result.counted(), self.context)
            if result.coverage is not None and result.coverage.undecided:
                result.decided, result.undecided_reason = False, result.coverage.undecided
        return result

    def _hits(self, clause: Clause) -> list[Hit]:
        return apply_where(KINDS[clause.kind].evaluate(clause, self.context), clause, self.context)


def _prefilter_literals(clause: Clause, context: Context) -> list:
    """The literals a clause's files hold: those of its spec, those the framework's data adds
    to it (the names of upstream classes, say), and those the tree adds (the file names of the
    op lists whose users `ops` looks for, say)."""
    kind = KINDS[clause.kind]
    upstream = getattr(kind, "upstream_literals", None)
    of_tree = getattr(kind, "tree_literals", None)
    return [
        *kind.literals(clause.spec),
        *(upstream(clause.spec, context) if upstream else ()),
        *(of_tree(context) if of_tree else ()),
    ]


def _timed_out(clause: Clause, timeout: PatternTimeout | str) -> ClauseResult:
    """A clause a regular expression search of which ran past its budget: undecided."""
    return ClauseResult(clause, [], decided=False, undecided_reason=str(timeout))


def _sorted(hits: Iterable[Hit]) -> list[Hit]:
    unique = {(h.path, h.line, h.captures): h for h in hits}
    return [unique[key] for key in sorted(unique)]
