"""The result cache: hits on an unchanged tree, misses on a change, rebuilds a corrupt entry."""

from __future__ import annotations

import json
import shutil

from air.pack.shipped import pack_fingerprint
from air.report.json_report import from_dict, render_json, to_dict
from air.run import check_tree
from air.signed_entries import sign, signing_key
from helpers.cache import cache_entries
from helpers.paths import FIXTURES


def copy_of(tmp_path, name="pu1_full"):
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    return root


def checked(root, pack, messages):
    return check_tree(root, str(pack.directory), progress=messages.append)


def test_unchanged_tree_answers_from_the_cache(tmp_path, pack, monkeypatch):
    monkeypatch.setenv("AIR_CACHE", str(tmp_path / "cache"))
    root = copy_of(tmp_path)
    first, messages = checked(root, pack, []), []
    second = checked(root, pack, messages)
    assert any("from the cache" in m for m in messages)
    assert render_json(second) == render_json(first)


def test_a_changed_file_misses(tmp_path, pack, monkeypatch):
    monkeypatch.setenv("AIR_CACHE", str(tmp_path / "cache"))
    root = copy_of(tmp_path)
    checked(root, pack, [])
    (root / "setup.py").write_text("")
    messages = []
    report = checked(root, pack, messages)
    assert not any("from the cache" in m for m in messages)
    assert report.backend.version is None  # setup.py gave 0.3.0 before


def test_a_corrupt_entry_is_detected_and_rebuilt(tmp_path, pack, monkeypatch):
    monkeypatch.setenv("AIR_CACHE", str(tmp_path / "cache"))
    root = copy_of(tmp_path)
    expected = render_json(checked(root, pack, []))
    [entry] = cache_entries(tmp_path / "cache")
    for corruption in ("{not json", '{"checksum": "0", "report": {}}', "0" * 64 + "\n{}", ""):
        entry.write_text(corruption)
        messages = []
        assert render_json(checked(root, pack, messages)) == expected
        assert not any("from the cache" in m for m in messages)
        messages = []
        assert render_json(checked(root, pack, messages)) == expected
        assert any("from the cache" in m for m in messages)  # the rebuilt entry verifies


def test_a_signed_entry_of_an_older_report_shape_is_rebuilt(tmp_path, pack, monkeypatch):
    monkeypatch.setenv("AIR_CACHE", str(tmp_path / "cache"))
    root = copy_of(tmp_path)
    expected = render_json(checked(root, pack, []))
    [entry] = cache_entries(tmp_path / "cache")
    older = to_dict(from_dict(json.loads(expected)))
    older["integration_path"]["dispatch_key"] = older["integration_path"].pop("key")
    del older["pack"]["terms"]
    body = json.dumps(older, sort_keys=True).encode()
    entry.write_bytes(sign(signing_key(), entry.stem, body) + b"\n" + body)
    messages = []
    assert render_json(checked(root, pack, messages)) == expected
    assert not any("from the cache" in m for m in messages)


def test_an_unwritable_cache_is_reported_not_fatal(tmp_path, pack, monkeypatch):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("AIR_CACHE", str(blocker))
    messages = []
    report = checked(copy_of(tmp_path), pack, messages)
    assert report.readiness > 0
    assert any(m.startswith("result not cached") for m in messages)


def test_a_changed_pack_misses(tmp_path, pack, monkeypatch):
    monkeypatch.setenv("AIR_CACHE", str(tmp_path / "cache"))
    pack_copy = tmp_path / "pack"
    shutil.copytree(pack.directory, pack_copy, ignore=shutil.ignore_patterns("fixtures"))
    root = copy_of(tmp_path)
    check_tree(root, str(pack_copy))
    before = pack_fingerprint(pack_copy)
    rows = pack_copy / "rows" / "03-device-guard.yaml"
    rows.write_text(rows.read_text().replace("priority: 2", "priority: 3", 1))
    assert pack_fingerprint(pack_copy) != before
    messages = []
    check_tree(root, str(pack_copy), progress=messages.append)
    assert not any("from the cache" in m for m in messages)
