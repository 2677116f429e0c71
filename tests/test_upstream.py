"""Upstream candidates: detectors that fire, and the written classification rule."""

from __future__ import annotations

from air.report.markdown import render_markdown
from air.run import check
from air.scoring.upstream import backend_names
from helpers.paths import FIXTURES


def test_candidates_and_their_classes(pack):
    report = check(FIXTURES / "upstream_mix", pack)
    found = {c.id: c for c in report.upstream}
    assert set(found) == {"torch-monkey-patches", "patching-helpers", "profiler-tooling"}
    patch = found["torch-monkey-patches"]
    assert patch.classification == "needs-abstraction"  # the patching file names the backend (torch_upm, "upm")
    assert patch.files == ("torch_upm/__init__.py:14",)
    assert found["profiler-tooling"].classification == "generic"  # the profiler module names no backend
    assert found["profiler-tooling"].files == ("torch_upm/profiler/timeline.py:3",)  # its first line of code


def test_report_lists_candidates(pack):
    text = render_markdown(check(FIXTURES / "upstream_mix", pack))
    assert "Upstream candidates: 3" in text
    section = text.split("## Upstream candidates", 1)[1].split("\n## ", 1)[0]
    assert "| Monkey-patches of torch | new hooks / API extensions | needs-abstraction |" in section


def test_no_candidates_in_a_bare_backend(pack):
    assert check(FIXTURES / "pu1_bare", pack).upstream == ()


def test_backend_names():
    prefixes = ("torch_", "torch-", "pytorch_", "pytorch-")
    assert backend_names(("torch_npu",), ("npu",), prefixes) == ("npu", "torch_npu")
    assert backend_names(("torch-spyre",), ("spyre",), prefixes) == ("spyre", "torch-spyre")
    assert backend_names(("pytorch-ext",), (), prefixes) == ("ext", "pytorch-ext")
    assert backend_names(("torch_npu",), (), ()) == ("torch_npu",)
    assert backend_names((None,), (), prefixes) == ()
    assert backend_names(("op-lib", "torch_xdev"), (), prefixes) == ("op-lib", "torch_xdev", "xdev")
