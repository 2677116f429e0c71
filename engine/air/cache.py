"""The result cache: an unchanged tree, checked again with the same pack, answers at once.

An entry is keyed by a content hash of the index (every file's path, role and text, and what
was skipped and why), the pack's fingerprint (its files and its framework's), air's version
and the source description. It holds
the report as JSON with a checksum; an entry that cannot be read, does not verify or does not
load is deleted and the check runs afresh. Entries are written to a temporary file and renamed.
The cache lives in `$AIR_CACHE`, else `$XDG_CACHE_HOME/air`, else `~/.cache/air`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import replace
from pathlib import Path

from air import __version__
from air.index import CodeIndex
from air.report.json_report import from_dict, to_dict
from air.report.model import Report

ENTRY_DIR = "results"


def cache_dir() -> Path:
    if os.environ.get("AIR_CACHE"):
        return Path(os.environ["AIR_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "air"


def cache_key(index: CodeIndex, pack_fingerprint: str, settings: str) -> str:
    """`settings`: everything else the report depends on (provenance, options), as text."""
    digest = hashlib.sha256()
    for part in (__version__, pack_fingerprint, settings):
        digest.update(part.encode() + b"\0")
    for file in sorted(index.files, key=lambda f: f.path):
        digest.update(f"{file.path}\0{file.role}\0".encode("utf-8", "surrogateescape"))
        digest.update(hashlib.sha256(file.text.encode("utf-8", "surrogateescape")).digest())
    for skipped in sorted(index.skipped, key=lambda s: s.path):
        digest.update(f"{skipped.path}\0{skipped.reason}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def load(key: str, date: str) -> Report | None:
    """The cached report for `key`, dated `date`; None (and a removed entry) when there is
    no entry or it is corrupt."""
    path = _entry(key)
    try:
        envelope = json.loads(path.read_text(encoding="utf-8"))
        payload = envelope["report"]
        if envelope.get("checksum") != _checksum(payload):
            raise ValueError("checksum mismatch")
        return replace(from_dict(payload), date=date)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        _remove(path)
        return None


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):  # an entry that cannot be removed is overwritten by the next store
        path.unlink(missing_ok=True)


def store(key: str, report: Report) -> str | None:
    """Write the entry atomically. A failure does not fail the check: it is returned as a
    one-line note for the caller to show."""
    payload = to_dict(report)
    text = json.dumps({"checksum": _checksum(payload), "report": payload}, sort_keys=True, ensure_ascii=False)
    path = _entry(key)
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".entry-", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except OSError as error:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
        return f"result not cached ({error.strerror or error}: {cache_dir()})"
    return None


def _entry(key: str) -> Path:
    return cache_dir() / ENTRY_DIR / key[:2] / f"{key}.json"


def _checksum(payload: dict) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
