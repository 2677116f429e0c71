"""Loaded packs kept in the cache: a check loads its pack from there, in a tenth of the time that
reading, validating and compiling its files takes, while neither they nor air have changed.

An entry is a pickle of the loaded pack and of what was learnt of its patterns (their parses
and translations, see `air.regex.Learned`), signed with the cache's own key
(`air.signed_entries`): only entries this cache wrote load, so loading one runs no code but
air's. Its name is a hash of all the loaded pack depends on: the pack's directory and
fingerprint (its files, its framework's and those of the packs it extends), the size and
modification time of each of air's own modules, and the Python version. Only the newest entry
of a pack directory is kept. An entry that does not load is removed and the pack loaded from
its files; so is a pack whose cache cannot be used, which the result cache, when in use,
reports. A kept pack never changes a result: `--no-cache` leaves it in use.
"""

from __future__ import annotations

import gc
import hashlib
import os
import pickle
import sys
from pathlib import Path

import air
from air.cache_dirs import private_dir
from air.errors import InputError
from air.pack.load import Pack, load_pack
from air.regex import Learned, adopt_learned, learned
from air.signed_entries import read_entry, remove_entry, write_entry

ENTRY_DIR = "packs"
_UNLOADABLE = (pickle.UnpicklingError, AttributeError, ImportError, EOFError, IndexError, TypeError, ValueError)


def load_kept(directory: Path, fingerprint: str) -> Pack:
    """The pack in `directory`, whose `pack_fingerprint` is `fingerprint`: as kept in the cache,
    else loaded from its files (a broken pack raises PackError) and kept."""
    place = hashlib.sha256(str(directory).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    key = f"{place}-{_entry_name(directory, fingerprint)}"
    try:
        path = private_dir(ENTRY_DIR) / f"{key}.pickle"
        body = read_entry(path, key)
    except (OSError, InputError):
        return load_pack(str(directory))
    if body is not None:
        kept = _unpickled(body)
        if kept is not None:
            pack, patterns = kept
            adopt_learned(patterns)
            return pack
        remove_entry(path)
    pack = load_pack(str(directory))
    try:
        write_entry(path, key, pickle.dumps((pack, learned()), protocol=pickle.HIGHEST_PROTOCOL))
    except OSError:
        return pack  # kept next time the cache can be written
    for older in path.parent.glob(f"{place}-*.pickle"):  # one entry per directory: the one just written
        if older != path:
            remove_entry(older)
    return pack


def _unpickled(body: bytes) -> tuple[Pack, Learned] | None:
    # Unpickling builds some 300,000 objects that live until the check ends: collecting
    # garbage meanwhile (where the caller has not stopped it, as `air check` does) only walks
    # them, and takes 0.15 s of the 0.2 s unpickling takes.
    collecting = gc.isenabled()
    gc.disable()
    try:
        kept = pickle.loads(body)
    except _UNLOADABLE:
        return None
    finally:
        if collecting:
            gc.enable()
    shaped = isinstance(kept, tuple) and len(kept) == 2 and isinstance(kept[0], Pack) and isinstance(kept[1], Learned)
    return kept if shaped else None


def _entry_name(directory: Path, fingerprint: str) -> str:
    digest = hashlib.sha256(f"{directory}\0{fingerprint}\0{sys.version}\0".encode("utf-8", "surrogateescape"))
    code = Path(air.__file__).parent
    modules = []
    for folder, folders, files in os.walk(code):
        folders[:] = [name for name in folders if name != "__pycache__"]
        modules += [os.path.join(folder, name) for name in files if name.endswith(".py")]
    for module in sorted(modules):
        info = os.stat(module)
        digest.update(f"{os.path.relpath(module, code)}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return digest.hexdigest()
