"""Operator catalogs per framework release: which one a check reads, what it does with operators
the targeted release lacks, and how a pack names them."""

from __future__ import annotations

import json
import shutil

import pytest
from air.errors import PackError
from air.evidence import Evaluator, clause_from_data
from air.evidence.base import Context
from air.graph.catalog import Catalogs
from air.index import build_index
from air.pack.load import load_pack
from helpers.cli import air
from helpers.packs import TINY_ROWS, write_pack
from helpers.paths import SHIPPED_PACK_DIR
from helpers.trees import write_tree
from test_operators import OPS_HEADER

SHIPPED_RELEASES = [f"2.{minor}" for minor in range(4, 16)]


def catalogs_of(tmp_path, releases: list[str]) -> Catalogs:
    for release in releases:
        data = {
            "framework_version": f"{release}.1",
            "ops": {"add.Tensor": [], f"only_in_{release.replace('.', '_')}": []},
        }
        (tmp_path / f"ops-{release}.json").write_text(json.dumps(data))
    (tmp_path / "ops-latest.json").write_text("{}")  # not a release: not a catalog
    return Catalogs.find(tmp_path, "ops-{release}.json")


@pytest.mark.parametrize(
    ("target", "chosen", "basis"),
    [
        (None, "2.13", "the newest the pack ships: the backend pins no release"),
        ("2.6", "2.6", "the release the backend targets (2.6)"),
        ("2.6.3", "2.6", "the release the backend targets (2.6.3)"),
        ("2.9", "2.6", "the newest the pack ships before 2.9, which the backend targets"),
        ("2.20", "2.13", "the newest the pack ships before 2.20, which the backend targets"),
        ("2.1", "2.4", "the oldest the pack ships: the backend targets 2.1"),
        (">=2.4,<2.7", "2.6", "the newest release the backend's pins (>=2.4,<2.7) admit"),
        ("==2.13.*", "2.13", "the newest release the backend's pins (==2.13.*) admit"),
        (">=2.7,<2.13", "2.6", "the newest the pack ships before the releases the backend's pins (>=2.7,<2.13) admit"),
        (">=2.20", "2.13", "the newest the pack ships before the releases the backend's pins (>=2.20) admit"),
        ("<2.2", "2.4", "the oldest the pack ships: the backend's pins (<2.2) admit none of its releases"),
    ],
)
def test_a_check_reads_the_catalog_of_the_release_the_backend_targets(tmp_path, target, chosen, basis):
    catalogs = catalogs_of(tmp_path, ["2.13", "2.4", "2.6"])
    assert [release for release, _path in catalogs.files] == ["2.4", "2.6", "2.13"]
    path, why = catalogs.choose(target)
    assert path.name == f"ops-{chosen}.json"
    assert why == basis
    assert catalogs.catalog(target).framework_version == f"{chosen}.1"


def test_an_operator_counts_as_known_when_any_release_has_it(tmp_path):
    catalogs = catalogs_of(tmp_path, ["2.4", "2.6"])
    assert catalogs.knows("only_in_2_4") and catalogs.knows("only_in_2_6") and not catalogs.knows("only_in_2_5")


def test_one_catalog_serves_every_release(tmp_path):
    (tmp_path / "ops.json").write_text(json.dumps({"framework_version": "1.0", "ops": {}}))
    catalogs = Catalogs.find(tmp_path, "ops.json")
    assert catalogs.choose("2.4") == (tmp_path / "ops.json", "")
    assert catalogs.choose(None)[1] == ""


def test_the_shipped_pack_has_a_catalog_for_every_supported_release():
    files = load_pack("pytorch-2.x").operators.catalogs.files
    assert [release for release, _path in files] == SHIPPED_RELEASES
    for release, path in files:
        data = json.loads(path.read_text())
        assert data["framework_version"].rsplit(".", 1)[0] == release
        assert len(data["ops"]) > 3000 and any("core" in flags for flags in data["ops"].values())


@pytest.mark.parametrize(
    ("catalog", "fragment"),
    [
        ("data/aten-ops-{release}.json", "no operator catalog in the pack matches 'data/aten-ops-{release}.json'"),
        ("data-{release}/aten-ops.json", "{release} may stand only in the file's name"),
    ],
)
def test_a_catalog_pattern_that_names_no_catalog_is_refused(tmp_path, catalog, fragment):
    pack = write_pack(
        tmp_path, header=OPS_HEADER.replace("catalog: data/aten-ops.json", f"catalog: {catalog}"), rows=TINY_ROWS
    )
    (pack / "data").mkdir()
    shutil.copyfile(SHIPPED_PACK_DIR / "data" / "aten-ops-2.13.json", pack / "data" / "aten-ops-next.json")
    with pytest.raises(PackError) as error:
        load_pack(str(pack))
    assert fragment in str(error.value)


SDPA_PY = """\
import torch

lib = torch.library.Library("aten", "IMPL", "PrivateUse1")
lib.impl("_scaled_dot_product_fused_attention_overrideable", fused_attention, "PrivateUse1")
lib.impl("bmm", batched_matmul, "PrivateUse1")


def fused_attention(*args):
    return torch.ops.my.fused(*args)


def batched_matmul(a, b):
    return torch.ops.my.bmm(a, b)
"""


@pytest.mark.parametrize(
    ("target", "total", "ignored"),
    [
        ("2.4", 2, ["_scaled_dot_product_fused_attention_overrideable: no such operator in release 2.4.1"]),
        ("2.13", 3, []),
    ],
)
def test_a_listed_operator_the_targeted_release_lacks_is_left_out(tmp_path, target, total, ignored):
    write_tree(tmp_path, {"pkg/ops.py": SDPA_PY})
    pack = load_pack("pytorch-2.x")
    context = Context(
        build_index(tmp_path), pack.symbols, pack.operators.for_target(target), upstream=pack.framework.upstream
    )
    data = {"ops": {"of": ["_scaled_dot_product_fused_attention_overrideable", "bmm", "abs"]}}
    coverage = Evaluator(context).result(clause_from_data("listed", data)).coverage
    assert coverage.total == total
    assert list(coverage.ignored) == ignored
    assert "bmm" in coverage.covered and "abs" in coverage.missing


def test_the_report_names_the_catalog_and_why(tmp_path):
    fixture = SHIPPED_PACK_DIR / "fixtures" / "ver_generator_old"
    done = air("check", "-q", "--no-cache", "--format", "json", "--output", "r.json", str(fixture), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    operators = json.loads((tmp_path / "r.json").read_text())["operators"]
    assert operators["catalog_version"] == "2.6.0"
    assert operators["catalog_basis"] == "the newest release the backend's pins (>=2.5,<2.7) admit"
    given = air(
        "check",
        "-q",
        "--no-cache",
        "--torch-version",
        "2.9",
        "--format",
        "markdown",
        "--output",
        "r.md",
        str(fixture),
        cwd=tmp_path,
    )
    assert given.returncode == 0, given.stderr
    assert "(catalog of PyTorch 2.9.1: the release the backend targets (2.9))" in (tmp_path / "r.md").read_text()


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ({"evidence": "nothing", "since": "2.6", "instead": "x"}, "no evidence 'nothing' in the row"),
        ({"evidence": "call", "since": "two", "instead": "x"}, "does not match"),
        ({"evidence": "call", "since": "2.6"}, "at rows[0].deprecated[0]: 'instead' is required"),
    ],
)
def test_a_deprecation_must_name_the_rows_evidence_a_release_and_what_instead(tmp_path, entry, fragment):
    written = "    deprecated:\n      - " + json.dumps(entry) + "\n"
    pack = write_pack(
        tmp_path, rows=TINY_ROWS.replace("    remediation: Do it.\n", written + "    remediation: Do it.\n")
    )
    with pytest.raises(PackError) as error:
        load_pack(str(pack))
    assert fragment in str(error.value)
