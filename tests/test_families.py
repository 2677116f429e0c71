"""Row families: one row written with `foreach` stands for one row per entry."""

from __future__ import annotations

import pytest
from air.pack.load import load_pack
from helpers.packs import load_error, write_pack

FAMILY = """\
section: accelerator-hooks
rows:
  - id: plain-row
    item: "2.9"
    title: A row written out
    priority: 3
    evidence:
      call:
        python_call: {name: torch.utils.rename_privateuse1_backend}
    score:
      2: call
    remediation: Do it.
    docs: [https://example.org/doc]
  - foreach:
      - {id: tiny-first, item: "2.1", priority: 1, method: first}
      - id: tiny-second
        item: "2.2"
        priority: 2
        method: second
        kind: a call
        evidence: {call: {describe: "{method} alone ({kind})"}}
    defaults: {kind: "{0,3} a mention"}
    title: Method {method} is called
    evidence:
      call:
        describe: "{method}() called ({kind})"
        python_call: {name: "torch.{method}"}
        where: {NAME: {matches: '^x{1,2}$'}}
    score:
      2: call
    remediation: Call {method}() with ${dispatch_key}.
    docs: [https://example.org/doc]
"""


def family_pack(tmp_path, rows: str = FAMILY):
    return write_pack(tmp_path, rows=rows)


def test_each_entry_generates_a_row_with_its_own_fields(tmp_path):
    rows = {row.id: row for row in load_pack(str(family_pack(tmp_path))).rows}
    assert [(row.id, row.item, row.priority) for row in rows.values()] == [
        ("tiny-first", "2.1", 1),
        ("tiny-second", "2.2", 2),
        ("plain-row", "2.9", 3),
    ]
    first, second = rows["tiny-first"], rows["tiny-second"]
    assert first.title == "Method first is called"
    assert first.evidence["call"].spec == {"name": "torch.first"}
    assert first.evidence["call"].describe == "first() called ({0,3} a mention)"
    assert first.remediation == "Call first() with ${dispatch_key}."
    assert first.evidence["call"].where == {"NAME": {"matches": "^x{1,2}$"}}
    assert second.evidence["call"].describe == "second alone (a call)"  # merged key by key into the template
    assert second.evidence["call"].spec == {"name": "torch.second"}


def test_a_family_is_the_rows_it_stands_for(tmp_path):
    written = FAMILY.split("  - foreach:")[0] + "".join(
        f"""  - id: tiny-{name}
    item: "{item}"
    title: Method {name} is called
    priority: {priority}
    evidence:
      call:
        describe: "{describe}"
        python_call: {{name: "torch.{name}"}}
        where: {{NAME: {{matches: '^x{{1,2}}$'}}}}
    score:
      2: call
    remediation: Call {name}() with ${{dispatch_key}}.
    docs: [https://example.org/doc]
"""
        for name, item, priority, describe in (
            ("first", "2.1", 1, "first() called ({0,3} a mention)"),
            ("second", "2.2", 2, "second alone (a call)"),
        )
    )
    generated = load_pack(str(family_pack(tmp_path / "a")))
    spelled_out = load_pack(str(family_pack(tmp_path / "b", written)))
    assert sorted(map(repr, generated.rows)) == sorted(map(repr, spelled_out.rows))
    assert generated.digest == spelled_out.digest


@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        (
            ("method: first}", "method: first, colour: red}"),
            ["01.yaml:15", "rows[1].foreach[0].colour", "parameter 'colour' is used nowhere in the row"],
        ),
        (("method: first}", "method: 1}"), ["rows[1].foreach[0].method", "must be text (quote it)"]),
        ((", method: first}", "}"), ["01.yaml:15", "rows[1].foreach[0]: no value for {method}"]),
        (
            ("defaults: {kind:", "defaults: {unused: x, kind:"),
            ["rows[1].defaults.unused", "used nowhere in the family"],
        ),
        (("defaults: {kind:", 'defaults: {priority: "1", kind:'), ["rows[1].defaults.priority", "is a row field"]),
        (
            ("      2: call\n    remediation: Call", "      2: calls\n    remediation: Call"),
            ["01.yaml:30", "rows[1].foreach[0].score.2", "undefined evidence calls"],
        ),
        (
            ("    title: Method {method} is called\n", "    title: Method {method} is called\n    colour: red\n"),
            ["01.yaml:24", "rows[1].foreach[0].colour", "unknown key 'colour'"],
        ),
        (('        item: "2.2"\n', "        item: 2.2\n"), ["01.yaml:17", "rows[1].foreach[1].item"]),
        (("  - foreach:\n", "  - foreach: []\n    unused:\n"), ["rows[1].foreach", "should be non-empty"]),
    ],
)
def test_broken_families_fail_in_one_line_naming_the_entry(tmp_path, change, fragments):
    old, new = change
    assert old in FAMILY
    message = load_error(family_pack(tmp_path, FAMILY.replace(old, new)))
    for fragment in fragments:
        assert fragment in message


def test_generated_ids_must_differ(tmp_path):
    rows = FAMILY.replace("id: tiny-second", "id: tiny-first")
    assert "rows[1].foreach[1].id: duplicate row id 'tiny-first'" in load_error(family_pack(tmp_path, rows))


def test_a_default_may_use_the_entry_parameters(tmp_path):
    rows = FAMILY.replace('defaults: {kind: "{0,3} a mention"}', 'defaults: {kind: "{method}, by {0,3} a mention"}')
    assert "method: second" in rows
    pack = load_pack(str(family_pack(tmp_path, rows.replace("        kind: a call\n", ""))))
    described = {row.id: row.evidence["call"].describe for row in pack.rows if row.id != "plain-row"}
    assert described == {
        "tiny-first": "first() called (first, by {0,3} a mention)",
        "tiny-second": "second alone (second, by {0,3} a mention)",
    }


def test_a_default_naming_a_parameter_the_entry_lacks_fails(tmp_path):
    rows = FAMILY.replace('defaults: {kind: "{0,3} a mention"}', 'defaults: {kind: "{shade} a mention", shade: x}')
    assert "rows[1].foreach[0]: no value for {shade}, which a default uses" in load_error(family_pack(tmp_path, rows))
