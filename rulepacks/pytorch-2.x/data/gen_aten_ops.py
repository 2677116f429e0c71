"""Regenerate the pack's aten operator catalogs (aten-ops-<release>.json, beside this script),
one per PyTorch minor release, from torchgen's native_functions.yaml and tags.yaml.

    python rulepacks/pytorch-2.x/data/gen_aten_ops.py [RELEASE ...] [--output-dir DIR]
    python rulepacks/pytorch-2.x/data/gen_aten_ops.py --native-functions PATH --output PATH

Each RELEASE (2.7, or every minor release from 2.4 through the newest on the package index
when none is given) is read from its newest patch release's wheel, which `pip download --no-deps`
fetches (the macOS one: PyPI's smallest build; only its torchgen files are read, which are the
same in every build). Only the two YAML files are read, with the schema parser of the torchgen
shipped in that same wheel; torch itself is never imported.

Each overload gets its flags:
- composite: a CompositeImplicitAutograd kernel (declared, or implied by an entry without
  `dispatch` or `structured_delegate`): it decomposes into other ops, autograd included, and
  needs no backend kernel;
- composite_explicit: a CompositeExplicitAutograd or CompositeExplicitAutogradNonFunctional
  kernel. Like the implicit one it is registered for every backend that has no kernel of its
  own (other keys beside it, `CPU, CUDA: own_kernel`, do not change that), but it is written
  with other ops, often an overload of its own family (`abs` runs through `abs.out`): the
  catalog's reader counts it as needing no kernel only when its whole family does. The
  `*_overrideable` ops are not flagged: their explicit kernel is a stub that raises, left for
  out-of-tree backends to override; the out= overloads torchgen generates (`autogen`) are
  flagged so too, their kernel calling the entry's;
- core: tagged `core` (the core ATen opset), a tag tags.yaml declares.

`variants` lists the overloads that share one signature, as torchgen groups them: an operator's
functional, in-place and out= forms (`add.Tensor`, `add_.Tensor`, `add.out`; `max.dim` and
`max.dim_max`, but not `max.other`), the out= ones torchgen generates (`autogen`) included. A
kernel registered for one of them does the work of the others; groups of one overload are left
out.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
OLDEST = (2, 4)
PACKAGED = "torchgen/packaged/ATen/native"
# PyPI's smallest torch builds; a release has wheels for one of these platforms
WHEEL_PLATFORMS = ("macosx_11_0_arm64", "macosx_14_0_arm64")
WHEEL_PYTHON = "3.11"
EXPLICIT_KEYS = frozenset({"CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"})
BACKEND_HOOK_SUFFIX = "_overrideable"
CORE_TAG = "core"


def flags_of(entry: dict, name: str) -> list[str]:
    dispatch = entry.get("dispatch")
    keys = {key.strip() for group in (dispatch or {}) for key in group.split(",")}
    implicit = "CompositeImplicitAutograd" in keys or (dispatch is None and "structured_delegate" not in entry)
    explicit = bool(keys & EXPLICIT_KEYS) and not name.split(".", 1)[0].endswith(BACKEND_HOOK_SUFFIX)
    tags = entry.get("tags", [])
    tags = [tags] if isinstance(tags, str) else tags
    return (
        (["composite"] if implicit else [])
        + (["composite_explicit"] if explicit else [])
        + (["core"] if CORE_TAG in tags else [])
    )


def _load(path: Path) -> list:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def catalog(native_functions: Path, version: str) -> dict:
    tags = native_functions.with_name("tags.yaml")
    if tags.is_file() and CORE_TAG not in {entry.get("tag") for entry in _load(tags)}:
        raise SystemExit(f"{tags}: declares no {CORE_TAG!r} tag")
    from torchgen.model import FunctionSchema  # shipped beside the YAML, in the same wheel

    ops = {}
    signatures: dict[str, list[str]] = {}
    for entry in _load(native_functions):
        schema = FunctionSchema.parse(entry["func"])
        name = str(schema.name)
        ops[name] = flags_of(entry, name)
        # the out= overloads torchgen writes for the entry (`autogen: op.out`) share its signature;
        # their generated kernel is an explicit composite that calls the entry
        generated = [part.strip() for part in str(entry.get("autogen", "")).split(",") if part.strip()]
        ops.update((out, ["composite_explicit"]) for out in generated)
        signatures.setdefault(str(schema.signature()), []).extend([name, *generated])
    return {
        "source": f"{PACKAGED}/native_functions.yaml",
        "framework_version": version,
        "ops": dict(sorted(ops.items())),
        "variants": sorted(sorted(names) for names in signatures.values() if len(names) > 1),
    }


def write_catalog(data: dict, output: Path) -> None:
    fields = [
        f'  "source": {json.dumps(data["source"])}',
        f'  "framework_version": {json.dumps(data["framework_version"])}',
        '  "ops": {\n' + ",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in data["ops"].items()) + "\n  }",
        '  "variants": [\n' + ",\n".join(f"    {json.dumps(group)}" for group in data["variants"]) + "\n  ]",
    ]
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("{\n" + ",\n".join(fields) + "\n}\n", encoding="utf-8")
    print(
        f"{output}: {len(data['ops'])} overloads in {len(data['variants'])} groups of variants "
        f"from torch {data['framework_version']}"
    )


def _pip(*arguments: str) -> str:
    # the machine's own pip configuration may cap torch's release; the index is asked as it is
    environment = {**os.environ, "PIP_CONFIG_FILE": os.devnull}
    done = subprocess.run(
        [sys.executable, "-m", "pip", *arguments], capture_output=True, text=True, env=environment, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"pip {arguments[0]} failed:\n{done.stderr.strip()}")
    return done.stdout


def published_releases() -> list[str]:
    """Every minor release from the oldest supported through the newest on the package index."""
    listed = _pip("index", "versions", "torch")
    versions = re.search(r"Available versions: (.*)", listed)
    if versions is None:
        raise SystemExit(f"cannot read torch's releases from pip index:\n{listed}")
    minors = {tuple(int(part) for part in v.strip().split(".")[:2]) for v in versions.group(1).split(",")}
    return [f"{major}.{minor}" for major, minor in sorted(minors) if (major, minor) >= OLDEST]


def from_wheel(release: str, output: Path) -> None:
    """Download the newest wheel of `release`, unpack its torchgen, and write the catalog from it
    in a fresh interpreter (each release parses its YAML with its own torchgen)."""
    with tempfile.TemporaryDirectory() as scratch:
        platforms = [option for platform in WHEEL_PLATFORMS for option in ("--platform", platform)]
        _pip(
            "download", "--no-deps", "--only-binary=:all:", *platforms, "--python-version", WHEEL_PYTHON,
            "--dest", scratch, f"torch=={release}.*",
        )  # fmt: skip
        wheel = next(Path(scratch).glob("torch-*.whl"))
        version = wheel.name.split("-")[1]
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(scratch, [name for name in archive.namelist() if name.startswith("torchgen/")])
        native_functions = Path(scratch) / PACKAGED / "native_functions.yaml"
        command = [sys.executable, __file__, "--native-functions", str(native_functions), "--version", version]
        environment = {**os.environ, "PYTHONPATH": scratch}
        subprocess.run([*command, "--output", str(output)], env=environment, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("releases", nargs="*", help="minor releases (2.7); default: 2.4 through the newest")
    parser.add_argument("--output-dir", type=Path, default=HERE)
    parser.add_argument("--native-functions", type=Path, help="read this file instead of a downloaded wheel")
    parser.add_argument("--version", help="with --native-functions: the release it comes from")
    parser.add_argument("--output", type=Path, help="with --native-functions: the catalog to write")
    args = parser.parse_args()
    if args.native_functions:
        if not (args.version and args.output):
            parser.error("--native-functions needs --version and --output")
        write_catalog(catalog(args.native_functions, args.version), args.output)
        return
    for release in args.releases or published_releases():
        from_wheel(release, args.output_dir / f"aten-ops-{release}.json")


if __name__ == "__main__":
    main()
