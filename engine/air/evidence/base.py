"""What every evidence kind shares: clauses, hits, results and capture constraints."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, Literal, NoReturn

from air.graph.dependencies import DependencyGraph
from air.graph.operators import OperatorSyntax
from air.index import CodeIndex
from air.index.cpp import CPP_LANGUAGES
from air.index.cpp_names import CppNames, CppVocabulary
from air.index.files import matches_glob
from air.index.model import PythonFacts, Role, SourceFile
from air.index.python_lexical import LexicalPython
from air.index.python_values import bound_values
from air.regex import GuardedPattern, alternatives, compile_guarded, searching
from air.regex.native import AsciiMatch
from air.versions import admits

if TYPE_CHECKING:
    from air.graph.live_tests import LiveTests

Scope = Literal["product", "tests", "all"]
Hint = Callable[[str], object]  # a cheap test of a file's text: truthy when it may hold a finding
SNIPPET_LIMIT = 200
MAX_TEST_HITS = 25  # a tests-scope clause stops reading once it has this many findings
PARSE_BATCH = 32
DEVICE_PLACEHOLDER = "<name>"  # in a `matches` pattern: any device name the backend registers


@dataclass(frozen=True)
class Hit:
    path: str
    line: int
    snippet: str
    role: Role
    captures: tuple[tuple[str, str], ...] = ()

    def capture(self, name: str) -> str | None:
        return dict(self.captures).get(name)


EXPANDED = "EXPANDED"  # a hit's capture at a place that expands a macro whose definition shows the evidence


def hit_at(source: SourceFile, line: int, captures: Mapping[str, str] | None = None) -> Hit:
    snippet = " ".join(source.line_text(line).split())
    if len(snippet) > SNIPPET_LIMIT:
        snippet = snippet[: SNIPPET_LIMIT - 1] + "…"
    return Hit(source.path, line, snippet, source.role, tuple(sorted((captures or {}).items())))


@dataclass(frozen=True)
class Clause:
    """One named evidence clause of a row: a kind, its spec, and the options every kind takes."""

    name: str
    kind: str
    spec: Any
    scope: Scope = "product"
    where: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    files: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    describe: str = ""
    any_test_file: bool = False  # findings in tests count from any test-role file, run or not
    expected_errors: bool = False  # findings in tests count where a test or block expects an error too
    file_matches: str = ""  # a pattern a file's code must also match for its findings to count
    tests_fallback: bool = True  # a product clause that finds nothing says where in tests it is found

    @cached_property
    def key(self) -> tuple:
        """Identity for caching: two rows sharing a definition evaluate it once. Worked out once:
        every stage looks clauses up by it."""
        return (
            self.kind,
            _freeze(self.spec),
            self.scope,
            _freeze(self.where),
            self.files,
            self.exclude,
            self.any_test_file,
            self.expected_errors,
            self.tests_fallback,
            self.file_matches,
        )

    def description(self) -> str:
        return self.describe or f"{self.kind} {_summary(self.spec)}"


@dataclass(frozen=True)
class SpecChecks:
    """What a kind's `validate(spec, checks)` may consult, and how it refuses a spec: paths
    are inside the spec, and a refusal names the pack file's line."""

    operators: OperatorSyntax | None  # the pack's operator syntax and catalog, when it has them
    pattern: Callable[[tuple, str], None]  # compiles a regular expression of the spec, or refuses it
    refuse: Callable[[tuple, str], NoReturn]


@dataclass(frozen=True)
class Coverage:
    """How many of a listed set a clause found (operators of a category, say)."""

    covered: tuple[str, ...]
    missing: tuple[str, ...]
    composite: tuple[str, ...] = ()  # listed, but needing no implementation of their own
    overridden: tuple[str, ...] = ()  # of the composite ones, those found implemented all the same
    differentiated: tuple[str, ...] = ()  # listed backward operators whose forward a differentiating key serves
    fallback: tuple[str, ...] = ()  # not covered, but served by a stand-in (a CPU fallback, say)
    stub: tuple[str, ...] = ()  # not covered: what stands for them implements nothing (a stub kernel)
    unresolved: tuple[str, ...] = ()  # whether covered cannot be told
    undecided: str = ""  # why, when some are unresolved
    sources: tuple[str, ...] = ()  # where the covered ones were found, when worth saying
    ignored: tuple[str, ...] = ()  # findings not counted, and why

    @property
    def total(self) -> int:
        return len(self.covered) + len(self.fallback) + len(self.stub) + len(self.unresolved) + len(self.missing)

    @property
    def ratio(self) -> float:
        return len(self.covered) / self.total if self.total else 1.0

    @property
    def possible_ratio(self) -> float:
        """The share if every unresolved one turned out covered."""
        return (len(self.covered) + len(self.unresolved)) / self.total if self.total else 1.0


@dataclass
class ClauseResult:
    clause: Clause
    hits: list[Hit]
    decided: bool = True
    undecided_reason: str = ""
    coverage: Coverage | None = None
    not_run: list[Hit] = field(default_factory=list)  # found in tests that do not run on the device

    def counted(self) -> list[Hit]:
        return self._counted

    @cached_property
    def _counted(self) -> list[Hit]:
        if self.clause.scope == "all":
            return self.hits
        return [hit for hit in self.hits if hit.role == self.clause.scope]

    def count(self) -> int:
        return len(self.counted())

    def unique(self, capture: str) -> int:
        return len({hit.capture(capture) for hit in self.counted() if hit.capture(capture) is not None})

    def covered_share(self) -> float:
        """The share of a listed set found; 0 for clauses that measure no coverage."""
        return self.coverage.ratio if self.coverage is not None else 0.0

    def possible_share(self) -> float:
        """The most the share could be, were what is undecided found; 1 when that is unknown."""
        return self.coverage.possible_ratio if self.coverage is not None else 1.0

    def test_only_hits(self) -> list[Hit]:
        return [hit for hit in self.hits if hit.role == "tests"] if self.clause.scope == "product" else []


@dataclass(frozen=True)
class UpstreamCode:
    """What the framework's own C++ tells that a tree does not: its classes with their direct
    bases (qualified names) and the names of their virtual member functions by whether they are
    declared const (`const`, `mutable`), and the calls that check, warn or fail but implement
    nothing (names or globs of their last component), those that give a fresh value nothing has
    computed (`empty`), the types whose values made of constants are constants, and the methods
    that tell a value's metadata (`size`)."""

    bases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    virtuals: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    inert_calls: tuple[str, ...] = ()
    allocations: tuple[str, ...] = ()
    value_types: frozenset[str] = frozenset()
    metadata_calls: tuple[str, ...] = ()
    fixed_values: tuple[tuple[str, int], ...] = ()  # (type, argument): made with it constant, one fixed value
    _descendants: dict[frozenset[str], frozenset[str]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @cached_property
    def namespaces(self) -> frozenset[str]:
        """The framework's outermost C++ namespaces, as its qualified class names show them."""
        names = {name for name, bases in self.bases.items() for name in (name, *bases)}
        return frozenset(name.split("::", 1)[0] for name in names if "::" in name)

    def descendants(self, roots: Iterable[str]) -> frozenset[str]:
        """The framework classes that derive, at any depth, from one of `roots`: a root written
        qualified stands for that class alone, an unqualified one for every class of its name.
        Worked out once per set of roots."""
        key = frozenset(roots)
        found = self._descendants.get(key)
        if found is None:
            named = {name for name in self.bases.keys() | self._derived.keys() if any(_is_named(name, r) for r in key)}
            frontier = set(named)
            while frontier:
                frontier = {child for parent in frontier for child in self._derived.get(parent, ())} - named
                named |= frontier
            found = self._descendants[key] = frozenset(named)
        return found

    def virtual_constness(self, classes: Iterable[str]) -> dict[str, frozenset[bool]]:
        """Member function name -> whether its virtual declarations in `classes` (qualified
        names) or in their ancestors are const."""
        found: dict[str, set[bool]] = defaultdict(set)
        seen: set[str] = set()
        frontier = set(classes)
        while frontier:
            seen |= frontier
            for name in frontier:
                for kind, methods in self.virtuals.get(name, {}).items():
                    for method in methods:
                        found[method].add(kind == "const")
            frontier = {base for name in frontier for base in self.bases.get(name, ())} - seen
        return {method: frozenset(consts) for method, consts in found.items()}

    @cached_property
    def _derived(self) -> dict[str, set[str]]:
        """The classes deriving directly from each class."""
        derived: dict[str, set[str]] = defaultdict(set)
        for name, direct in self.bases.items():
            for base in direct:
                derived[base].add(name)
        return derived


def _is_named(qualified: str, root: str) -> bool:
    return qualified == root or qualified.endswith("::" + root)


class Context:
    """What a kind may consult besides its own spec."""

    def __init__(
        self,
        index: CodeIndex,
        symbols: Mapping[str, tuple[str, ...]],
        operators: OperatorSyntax | None = None,
        cpp: CppVocabulary | None = None,
        upstream: UpstreamCode | None = None,
    ) -> None:
        self.index = index
        self.symbols = symbols
        self.operators = operators
        self.cpp = cpp or CppVocabulary()
        self.upstream = upstream or UpstreamCode()
        self.live_tests: LiveTests | None = None  # when set, tests count only where they run on the device
        self.device_names: tuple[str, ...] = ()  # the device names the backend registers, once known
        self._memo: dict[tuple, Any] = {}

    def memo(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """A tree-wide fact several clauses share (a class hierarchy, say), computed once."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    @cached_property
    def graph(self) -> DependencyGraph:
        return DependencyGraph(self.index)

    @cached_property
    def names(self) -> CppNames:
        return CppNames(self.index, self.cpp, lambda path: self.graph.reachable([path]))

    def bound_values(self, name: str, path: str | None, line: int | None) -> tuple[str, ...] | None:
        """The values the Python name `name`, captured at `line` of the file `path`, may take."""
        if path is None:
            return None
        return self.memo(("bound-values", path, name, line), lambda: bound_values(self.index, path, name, line))

    def resolve(self, value: str, path: str | None = None) -> str:
        """What a value captured in the file `path` stands for, through the C/C++ aliases that
        file sees (see `air.index.cpp_names`); a value from a file of another language, or
        quoted, is left as it is."""
        source = self.index.by_path.get(path) if path is not None else None
        if (source is not None and source.language not in CPP_LANGUAGES) or value.strip().startswith(("'", '"')):
            return value
        return self.names.resolve(value, path)


def normalise_value(value: str) -> str:
    """Compare captured values by their last `::`/`.` component, unquoted, case-folded."""
    value = value.strip().strip("\"'")
    value = re.split(r"::|\.", value)[-1] if value else value
    return value.strip().lower()


def constraint_holds(
    value: str, constraint: Mapping[str, Any], context: Context, path: str | None = None, line: int | None = None
) -> bool:
    """`equals`, `in`, `symbol` and their negations compare normalised values, aliases resolved
    as the file `path` sees them; `matches` searches the value, unquoted, as written or as
    resolved; `bound_matches` holds when every value a Python name may take at `line` is known
    and matches (see `air.index.python_values`), and `not_bound_matches` when not;
    `defined_matches` when a C/C++ function or macro of the product by that name has a body
    that matches (`check` in `check(rt::Malloc(...))`, defined to fail a TORCH_CHECK);
    `device_name: true` when the value is a device name the backend registers, and `<name>` in a
    `matches` pattern stands for any of them (none known: it matches nothing);
    `admits_release` when the value, a requirement's version range (`==2.7.1`, `>=2.4,<2.6`,
    none at all), admits a release in the given range: a range air cannot read admits it too."""
    resolved = context.resolve(value, path)
    normal = normalise_value(resolved)
    for operator, operand in constraint.items():
        if operator == "optional":
            continue
        if operator == "matches":
            pattern = compile_guarded(_naming_devices(operand, context.device_names))
            spellings = dict.fromkeys(text.strip().strip("\"'") for text in (value, resolved))
            holds = any(pattern.search(text) is not None for text in spellings)
        elif operator == "defined_matches":
            holds = _definition_matches(value, operand, context)
        elif operator == "device_name":
            holds = (value.strip().strip("\"'") in context.device_names) == operand
        elif operator == "admits_release":
            holds = _admits_release(value.strip().strip("\"'"), operand)
        elif operator in ("bound_matches", "not_bound_matches"):
            bound = context.bound_values(value, path, line)
            every = bound is not None and all(compile_guarded(operand).search(text) for text in bound)
            holds = every != (operator == "not_bound_matches")
        else:
            allowed = context.symbols[operand] if operator.endswith("symbol") else as_list(operand)
            holds = (normal in _normalised(tuple(allowed))) != operator.startswith("not_")
        if not holds:
            return False
    return True


def _admits_release(requirement: str, wanted: str) -> bool:
    try:
        return admits(wanted, requirement)
    except ValueError:
        return True


def _naming_devices(pattern: str, device_names: tuple[str, ...]) -> str:
    """`pattern` with `<name>` standing for the backend's device names."""
    if DEVICE_PLACEHOLDER not in pattern:
        return pattern
    return pattern.replace(DEVICE_PLACEHOLDER, f"(?:{alternatives(device_names)})")


def _definition_matches(value: str, pattern: str, context: Context) -> bool:
    name = re.split(r"::|\.|->", value.strip())[-1]
    if not name.isidentifier():
        return False

    def matches() -> bool:
        regex = compile_guarded(pattern)
        macros = [define.body for source, define in context.index.defines.get(name, ()) if source.role == "product"]
        bodies = (*macros, *(function.body for function in context.index.definitions(name)))
        return any(regex.search(body) is not None for body in bodies)

    return context.memo(("defined-matches", name, pattern), matches)


@lru_cache(maxsize=1024)
def _normalised(values: tuple[str, ...]) -> frozenset[str]:
    return frozenset(normalise_value(str(item)) for item in values)


_BY_LINE = frozenset({"bound_matches", "not_bound_matches"})  # what a name stands for depends on where


def apply_where(hits: Iterable[Hit], clause: Clause, context: Context) -> list[Hit]:
    """Keep hits whose captures satisfy the clause's `where`, with captured values alias-resolved
    as their file sees them, in files whose code matches its `file_matches`. A hit without a
    constrained capture fails, unless the constraint is `optional: true` (a keyword that may be
    left out, such as `enabled=` whose absence means its default)."""
    if clause.file_matches:
        hits = _in_matching_files(hits, clause.file_matches, context)
    if not clause.where:
        return list(hits)
    names = tuple(clause.where)
    by_line = any(operator in _BY_LINE for constraint in clause.where.values() for operator in constraint)
    verdicts: dict[tuple, bool] = {}  # many hits of a file capture the same constrained values
    kept = []
    for hit in hits:
        captures = dict(hit.captures)
        line = hit.line if by_line else None
        key = (hit.path, line, *(captures.get(name) for name in names))
        holds = verdicts.get(key)
        if holds is None:
            with searching(hit.path):
                holds = verdicts[key] = all(
                    constraint_holds(captures[name], constraint, context, hit.path, line)
                    if name in captures
                    else constraint.get("optional", False)
                    for name, constraint in clause.where.items()
                )
        if holds:
            kept.append(hit)
    return kept


def _in_matching_files(hits: Iterable[Hit], pattern: str, context: Context) -> list[Hit]:
    regex = compile_guarded(pattern)
    verdicts: dict[str, bool] = {}
    kept = []
    for hit in hits:
        holds = verdicts.get(hit.path)
        if holds is None:
            with searching(hit.path):
                text = context.index.code_text(context.index.by_path[hit.path])
                holds = verdicts[hit.path] = regex.search(text) is not None
        if holds:
            kept.append(hit)
    return kept


def function_matches(
    pattern: GuardedPattern, text: str, source: SourceFile, lexical: LexicalPython
) -> Iterator[tuple[int, re.Match[str] | AsciiMatch]]:
    """The matches of `pattern` in `text`, the code of the Python file `source`, that end in the
    function they start in (the outermost: a helper a test defines is part of the test), or
    start outside any, each with the offset in `text` its positions count from: after a match
    that ends elsewhere, the search resumes on the line after its start. `lexical` is the file
    read lexically, where functions are told apart."""
    offset, line, counted = 0, 1, 0
    while offset < len(text):
        with searching(source.path):
            matches = pattern.finditer(text[offset:])
        for match in matches:
            start = offset + match.start()
            line += text.count("\n", counted, start)
            counted = start
            last = lexical.function_end(line)
            if last is None or line + text.count("\n", start, offset + match.end()) <= last:
                yield offset, match
                continue
            resume = text.find("\n", start)
            offset = len(text) if resume < 0 else resume + 1
            break
        else:
            return


def in_clause_files(path: str, clause: Clause) -> bool:
    if clause.files and not matches_glob(path, clause.files):
        return False
    return not (clause.exclude and matches_glob(path, clause.exclude))


def as_list(value: str | Iterable[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def last_component(name: str) -> str:
    return re.split(r"::|\.", name)[-1]


def name_literals(name: str) -> tuple[str, ...]:
    """Literals every file calling or naming `name` must contain: its components, globs left
    out. The root is there too, since a qualified name resolves only through an import of it."""
    parts = [literal_of(part) for part in re.split(r"::|\.", name)]
    kept = tuple(part for part in parts if len(part) >= 3)
    return kept or (literal_of(name),)


def roles_for(clause: Clause) -> tuple[str, ...]:
    """The file roles a clause reads, by its scope."""
    return {"product": ("product",), "tests": ("tests",)}.get(clause.scope, ("product", "tests"))


def python_candidates(
    clause: Clause,
    context: Context,
    literals: Iterable[str | tuple[str, ...]],
    hints: Iterable[Hint],
    parse: bool = True,
) -> Iterable[SourceFile]:
    """Python files a clause reads: they pass the literal prefilter, the clause's file globs
    and one of the textual `hints`. Those a clause parses are computed once, so that a check
    can parse the files of every clause in one parallel batch before evaluating any; those it
    reads without parsing (`parse=False`) are found lazily, as the clause may stop early."""
    if not parse:
        return _candidates(clause, context, literals, hints)
    return context.memo(("python-candidates", clause.key), lambda: list(_candidates(clause, context, literals, hints)))


def remember_candidates(clause: Clause, context: Context, sources: list[SourceFile]) -> list[SourceFile]:
    """Take `sources` as the files `python_candidates` finds for `clause`, found elsewhere (in
    a worker process); what it found already stays."""
    found: list[SourceFile] = context.memo(("python-candidates", clause.key), lambda: sources)
    return found


def parsed_python(
    clause: Clause, context: Context, literals: Iterable[str | tuple[str, ...]], hints: Iterable[Hint]
) -> Iterator[SourceFile]:
    """The candidate files of a clause, parsed. A tests-scope clause usually stops long before
    its last file (MAX_TEST_HITS), so its files are found and parsed in batches as reached."""
    if clause.scope != "tests":
        files = python_candidates(clause, context, literals, hints)
        context.index.prefetch_python(files)
        yield from files
        return
    batch: list[SourceFile] = []
    for source in _candidates(clause, context, literals, hints):
        batch.append(source)
        if len(batch) == PARSE_BATCH:
            context.index.prefetch_python(batch)
            yield from batch
            batch = []
    context.index.prefetch_python(batch)
    yield from batch


def python_sources(
    clause: Clause, context: Context, literals: Iterable[str | tuple[str, ...]], hints: Iterable[Hint]
) -> Iterator[tuple[SourceFile, PythonFacts | LexicalPython]]:
    """Each candidate file with what a kind reads of it: the parsed facts in product code, a
    lexical reading in tests (see `air.index.python_lexical`), since test suites are large and
    only ever give evidence of trust "tests"."""
    if clause.scope == "tests":
        for source in python_candidates(clause, context, literals, hints, parse=False):
            yield source, context.index.python_lexical(source)
    else:
        for source in parsed_python(clause, context, literals, hints):
            yield source, context.index.python_facts(source)


def _candidates(clause: Clause, context: Context, literals, hints) -> Iterator[SourceFile]:
    hints = list(hints)
    for source in context.index.select(literals, languages=["python"], roles=roles_for(clause)):
        if in_clause_files(source.path, clause) and may_count(source, clause, context) and _shows_any(source, hints):
            yield source


def _shows_any(source: SourceFile, hints: list[Hint]) -> bool:
    with searching(source.path):
        return any(hint(source.text) for hint in hints)


def enough(clause: Clause, hits: list[Hit], context: Context) -> bool:
    """Whether a tests-scope clause has found all the findings it keeps: those that count,
    and satisfy its `where`. `hits` only grows while a clause is evaluated, so each call
    looks at the findings added since the last."""
    if clause.scope != "tests" or len(hits) < MAX_TEST_HITS:
        return False
    tally = context.memo(("tally", clause.key, id(hits)), lambda: [0, 0])  # [findings looked at, findings kept]
    if tally[0] > len(hits):
        tally[:] = [0, 0]  # another list of findings
    new = [hit for hit in hits[tally[0] :] if counts_in_tests(hit, clause, context)]
    tally[0], tally[1] = len(hits), tally[1] + len(apply_where(new, clause, context) if clause.where else new)
    return tally[1] >= MAX_TEST_HITS


def may_count(source: SourceFile, clause: Clause, context: Context) -> bool:
    """Whether a file can hold findings that count for a clause that reads tests: a cheap test
    made before the file is searched (see `counts_in_tests`)."""
    if source.role != "tests" or clause.scope == "product" or clause.any_test_file or context.live_tests is None:
        return True
    return context.live_tests.may_run(source.path)


def counts_in_tests(hit: Hit, clause: Clause, context: Context) -> bool:
    """Whether a finding counts for a clause that reads tests: product code does; in tests,
    only a test that runs on the device does, unless the clause takes any test-role file."""
    if hit.role != "tests" or clause.any_test_file or context.live_tests is None:
        return True
    return context.live_tests.runs(hit.path, hit.line, clause.expected_errors)


def in_running_tests(hits: list[Hit], clause: Clause, context: Context) -> tuple[list[Hit], list[Hit]]:
    """`hits` split into those that count and the test findings that do not (see
    `counts_in_tests`); a product-scope clause keeps them all, as they only ever say where
    else it was found."""
    if clause.scope == "product":
        return hits, []
    kept: list[Hit] = []
    dropped: list[Hit] = []
    for hit in hits:
        (kept if counts_in_tests(hit, clause, context) else dropped).append(hit)
    return kept, dropped


def literal_of(pattern: str) -> str:
    """The literal part of a glob-like name (`*.impl` -> `impl`), used as a prefilter."""
    return max(re.split(r"[*?\[\]]", last_component(pattern)), key=len)


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _summary(spec: Any) -> str:
    if isinstance(spec, Mapping):
        parts = [f"{k}={_summary(v)}" for k, v in spec.items()]
        return ", ".join(parts)
    if isinstance(spec, (list, tuple)):
        return "|".join(_summary(v) for v in spec)
    return str(spec)
