"""End to end on the pack's fixture backends, beyond what their expected.yaml files state."""

from __future__ import annotations

from air.run import check
from conftest import FIXTURES


def test_docs_vendored_and_comments_never_count(pack):
    report = check(FIXTURES / "pu1_partial", pack)
    paths = {f.path for row in report.rows for f in row.evidence}
    assert not any(p.startswith(("docs/", "third_party/")) for p in paths)
    guard = next(r for r in report.rows if r.id == "guard-register-pu1")
    assert {f.line for f in guard.evidence if f.path == "csrc/guard_b.cpp"} == {3, 8}  # not the commented line 9


def test_empty_directory(tmp_path, pack):
    report = check(tmp_path, pack)
    assert report.integration_path.id == "none"
    assert report.readiness == 0
    assert len(report.rows) == 225
    scored = [r for r in report.rows if r.outcome == "scored"]
    assert scored and all(r.points == 0 for r in scored)
    assert all(r.reason for r in report.rows if r.outcome != "scored" or r.points != 2)


def test_a_topological_sort_is_no_device_topology(pack):
    report = check(FIXTURES / "negations", pack)
    assert "device-topology" not in {candidate.id for candidate in report.upstream}
    graph = (FIXTURES / "negations" / "torch_ng" / "graph.py").read_text()
    assert "topological_sort" in graph and "TopologicalSorter" in graph
