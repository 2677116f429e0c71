"""What each speed layer is worth: a cold `air check` with each layer switched off in turn.

Usage: python -m benchmarks.layers [PATH] (without PATH, the synthetic backend of
`benchmarks.bench`). Each variant runs in a fresh interpreter, best of RUNS taken in turns, with one layer
replaced by the plain way of doing the same work. Prints the wall time of each, its cost over
the full engine, and whether its report is the same (parsing tests instead of reading them
lexically may find a little more or less). The layers that only loading a pack from its files
uses are measured on a first check, with an empty cache, against all layers on a first check.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench import byte_compile_air, generate, plain_read

RUNS = 5

# Each switch is Python run before the check, in the check's own interpreter.
LAYERS = {
    "all layers": "",
    "no PCRE2 translation": ("import air.regex as r\nr.GuardedPattern._native = property(lambda self: None)\n"),
    "no candidate starts": ("import air.regex as r\nr.GuardedPattern._candidates = lambda self, text: None\n"),
    "no lexical Python reader (tests parsed)": (
        "import air.evidence.base as b\n"
        "original = b.python_sources\n"
        "def parsed(clause, context, literals, hints):\n"
        "    for source in b.parsed_python(clause, context, literals, hints):\n"
        "        yield source, context.index.python_facts(source)\n"
        "b.python_sources = parsed\n"
        "import sys\n"
        "for module in list(sys.modules.values()):\n"
        "    if getattr(module, 'python_sources', None) is original:\n"
        "        module.python_sources = parsed\n"
    ),
    "no read-ahead workers": ("import air.index as i\ni.CodeIndex.read_ahead = lambda self, alongside: alongside()\n"),
    "no kept packs": (
        "import air.pack.compiled as c\nc.load_kept = lambda directory, fingerprint: c.load_pack(str(directory))\n"
    ),
    "all layers, first check": "",
    "no native schema validation": ("import air.pack.schemas as s\ns._natively_valid = lambda data, schema: False\n"),
}
FIRST_CHECK = ("all layers, first check", "no native schema validation")


def timed_check(root: Path, switch: str, output: Path, cache: Path) -> float:
    program = (
        f"{switch}\nimport sys\nfrom air.__main__ import run\n"
        f"sys.argv = ['air', 'check', '-q', '--no-cache', '--format', 'json', '--output', {str(output)!r}, {str(root)!r}]\n"
        "run()\n"
    )
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", program],
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "SOURCE_DATE_EPOCH": "0", "AIR_CACHE": str(cache)},
    )
    return time.perf_counter() - started


def main() -> None:
    byte_compile_air()
    with tempfile.TemporaryDirectory(prefix="air-layers-") as scratch:
        root = Path(sys.argv[1]) if len(sys.argv) > 1 else generate(Path(scratch) / "tree")
        plain_read(root)  # the tree in the OS file cache for every variant, the first included
        reports: dict[str, bytes] = {}
        runs: dict[str, list[float]] = {name: [] for name in LAYERS}
        for _ in range(RUNS):  # round by round, so that a slower spell of the machine hits every variant
            for number, (name, switch) in enumerate(LAYERS.items()):
                output = Path(scratch) / f"{number}.json"
                runs[name].append(timed_check(root, switch, output, _cache(scratch, name in FIRST_CHECK)))
                reports[name] = output.read_bytes()
        times = {name: min(elapsed) for name, elapsed in runs.items()}
        for name, elapsed in times.items():
            full = times[FIRST_CHECK[0] if name in FIRST_CHECK else "all layers"]
            same = "same report" if reports[name] == reports["all layers"] else "REPORT DIFFERS"
            print(f"{name:42} {elapsed:6.2f} s  {100 * (elapsed - full) / full:+6.1f} %  {same}")


def _cache(scratch: str, empty: bool) -> Path:
    """The cache a run uses: one shared by the runs (the pack kept after the first), or an empty one."""
    return Path(tempfile.mkdtemp(dir=scratch)) if empty else Path(scratch) / "cache"


if __name__ == "__main__":
    main()
