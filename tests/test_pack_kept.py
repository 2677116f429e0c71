"""Loaded packs kept in the cache: loaded again only when the pack changes, never trusted unsigned."""

from __future__ import annotations

import os
import pickle
import shutil
import stat

import pytest
from air import regex
from air.pack import compiled
from air.pack.shipped import pack_fingerprint
from air.regex import compile_guarded
from air.report.json_report import render_json
from air.run import check_tree
from air.signed_entries import sign, signing_key
from helpers.packs import TINY_CLAUSE, TINY_ROWS, write_pack
from helpers.paths import FIXTURES


@pytest.fixture
def loads(monkeypatch, tmp_path):
    """The directories loaded from their files, in a cache of the test's own."""
    monkeypatch.setenv("AIR_CACHE", str(tmp_path / "cache"))
    loaded = []
    load_pack = compiled.load_pack

    def counted(directory):
        loaded.append(directory)
        return load_pack(directory)

    monkeypatch.setattr(compiled, "load_pack", counted)
    return loaded


def kept_entries(tmp_path):
    return sorted((tmp_path / "cache" / compiled.ENTRY_DIR).glob("*.pickle"))


def checked(tmp_path, pack_directory):
    root = tmp_path / "tree"
    if not root.exists():
        shutil.copytree(FIXTURES / "pu1_full", root)
    return render_json(check_tree(root, str(pack_directory), use_cache=False))


def pack_copy(tmp_path, pack):
    copy = tmp_path / "pack"
    shutil.copytree(pack.directory, copy, ignore=shutil.ignore_patterns("fixtures"))
    return copy


def test_a_second_check_takes_the_kept_pack_and_reports_the_same(tmp_path, pack, loads):
    first = checked(tmp_path, pack.directory)
    assert len(loads) == 1 and len(kept_entries(tmp_path)) == 1
    assert checked(tmp_path, pack.directory) == first
    assert len(loads) == 1


def test_a_changed_pack_file_is_loaded_afresh_and_replaces_the_kept_pack(tmp_path, pack, loads):
    directory = pack_copy(tmp_path, pack)
    checked(tmp_path, directory)
    [before] = kept_entries(tmp_path)
    rows = directory / "rows" / "03-device-guard.yaml"
    rows.write_text(rows.read_text().replace("priority: 2", "priority: 3", 1))
    checked(tmp_path, directory)
    assert len(loads) == 2 and kept_entries(tmp_path) != [before] and len(kept_entries(tmp_path)) == 1


def test_the_same_pack_in_another_directory_is_kept_apart(tmp_path, pack, loads):
    checked(tmp_path, pack.directory)
    checked(tmp_path, pack_copy(tmp_path, pack))
    checked(tmp_path, pack.directory)
    assert len(loads) == 2 and len(kept_entries(tmp_path)) == 2


@pytest.mark.parametrize("corruption", [b"", b"not signed", b"0" * 64 + b"\n" + pickle.dumps(None)])
def test_a_corrupt_entry_is_removed_and_rebuilt(tmp_path, pack, loads, corruption):
    expected = checked(tmp_path, pack.directory)
    [entry] = kept_entries(tmp_path)
    entry.write_bytes(corruption)
    assert checked(tmp_path, pack.directory) == expected
    assert len(loads) == 2
    assert checked(tmp_path, pack.directory) == expected
    assert len(loads) == 2  # the rebuilt entry loads


@pytest.mark.parametrize("body", [b"not a pickle", pickle.dumps(None), pickle.dumps(("pack", {}))])
def test_a_signed_entry_that_is_not_a_kept_pack_is_removed_and_rebuilt(tmp_path, pack, loads, body):
    expected = checked(tmp_path, pack.directory)
    [entry] = kept_entries(tmp_path)
    entry.write_bytes(sign(signing_key(), entry.stem, body) + b"\n" + body)
    assert checked(tmp_path, pack.directory) == expected
    assert checked(tmp_path, pack.directory) == expected
    assert len(loads) == 2


VENDOR_PATTERN = r"\bacme_[a-z]+\("
VENDOR_ROWS = TINY_ROWS.replace(TINY_CLAUSE, "text: {pattern: '" + VENDOR_PATTERN + "'}")


def test_a_kept_pack_keeps_its_own_patterns_off_pcre2_in_a_new_process(tmp_path, loads, monkeypatch):
    directory = write_pack(tmp_path, rows=VENDOR_ROWS)
    fingerprint = pack_fingerprint(directory)
    compiled.load_kept(directory, fingerprint)
    monkeypatch.setattr(regex, "_LEARNED", regex.Learned())  # what a new process knows
    compile_guarded.cache_clear()
    compiled.load_kept(directory, fingerprint)
    assert len(loads) == 1  # the second came from the cache
    assert compile_guarded(VENDOR_PATTERN)._native is None


class _Planted:
    def __reduce__(self):
        return (os.mkdir, (str(self.marker),))


def test_an_entry_signed_with_another_key_runs_no_code(tmp_path, pack, loads):
    expected = checked(tmp_path, pack.directory)
    [entry] = kept_entries(tmp_path)
    planted = _Planted()
    planted.marker = tmp_path / "planted"
    body = pickle.dumps(planted)
    entry.write_bytes(sign(b"k" * 32, entry.stem, body) + b"\n" + body)
    assert checked(tmp_path, pack.directory) == expected
    assert not planted.marker.exists()
    assert len(loads) == 2


def test_an_unsigned_entry_of_the_right_shape_is_not_taken(tmp_path, pack, loads):
    checked(tmp_path, pack.directory)
    [entry] = kept_entries(tmp_path)
    entry.write_bytes(entry.read_bytes().partition(b"\n")[2])
    checked(tmp_path, pack.directory)
    assert len(loads) == 2


def test_a_cache_open_to_others_is_not_read_and_the_check_goes_on(tmp_path, pack, loads):
    expected = checked(tmp_path, pack.directory)
    cache = tmp_path / "cache"
    cache.chmod(cache.stat().st_mode | stat.S_IWOTH)
    assert checked(tmp_path, pack.directory) == expected
    assert len(loads) == 2


def test_an_unwritable_cache_leaves_the_pack_loaded_from_its_files(tmp_path, pack, loads, monkeypatch):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("AIR_CACHE", str(blocker))
    expected = checked(tmp_path, pack.directory)
    assert checked(tmp_path, pack.directory) == expected
    assert len(loads) == 2
