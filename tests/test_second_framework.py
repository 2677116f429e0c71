"""A second framework is data alone: frameworks/jax/ and rulepacks/jax-pjrt-0.x/ go through the
same loading, evaluation, reports and pack tooling as PyTorch's, without a special case."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import tarfile

from air.pack.framework import known_backends
from air.pack.load import load_pack
from air.pack.shipped import framework_dir
from helpers.cli import air
from helpers.git import git
from helpers.paths import REPO_ROOT

PACK = "jax-pjrt-0.x"
FIXTURES = REPO_ROOT / "rulepacks" / PACK / "fixtures"


def test_the_pack_loads_with_its_sections_paths_and_rows():
    pack = load_pack(PACK)
    assert pack.framework.id == "jax"
    assert 40 <= len(pack.rows) <= 80
    assert {path.id for path in pack.framework.paths} == {"pjrt-c", "pjrt-cpp", "xla-fork"}
    assert {row.section for row in pack.rows} == {section.id for section in pack.framework.sections}


def test_the_pack_passes_its_fixtures_and_strict_lint():
    tested = air("pack", "test", PACK)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "0 failed" in tested.stdout and "0 rows untested" in tested.stdout
    linted = air("pack", "lint", PACK, "--strict")
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_a_check_writes_every_report_format(tmp_path):
    formats = ["markdown", "json", "html", "sarif", "junit", "badge"]
    outputs = [item for name in formats for item in ("--format", name, "--output", str(tmp_path / f"report.{name}"))]
    done = air("check", "--pack", PACK, str(FIXTURES / "cpp_wrapper"), "--quiet", *outputs)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["pack"]["framework"] == "jax"
    assert report["integration_path"]["id"] == "pjrt-cpp" and report["integration_path"]["key"] == "aurora"
    markdown = (tmp_path / "report.markdown").read_text()
    assert "PJRT C++ API plugin" in markdown and "Client" in markdown
    assert json.loads((tmp_path / "report.sarif").read_text())["runs"][0]["tool"]["driver"]["name"] == "air"
    assert "<testsuite" in (tmp_path / "report.junit").read_text()


def test_explain_rules_docs_and_diff_serve_the_second_pack(tmp_path):
    explained = air("explain", "--pack", PACK, "client-create")
    assert explained.returncode == 0 and "PJRT_Client_Create" in explained.stdout
    listed = air("rules", "--pack", PACK, "--format", "json")
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == len(load_pack(PACK).rows)
    documented = air("docs", PACK, "-o", str(tmp_path / "docs"))
    assert documented.returncode == 0 and (tmp_path / "docs" / "client-create.md").is_file()
    same = air("pack", "diff", PACK, PACK)
    assert same.returncode == 0, same.stdout + same.stderr


def test_compare_and_diff_take_reports_of_the_second_framework(tmp_path):
    for name in ("c_full", "c_stubs"):
        done = air(
            "check",
            "--pack",
            PACK,
            str(FIXTURES / name),
            "--quiet",
            "--format",
            "json",
            "--output",
            str(tmp_path / f"{name}.json"),
        )
        assert done.returncode == 0, done.stderr
    regressed = air("diff", str(tmp_path / "c_full.json"), str(tmp_path / "c_stubs.json"), "--fail-on-regression")
    assert regressed.returncode == 1 and "client-create" in regressed.stdout
    compared = air("compare", str(tmp_path / "c_full.json"), str(tmp_path / "c_stubs.json"))
    assert compared.returncode == 0 and "lumen" in compared.stdout


def test_bare_names_resolve_through_the_frameworks_known_plugins():
    plugins = {backend.name: backend for backend in known_backends(framework_dir("jax"))}
    assert plugins["tt"].url == "https://github.com/tenstorrent/tt-xla"
    assert plugins["cuda"].subdir == "jax_plugins/cuda"


def test_runtime_probes_decide_the_runtime_rows_on_jaxs_cpu_platform(tmp_path):
    report = tmp_path / "report.json"
    two_devices = {"XLA_FLAGS": "--xla_force_host_platform_device_count=2"}
    args = ("check", "--pack", PACK, str(FIXTURES / "c_full"), "--quiet", "--runtime", "--device", "cpu")
    done = air(*args, "--format", "json", "--output", str(report), env=two_devices)
    assert done.returncode == 0, done.stderr
    result = json.loads(report.read_text())
    rows = {row["id"]: row for row in result["rows"]}
    for row in ("runtime-devices", "runtime-jit", "runtime-transfer", "runtime-collectives"):
        assert rows[row]["points"] == 2 and rows[row]["reason"].startswith("verified at runtime"), rows[row]
    assert dict(result["runtime"]["environment"])["platform"] == "cpu (2 devices: cpu)"
    one_device = air(*args, "--format", "json", "--output", str(report), env={"XLA_FLAGS": ""})
    assert one_device.returncode == 0, one_device.stderr
    collectives = next(row for row in json.loads(report.read_text())["rows"] if row["id"] == "runtime-collectives")
    assert collectives["points"] == 1 and "needs two devices" in collectives["reason"]


def test_a_platform_jax_does_not_know_is_a_one_line_error():
    done = air("check", "--pack", PACK, str(FIXTURES / "c_full"), "--quiet", "--runtime", "--device", "nowhere")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_git_url_and_an_sdist_are_checked_with_the_second_pack(tmp_path, monkeypatch):
    monkeypatch.setenv("AIR_CACHE", str(tmp_path / "cache"))
    work = tmp_path / "work"
    shutil.copytree(FIXTURES / "pkg_only", work)
    git(work, "init", "-q", "-b", "main")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "plugin")
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(remote)], check=True, capture_output=True)
    by_url = air("check", "--pack", PACK, f"file://{remote}", "--quiet", "--format", "json", "--output", "-")
    assert by_url.returncode == 0, by_url.stderr
    assert json.loads(by_url.stdout)["integration_path"]["key"] == "acme"

    files, page = tmp_path / "files", tmp_path / "simple" / "jax-plugin-acme"
    files.mkdir()
    page.mkdir(parents=True)
    with tarfile.open(files / "jax_plugin_acme-0.2.tar.gz", "w:gz") as archive:
        for path in sorted((FIXTURES / "pkg_only").rglob("*.py")):
            data = path.read_bytes()
            info = tarfile.TarInfo(f"jax_plugin_acme-0.2/{path.relative_to(FIXTURES / 'pkg_only')}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    (page / "index.html").write_text(
        '<a href="../../files/jax_plugin_acme-0.2.tar.gz">jax_plugin_acme-0.2.tar.gz</a>\n'
    )
    monkeypatch.setenv("PIP_INDEX_URL", f"file://{tmp_path}/simple")
    by_sdist = air(
        "check", "--pack", PACK, "--sdist", "jax-plugin-acme", "--quiet", "--format", "json", "--output", "-"
    )
    assert by_sdist.returncode == 0, by_sdist.stderr
    report = json.loads(by_sdist.stdout)
    assert report["backend"]["source"]["kind"] == "sdist" and report["integration_path"]["key"] == "acme"
