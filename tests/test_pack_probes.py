"""A pack's probes are data it ships: listed in the file `probes` names, each a function of a
module beside it, read as text only and checked when the pack loads."""

from __future__ import annotations

import pytest
from air.pack.load import load_pack
from air.pack.probes import Measure
from helpers.packs import TINY_HEADER, load_error, write_pack

PROBES_FILE = """\
probes:
  - {id: first, title: it works, run: "checks.py:works", rows: [tiny-row], timeout: 5}
  - {id: second, title: it also works, run: "more/checks.py:also", rows: [old-name]}
  - {id: third, title: it measures, run: "checks.py:works", measures: [{rows: [old-name], names: [add], variants: [float*], passing: [pass, fallback]}, {rows: [tiny-row]}]}
"""
MODULE = "import os\n\n\ndef works(ctx):\n    return 'yes'\n"


@pytest.fixture
def probed(tmp_path):
    pack = write_pack(tmp_path, TINY_HEADER + "probes: probes/probes.yaml\nredirects: {old-name: tiny-row}\n")
    (pack / "probes" / "more").mkdir(parents=True)
    (pack / "probes" / "probes.yaml").write_text(PROBES_FILE)
    (pack / "probes" / "checks.py").write_text(MODULE)
    (pack / "probes" / "more" / "checks.py").write_text("def also(ctx):\n    pass\n")
    return pack


def test_probes_load_with_their_rows_modules_and_definition_lines(probed):
    suite = load_pack(str(probed)).probes
    assert suite is not None
    first, second, third = suite.probes
    assert (first.id, first.rows, first.function, first.line, first.timeout) == (
        "first",
        ("tiny-row",),
        "works",
        4,
        5.0,
    )
    assert first.module == probed / "probes" / "checks.py" and first.shown == "tiny/probes/checks.py"
    assert (second.rows, second.timeout, second.shown) == (("tiny-row",), 120.0, "tiny/probes/more/checks.py")
    assert third.rows == () and third.measures == (
        Measure(("tiny-row",), ("add",), ("float*",), ("pass", "fallback")),
        Measure(("tiny-row",), ("*",), ("*",), ("pass",)),
    )


def test_the_probes_are_part_of_the_pack_digest(probed):
    before = load_pack(str(probed)).digest
    (probed / "probes" / "checks.py").write_text(MODULE.replace("'yes'", "'no'"))
    assert load_pack(str(probed)).digest != before


def test_a_pack_that_extends_another_inherits_its_probes(probed, tmp_path):
    child = write_pack(tmp_path, TINY_HEADER.replace("id: tiny", "id: child") + "extends: ../tiny\n", None, "child")
    assert [probe.id for probe in load_pack(str(child)).probes.probes] == ["first", "second", "third"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("probes.yaml", "checks.py:works", "checks.py:missing"), "defines no function 'missing' at its top level"),
        (("probes.yaml", "[tiny-row]", "[no-such-row]"), "no row 'no-such-row' in the pack"),
        (("probes.yaml", "{rows: [tiny-row]}", "{rows: [gone-row]}"), "no row 'gone-row' in the pack"),
        (("probes.yaml", ", rows: [old-name]}", "}"), "decides no row: give it `rows`, or `measures`"),
        (("probes.yaml", "checks.py:works", "../checks.py:works"), "the module beside the probes file or below it"),
        (("probes.yaml", "checks.py:works", "absent.py:works"), "'absent.py': no such module beside the probes file"),
        (("probes.yaml", "id: second", "id: first"), "duplicate probe id 'first'"),
        (("probes.yaml", "timeout: 5", "timeout: 0"), "timeout"),
        (("checks.py", "def works(ctx):", "def works(ctx:"), "checks.py does not parse"),
    ],
)
def test_a_broken_probe_is_a_pack_error_naming_it(probed, change, message):
    file, old, new = change
    path = probed / "probes" / file
    path.write_text(path.read_text().replace(old, new))
    assert message in load_error(probed)


def test_a_probes_file_the_pack_does_not_hold_is_an_error(probed):
    (probed / "pack.yaml").write_text((probed / "pack.yaml").read_text().replace("probes/probes.yaml", "gone.yaml"))
    assert "'gone.yaml': no such file in the pack" in load_error(probed)


def test_loading_a_pack_runs_none_of_its_probe_modules(probed, tmp_path):
    marker = tmp_path / "ran"
    (probed / "probes" / "checks.py").write_text(f"open({str(marker)!r}, 'w').close()\n\n\n" + MODULE)
    load_pack(str(probed))
    assert not marker.exists()
