"""Source distributions from the package index: found through the simple API, unpacked safely,
never built."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from air.errors import InputError
from air.source.sdist import _unpack, find_sdist, unpacked_sdist


def tar_of(path, members: dict[str, str]) -> None:
    with tarfile.open(path, "w:gz") as archive:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


@pytest.fixture()
def index(tmp_path, monkeypatch):
    """A file:// simple index with two sdists and a wheel of torch-fake; setup.py would leave a
    marker if run."""
    files = tmp_path / "files"
    files.mkdir()
    marker = tmp_path / "setup-ran"
    setup = f"open({str(marker)!r}, 'w').write('ran')\nfrom setuptools import setup\nsetup(name='torch_fake', version='1.1')\n"
    tar_of(files / "torch_fake-1.0.tar.gz", {"torch_fake-1.0/setup.py": setup})
    tar_of(
        files / "torch_fake-1.1.tar.gz",
        {
            "torch_fake-1.1/setup.py": setup,
            "torch_fake-1.1/torch_fake/__init__.py": "import torch\ntorch.utils.rename_privateuse1_backend('fake')\n",
        },
    )
    (files / "torch_fake-1.2-py3-none-any.whl").write_bytes(b"not an sdist")
    page = tmp_path / "simple" / "torch-fake"
    page.mkdir(parents=True)
    (page / "index.html").write_text(
        "".join(
            f'<a href="../../files/{name}#sha256=0">{name}</a>\n'
            for name in ("torch_fake-1.0.tar.gz", "torch_fake-1.1.tar.gz", "torch_fake-1.2-py3-none-any.whl")
        )
    )
    url = f"file://{tmp_path}/simple"
    monkeypatch.setenv("PIP_INDEX_URL", url)
    return url, marker, files


def test_newest_sdist_is_found(index):
    url, _marker, _files = index
    download, version = find_sdist("torch_fake")
    assert version == "1.1" and download.endswith("/files/torch_fake-1.1.tar.gz")


def test_check_of_an_sdist_never_runs_setup_py(index, tmp_path):
    _url, marker, _files = index
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "air",
            "check",
            "-q",
            "--no-cache",
            "--sdist",
            "torch_fake",
            "--format",
            "json",
            "--output",
            "-",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["backend"]["source"]["kind"] == "sdist" and report["backend"]["source"]["version"] == "1.1"
    assert {row["id"]: row["points"] for row in report["rows"]}["device-rename-pu1"] == 2
    assert not marker.exists()


def test_an_archive_escaping_its_directory_is_refused(index):
    _url, _marker, files = index
    tar_of(files / "torch_fake-1.1.tar.gz", {"../../escaped.txt": "x"})
    with pytest.raises(InputError, match="cannot unpack safely"):
        with unpacked_sdist("torch_fake"):
            pass


def test_unreachable_index_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("PIP_INDEX_URL", f"file://{tmp_path}/nowhere")
    with pytest.raises(InputError) as error:
        find_sdist("torch_fake")
    assert "cannot reach the package index" in str(error.value) and "\n" not in str(error.value)


def test_an_archive_that_unpacks_too_large_is_refused(index, monkeypatch):
    import air.source.sdist

    monkeypatch.setattr(air.source.sdist, "MAX_UNPACKED", 10)
    with pytest.raises(InputError, match=r"unpacks to [0-9,]+ bytes, over the limit of 10$"):
        with unpacked_sdist("torch_fake"):
            pass


def _truncated_tar(archive: Path) -> None:
    tar_of(archive.with_suffix(".full"), {"torch_fake-1.0/setup.py": "".join(f"x{n} = {n * n}\n" for n in range(9000))})
    whole = archive.with_suffix(".full").read_bytes()
    archive.write_bytes(whole[: len(whole) // 2])


def _encrypted_zip(archive: Path) -> None:
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("torch_fake-1.0/setup.py", "x = 1\n")
    data = bytearray(archive.read_bytes())
    for header in (b"PK\x03\x04", b"PK\x01\x02"):  # mark the member encrypted in both headers
        at = data.find(header)
        flags_at = at + (6 if header == b"PK\x03\x04" else 8)
        data[flags_at] |= 0x01
    archive.write_bytes(bytes(data))


def _unknown_compression_zip(archive: Path) -> None:
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("torch_fake-1.0/setup.py", "x = 1\n")
    data = bytearray(archive.read_bytes())
    for header in (b"PK\x03\x04", b"PK\x01\x02"):
        at = data.find(header)
        method_at = at + (8 if header == b"PK\x03\x04" else 10)
        data[method_at : method_at + 2] = (99).to_bytes(2, "little")
    archive.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("name", "damage"),
    [
        ("torch_fake-1.0.tar.gz", _truncated_tar),
        ("torch_fake-1.0.zip", _encrypted_zip),
        ("torch_fake-1.0.zip", _unknown_compression_zip),
    ],
)
def test_an_archive_that_cannot_be_unpacked_is_one_error(tmp_path, name, damage):
    archive = tmp_path / name
    damage(archive)
    target = tmp_path / "tree"
    target.mkdir()
    with pytest.raises(InputError, match="cannot unpack safely"):
        _unpack(archive, target)
