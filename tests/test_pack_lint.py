"""`air pack lint`: a pack's house style. The shipped pack passes it with --strict, against the
list of known warnings it keeps; errors and new warnings fail."""

from __future__ import annotations

import pytest
from helpers.cli import air
from helpers.packs import TINY_HEADER, TINY_ROWS, write_pack
from helpers.paths import SHIPPED_PACK_DIR


def test_the_shipped_pack_passes_strict_lint_against_its_known_warnings():
    done = air("pack", "lint", "pytorch-2.x", "--strict", "--baseline", str(SHIPPED_PACK_DIR / "lint-baseline.txt"))
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines()[-1].endswith(" problems, 0 failing")


def test_errors_fail_and_warnings_fail_only_when_strict_and_new(tmp_path):
    rows = TINY_ROWS.replace('item: "1.1.1"', 'item: "2.1"')
    header = TINY_HEADER + "evidence:\n  spare: {python_call: {name: torch.nothing}}\n"
    pack = write_pack(tmp_path, header, rows)
    fixture = pack / "fixtures" / "empty"
    fixture.mkdir(parents=True)
    (fixture / "expected.yaml").write_text("rows: {}\n")
    done = air("pack", "lint", str(pack))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert "error: tiny-row: item 2.1 is not in its section (device-registration, §1)" in lines
    assert "warning: evidence spare: a shared definition no row uses" in lines
    assert "warning: fixture empty: expects no row outcome" in lines
    fixed = write_pack(tmp_path / "fixed", header, TINY_ROWS)
    assert air("pack", "lint", str(fixed)).returncode == 0
    strict = air("pack", "lint", str(fixed), "--strict")
    assert strict.returncode == 1 and "1 problems, 1 failing" in strict.stdout
    baseline = tmp_path / "known.txt"
    baseline.write_text("warning: evidence spare: a shared definition no row uses\n")
    known = air("pack", "lint", str(fixed), "--strict", "--baseline", str(baseline))
    assert known.returncode == 0 and "(known)" in known.stdout


def test_a_text_pattern_no_fixture_matches_is_a_warning(tmp_path):
    rows = TINY_ROWS.replace(
        "        python_call: {name: torch.utils.rename_privateuse1_backend}",
        "        text: {pattern: 'never_written_anywhere\\(', prefilter: [never_written_anywhere]}",
    )
    pack = write_pack(tmp_path, TINY_HEADER, rows)
    fixture = pack / "fixtures" / "one"
    fixture.mkdir(parents=True)
    (fixture / "expected.yaml").write_text("rows: {tiny-row: 0}\n")
    (fixture / "a.py").write_text("print('hello')\n")
    done = air("pack", "lint", str(pack))
    assert "warning: tiny-row: the pattern of `call` matches nothing in any fixture" in done.stdout
    (fixture / "a.py").write_text("never_written_anywhere()\n")
    assert "matches nothing" not in air("pack", "lint", str(pack)).stdout


STUB_ROW = TINY_ROWS.replace(
    "    score:\n      2: call\n",
    "      stub: {cpp_class: {derives_from: Widget, overrides: [run], bodies: stub}}\n"
    "      other: {python_call: {name: torch.other}}\n"
    "    score:\n      2: call\n      1: stub or other\n",
)


@pytest.mark.parametrize(
    ("remediation", "warned"),
    [
        ("    remediation: Do it.\n", "with `stub` found"),
        ("    remediation:\n      - {when: other, say: Use it.}\n      - say: Do it.\n", "with `stub` found"),
        (
            "    remediation:\n      - {when: stub and not other, say: Fill it in.}\n      - say: Do it.\n",
            "with `other`, `stub` found",
        ),
        ("    remediation:\n      - {when: stub, say: Fill it in.}\n      - say: Do it.\n", None),
    ],
)
def test_a_row_crediting_stubs_needs_a_remediation_for_them(tmp_path, remediation, warned):
    pack = write_pack(tmp_path, TINY_HEADER, STUB_ROW.replace("    remediation: Do it.\n", remediation))
    lines = [line for line in air("pack", "lint", str(pack)).stdout.splitlines() if "earns 1 for stubs" in line]
    if warned is None:
        assert lines == []
    else:
        assert lines == [
            f"warning: tiny-row: {warned} the row earns 1 for stubs, but only the default remediation holds"
        ]
