"""End to end on the pack's fixture backends, beyond what their expected.yaml files state."""

from __future__ import annotations

from air.report.json_report import to_dict
from air.report.markdown import render_markdown
from air.run import check
from conftest import FIXTURES
from test_report import VALIDATOR


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


def test_operator_coverage_shows_native_fallback_missing_and_undecided(pack):
    fallbacks = check(FIXTURES / "ops_host_fallback", pack)
    unary = next(c for c in fallbacks.operators.categories if c.item == "8.2.1")
    assert (unary.covered, unary.total, unary.missing) == (12, 20, ("expm1",))
    assert unary.fallback == ("sin", "cos", "erf", "floor", "ceil", "round", "log1p")
    assert fallbacks.operators.per_op_fallbacks == 9
    markdown = render_markdown(fallbacks)
    assert "| # | Category | Native | Per-op fallback | Missing | Composite (no kernel needed) |" in markdown
    assert "| 8.1.3 | Tensor.item() via \\_local_scalar_dense | 0/1 | `_local_scalar_dense` | — | — |" in markdown
    codegen = check(FIXTURES / "ops_py_codegen", pack)
    reduction = next(c for c in codegen.operators.categories if c.item == "8.2.3")
    assert reduction.undecided.startswith("codegen/families.yml names template tree_reduce")
    assert "sum.dim_IntList" not in reduction.missing and reduction.total == 13
    assert "| 8.2.3 | Reduction ops | ?/13 |" in render_markdown(codegen)
    assert VALIDATOR.validate(to_dict(codegen)) is None
