"""A source distribution from the package index, unpacked without building it.

`pip download` would prepare the package's metadata, which runs its `setup.py`: code air never
executes. Instead the index URL is read from pip's configuration (`PIP_INDEX_URL`, then the
`index-url` of pip's configuration files, else PyPI), the sdist is found through the index's
simple API (JSON or HTML), downloaded, and unpacked with `tarfile`'s `data` filter (or, for a
zip, after checking every member's path), so nothing lands outside the target directory.
"""

from __future__ import annotations

import configparser
import html.parser
import json
import os
import re
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from air.errors import InputError
from air.results import Source
from air.versions import parse_release

DEFAULT_INDEX = "https://pypi.org/simple"
TIMEOUT = 30
MAX_DOWNLOAD = 512 * 1024 * 1024
MAX_UNPACKED = 2 * 1024 * 1024 * 1024  # an archive that would unpack to more is refused (a bomb)
SDIST_SUFFIXES = (".tar.gz", ".tgz", ".zip")
ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"


def index_url() -> str:
    """The index pip would use: `PIP_INDEX_URL`, else `index-url` in pip's configuration."""
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"]
    home = Path.home()
    files = [Path("/etc/pip.conf"), home / ".pip" / "pip.conf", home / ".config" / "pip" / "pip.conf"]
    if os.environ.get("VIRTUAL_ENV"):
        files.append(Path(os.environ["VIRTUAL_ENV"]) / "pip.conf")
    if os.environ.get("PIP_CONFIG_FILE"):
        files.append(Path(os.environ["PIP_CONFIG_FILE"]))
    found = DEFAULT_INDEX
    for path in files:
        parser = configparser.ConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, OSError, UnicodeDecodeError):
            continue
        for section in ("global", "download", "install"):
            if parser.has_option(section, "index-url"):
                found = parser.get(section, "index-url")
    return found


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def find_sdist(name: str, index: str | None = None) -> tuple[str, str]:
    """(download URL, version) of the newest source distribution of `name` on the index."""
    base = (index or index_url()).rstrip("/")
    page_url = f"{base}/{normalised(name)}/"
    body, content_type = _fetch(page_url)
    links = _json_links(body) if "json" in content_type else _html_links(body)
    candidates = []
    for href in links:
        url = urllib.parse.urljoin(page_url, href).split("#", 1)[0]
        filename = PurePosixPath(urllib.parse.urlparse(url).path).name
        version = _sdist_version(filename, name)
        if version:
            candidates.append((parse_release(version), version, url))
    if not candidates:
        raise InputError(f"{name}: no source distribution on {base}")
    _release, version, url = max(candidates)
    return url, version


@contextmanager
def unpacked_sdist(name: str, index: str | None = None) -> Iterator[tuple[Path, Source]]:
    """The newest sdist of `name`, downloaded and unpacked into a temporary directory that is
    removed afterwards, also when interrupted; and its provenance."""
    url, version = find_sdist(name, index)
    scratch = Path(tempfile.mkdtemp(prefix="air-sdist-"))
    try:
        archive = scratch / PurePosixPath(urllib.parse.urlparse(url).path).name
        archive.write_bytes(_fetch(url)[0])
        target = scratch / "tree"
        target.mkdir()
        _unpack(archive, target)
        entries = list(target.iterdir())
        root = entries[0] if len(entries) == 1 and entries[0].is_dir() else target
        yield root, Source("sdist", url, version=version)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _fetch(url: str) -> tuple[bytes, str]:
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file" and Path(urllib.parse.unquote(parsed.path)).is_dir():
        url = url.rstrip("/") + "/index.html"  # a local index directory, as pip reads it
    request = urllib.request.Request(url, headers={"Accept": ACCEPT, "User-Agent": "air"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:  # noqa: S310 - index URLs only
            body = response.read(MAX_DOWNLOAD + 1)
            content_type = response.headers.get("Content-Type", "") if hasattr(response, "headers") else ""
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        raise InputError(f"{url}: cannot reach the package index ({reason})") from None
    if len(body) > MAX_DOWNLOAD:
        raise InputError(f"{url}: larger than {MAX_DOWNLOAD // (1024 * 1024)} MB")
    return body, content_type or ""


def _json_links(body: bytes) -> list[str]:
    try:
        return [entry["url"] for entry in json.loads(body)["files"]]
    except (ValueError, KeyError, TypeError):
        return []


class _Anchors(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.links.append(href)


def _html_links(body: bytes) -> list[str]:
    parser = _Anchors()
    parser.feed(body.decode("utf-8", "replace"))
    return parser.links


def _check_unpacked_size(archive: Path, size: int) -> None:
    if size > MAX_UNPACKED:
        raise InputError(f"{archive.name}: unpacks to {size:,} bytes, over the limit of {MAX_UNPACKED:,}")


def _sdist_version(filename: str, name: str) -> str | None:
    for suffix in SDIST_SUFFIXES:
        if filename.endswith(suffix):
            stem = filename[: -len(suffix)]
            project, _, version = stem.rpartition("-")
            if normalised(project) == normalised(name) and re.fullmatch(r"[0-9]+(?:\.[0-9]+)*", version):
                return version
    return None


# what a damaged or unusual archive raises: a truncated stream (EOFError, zlib.error), an
# encrypted zip member (RuntimeError), a compression method the standard library lacks
UNPACKING_ERRORS = (
    tarfile.TarError,
    zipfile.BadZipFile,
    OSError,
    EOFError,
    zlib.error,
    RuntimeError,
    NotImplementedError,
)


def _unpack(archive: Path, target: Path) -> None:
    try:
        if archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as bundle:
                for member in bundle.namelist():
                    path = PurePosixPath(member)
                    if path.is_absolute() or ".." in path.parts:
                        raise InputError(f"{archive.name}: unsafe member path {member!r}")
                _check_unpacked_size(archive, sum(info.file_size for info in bundle.infolist()))
                bundle.extractall(target)
        else:
            with tarfile.open(archive) as bundle:
                _check_unpacked_size(archive, sum(member.size for member in bundle.getmembers()))
                bundle.extractall(target, filter="data")
    except UNPACKING_ERRORS as error:
        raise InputError(f"{archive.name}: cannot unpack safely ({error or type(error).__name__})") from None
