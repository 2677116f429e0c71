"""The executor: one map across forked workers, in order, with errors raised here and dead workers' items redone."""

from __future__ import annotations

import os
import pickle
import textwrap
import time
from pathlib import Path

import pytest
from air.executor import Executor
from air.index import build_index
from air.pack.load import load_pack
from air.report.json_report import render_json
from air.run import check

pytestmark = pytest.mark.skipif(not Executor(2).parallel, reason="the platform cannot fork")


def slow_square(number: int) -> tuple[int, int]:
    time.sleep(0.005)
    return number * number, os.getpid()


def test_results_come_back_in_order_from_several_processes():
    results, extra = Executor(2).map(slow_square, list(range(60)), alongside=lambda: "here")
    assert [value for value, _pid in results] == [n * n for n in range(60)]
    assert extra == "here"
    assert len({pid for _value, pid in results}) == 2  # the parent and one worker shared the items


def test_alongside_runs_in_this_process_before_it_takes_items():
    seen = []
    results, _ = Executor(2).map(slow_square, list(range(10)), alongside=lambda: seen.append(os.getpid()))
    assert seen == [os.getpid()] and len(results) == 10


def test_from_the_end_this_process_takes_the_last_items_and_the_workers_the_first():
    results, _ = Executor(2).map(slow_square, list(range(60)), here_from_end=True)
    assert [value for value, _pid in results] == [n * n for n in range(60)]
    here = [number for number, (_value, pid) in enumerate(results) if pid == os.getpid()]
    assert here and here == list(range(60 - len(here), 60))  # a run at the end: the workers took the rest


def test_below_min_items_or_with_one_worker_everything_runs_here():
    for executor, items, least in ((Executor(2), [1, 2, 3], 4), (Executor(1), list(range(20)), 2)):
        results, _ = executor.map(slow_square, items, min_items=least)
        assert {pid for _value, pid in results} == {os.getpid()}


def test_an_error_in_a_worker_is_raised_here():
    parent = os.getpid()

    def fails_in_worker(number: int) -> int:
        time.sleep(0.005)
        if os.getpid() != parent:
            raise ValueError(f"item {number} failed")
        return number

    with pytest.raises(ValueError, match="failed"):
        Executor(2).map(fails_in_worker, list(range(40)))


def test_an_error_that_cannot_cross_processes_is_named():
    parent = os.getpid()

    class Local(Exception):  # a local class cannot be pickled
        pass

    def fails_in_worker(number: int) -> int:
        time.sleep(0.005)
        if os.getpid() != parent:
            raise Local("lost")
        return number

    with pytest.raises(RuntimeError, match="Local: lost"):
        Executor(2).map(fails_in_worker, list(range(40)))


def test_items_of_a_worker_that_dies_are_computed_here():
    parent = os.getpid()

    def dies_in_worker(number: int) -> int:
        time.sleep(0.005)
        if os.getpid() != parent:
            os._exit(1)
        return number + 1

    results, _ = Executor(2).map(dies_in_worker, list(range(30)))
    assert results == [n + 1 for n in range(30)]


def test_an_answer_far_larger_than_a_pipe_holds_comes_back_whole():
    def text_of(number: int) -> tuple[str, int]:
        time.sleep(0.005)
        return chr(ord("a") + number % 26) * 300_000 + "é", os.getpid()  # 6 MB from each worker, not ASCII

    results, _ = Executor(2).map(text_of, list(range(40)))
    assert [text for text, _pid in results] == [chr(ord("a") + n % 26) * 300_000 + "é" for n in range(40)]
    assert len({pid for _text, pid in results}) == 2


def test_a_result_that_cannot_cross_processes_is_named():
    parent = os.getpid()

    def unpicklable(number: int) -> object:
        time.sleep(0.005)
        return (lambda: number) if os.getpid() != parent else number

    with pytest.raises((AttributeError, pickle.PicklingError), match="pickle"):
        Executor(2).map(unpicklable, list(range(40)))


def test_a_worker_maps_serially_instead_of_starting_processes():
    executor = Executor(2)

    def nested(number: int) -> tuple[int, set[int]]:
        inner, _ = executor.map(slow_square, [number, number + 1])
        return os.getpid(), {pid for _value, pid in inner}

    results, _ = executor.map(nested, list(range(20)))
    in_workers = [(outer, inner) for outer, inner in results if outer != os.getpid()]
    assert in_workers and all(inner == {outer} for outer, inner in in_workers)


VENDOR_ROWS = """\
section: device-registration
rows:
  - id: vendor-structural
    item: "1.1.1"
    title: The backend renames the device (ast-grep)
    priority: 1
    evidence:
      renamed:
        structural: {language: python, pattern: "torch.utils.rename_privateuse1_backend($N)", capture: [N]}
    score: {2: renamed}
    remediation: Rename it.
    docs: [https://example.org/rename]
  - id: vendor-semgrep
    item: "1.1.2"
    title: The backend renames the device (semgrep)
    priority: 2
    evidence:
      renamed:
        semgrep: {rule: {languages: [python], pattern: "torch.utils.rename_privateuse1_backend($N)"}, capture: [N],
                  prefilter: [rename_privateuse1_backend]}
    score: {2: renamed}
    remediation: Rename it.
    docs: [https://example.org/rename]
  - id: vendor-ops
    item: "1.1.3"
    title: The backend registers add
    priority: 2
    evidence:
      add:
        ops: {of: [add]}
        where: {KEY: {symbol: kernel_key}}
    score: {2: add}
    remediation: Register add.
    docs: [https://example.org/ops]
"""


def vendor_pack(root: Path) -> Path:
    pack = root / "vendor-pack"
    (pack / "rows").mkdir(parents=True)
    (pack / "pack.yaml").write_text(
        textwrap.dedent("""\
        id: vendor
        version: 1.0.0
        framework: pytorch
        requires_air: ">=0.1"
        extends: pytorch-2.x
        rows: ["rows/*.yaml"]
        """)
    )
    (pack / "rows" / "vendor.yaml").write_text(VENDOR_ROWS)
    return pack


@pytest.mark.slow
def test_a_vendor_pack_with_structural_semgrep_and_ops_clauses_gives_the_same_report_in_parallel(tmp_path, monkeypatch):
    backend = tmp_path / "backend"
    for number in range(8):
        (backend / "pkg").mkdir(parents=True, exist_ok=True)
        (backend / "pkg" / f"m{number}.py").write_text(
            f"import torch\ntorch.utils.rename_privateuse1_backend('d{number}')\n"
        )
    (backend / "pkg" / "__init__.py").write_text("import torch\n")
    (backend / "csrc").mkdir()
    (backend / "csrc" / "ops.cpp").write_text(
        'TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {\n  m.impl("add.Tensor", TORCH_FN(add));\n}\n'
    )
    monkeypatch.setattr("air.evidence.MIN_FORKED_CLAUSES", 1)
    monkeypatch.setattr("air.evidence.structural.POOL_THRESHOLD", 2)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796083200")
    pack = load_pack(str(vendor_pack(tmp_path)))
    serial, parallel = (
        check(backend, pack, index=build_index(backend, executor=Executor(workers))) for workers in (1, 2)
    )
    assert render_json(serial) == render_json(parallel)
    rows = {row.id: row for row in parallel.rows}
    assert rows["vendor-structural"].points == 2 and rows["vendor-ops"].points == 2
