"""`make bench`: time `air check` on a large tree next to a plain read of the same files.

Usage: python -m benchmarks.bench [PATH]. Without PATH a synthetic backend of about 2,700
files is generated in a temporary directory. Prints both times, their ratio and peak memory.
air's own modules are byte-compiled first, as `pip install` leaves an installed tool: a check
should not be timed compiling air (which it would do on every run with bytecode writing off).
"""

from __future__ import annotations

import compileall
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import air
from air.index.files import DEFAULT_EXCLUDES, is_excluded
from air.source.tree import list_paths

RUNS = 3


def generate(root: Path, modules: int = 900) -> Path:
    """A synthetic PrivateUse1 backend: Python packages, C++ kernels and headers, tests."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "setup.py").write_text(
        'from setuptools import setup\nsetup(name="torch_bench", version="1.0", install_requires=["torch>=2.4"],\n'
        '      entry_points={"torch.backends": ["bench = torch_bench:_autoload"]})\n'
    )
    package = root / "torch_bench"
    for number in range(modules):
        folder = package / f"sub{number % 30}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").touch()
        (folder / f"mod{number}.py").write_text(
            "import torch\nimport torch.utils as tu\n\n"
            + "".join(f"def f{i}(x):\n    return torch.add(x, {i})  # helper {i}\n\n" for i in range(40))
        )
        (root / "csrc" / f"k{number % 30}").mkdir(parents=True, exist_ok=True)
        (root / "csrc" / f"k{number % 30}" / f"op{number}.cpp").write_text(
            "#include <ATen/ATen.h>\n\nTORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {\n"
            + "".join(f'  m.impl("op{number}_{i}", TORCH_FN(op{number}_{i}));\n' for i in range(40))
            + "}\n"
        )
        (root / "test" / f"t{number % 30}").mkdir(parents=True, exist_ok=True)
        (root / "test" / f"t{number % 30}" / f"test_{number}.py").write_text(
            "import torch\n\n"
            + "".join(f"def test_{i}():\n    assert torch.ones(1, device='bench:1')\n\n" for i in range(20))
        )
    (package / "__init__.py").write_text("import torch\ntorch.utils.rename_privateuse1_backend('bench')\n")
    return root


def byte_compile_air() -> None:
    """Byte-compile air's modules where they are, as an installed package's are."""
    compileall.compile_dir(Path(air.__file__).parent, quiet=1)


def plain_read(root: Path) -> float:
    """Read and decode every file air would index: the floor for any tool that reads them all."""
    started = time.perf_counter()
    for rel in list_paths(root):
        if not is_excluded(rel, DEFAULT_EXCLUDES):
            try:
                (root / rel).read_bytes().decode("utf-8", errors="replace")
            except OSError:
                pass
    return time.perf_counter() - started


def air_check(root: Path, output: Path, cache: Path, *flags: str) -> tuple[float, int]:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "air", "check", "-q", *flags, "--format", "json", "--output", str(output), str(root)],
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "AIR_CACHE": str(cache)},
    )
    elapsed = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, peak_kb


def main() -> None:
    byte_compile_air()
    with tempfile.TemporaryDirectory(prefix="air-bench-") as scratch:
        root = Path(sys.argv[1]) if len(sys.argv) > 1 else generate(Path(scratch) / "tree")
        output, cache = Path(scratch) / "report.json", Path(scratch) / "cache"
        files = sum(1 for rel in list_paths(root) if not is_excluded(rel, DEFAULT_EXCLUDES))
        plain_read(root)  # the first reading fills the page cache
        first, _peak = air_check(root, output, cache, "--no-cache")  # loads the pack from its files, and keeps it
        reads, cold = [], []
        for _ in range(RUNS):  # in turns, so that a slower spell of the machine hits both
            reads.append(plain_read(root))
            cold.append(air_check(root, output, cache, "--no-cache"))
        air_check(root, output, cache)  # fills the result cache
        warm = [air_check(root, output, cache) for _ in range(RUNS)]
        read, check = min(reads), min(elapsed for elapsed, _peak in cold)
        rounds = sorted(elapsed / round_read for (elapsed, _peak), round_read in zip(cold, reads))
        print(f"tree:             {root} ({files} files)")
        print(f"plain read:       {read:.3f} s (read and decode every file; best of {RUNS})")
        print(f"air check:        {check:.3f} s (no result cache, whole process; best of {RUNS})")
        print(f"ratio:            {check / read:.1f}x (round by round: {rounds[0]:.1f}x to {rounds[-1]:.1f}x)")
        print(f"first check:      {first:.3f} s ({first / read:.1f}x; the pack loaded from its files, not yet kept)")
        print(f"air re-check:     {min(elapsed for elapsed, _peak in warm):.3f} s (unchanged tree, result cache)")
        print(f"peak memory:      {max(peak for _elapsed, peak in cold) / 1024:.0f} MB (largest process)")


if __name__ == "__main__":
    main()
