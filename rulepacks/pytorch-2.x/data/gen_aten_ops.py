"""Regenerate the pack's aten operator catalog (aten-ops.json, beside this script) from
torchgen's native_functions.yaml.

    python rulepacks/pytorch-2.x/data/gen_aten_ops.py [--native-functions PATH] [--output PATH]

Without --native-functions, the file is taken from the torchgen package of an installed torch
(it ships inside the wheel at torchgen/packaged/ATen/native/native_functions.yaml). Only the
YAML is read, with torchgen's schema parser; torch itself is not imported.

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
- core: tagged `core` (the core ATen opset).

`variants` lists the overloads that share one signature, as torchgen groups them: an operator's
functional, in-place and out= forms (`add.Tensor`, `add_.Tensor`, `add.out`; `max.dim` and
`max.dim_max`, but not `max.other`), the out= ones torchgen generates (`autogen`) included. A
kernel registered for one of them does the work of the others; groups of one overload are left
out.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import yaml

DEFAULT_OUTPUT = Path(__file__).resolve().parent / "aten-ops.json"
PACKAGED = Path("packaged") / "ATen" / "native" / "native_functions.yaml"


def locate_native_functions() -> Path:
    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torchgen not found: install torch==<version> or pass --native-functions")
    return Path(next(iter(spec.submodule_search_locations))) / PACKAGED


def torch_version_beside(native_functions: Path) -> str:
    site = native_functions.parents[4]
    for info in sorted(site.glob("torch-*.dist-info")):
        return info.name.removeprefix("torch-").removesuffix(".dist-info").split("+")[0]
    return "unknown"


EXPLICIT_KEYS = frozenset({"CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"})
BACKEND_HOOK_SUFFIX = "_overrideable"


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
        + (["core"] if "core" in tags else [])
    )


def catalog(native_functions: Path) -> dict:
    entries = yaml.load(
        native_functions.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    )
    from torchgen.model import FunctionSchema  # shipped beside the YAML, in the same wheel

    ops = {}
    signatures: dict[str, list[str]] = {}
    for entry in entries:
        schema = FunctionSchema.parse(entry["func"])
        name = str(schema.name)
        ops[name] = flags_of(entry, name)
        # the out= overloads torchgen writes for the entry (`autogen: op.out`) share its signature;
        # their generated kernel is an explicit composite that calls the entry
        generated = [part.strip() for part in str(entry.get("autogen", "")).split(",") if part.strip()]
        ops.update((out, ["composite_explicit"]) for out in generated)
        signatures.setdefault(str(schema.signature()), []).extend([name, *generated])
    return {
        "source": "torchgen/packaged/ATen/native/native_functions.yaml",
        "framework_version": torch_version_beside(native_functions),
        "ops": dict(sorted(ops.items())),
        "variants": sorted(sorted(names) for names in signatures.values() if len(names) > 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--native-functions", type=Path, default=None)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args()
    source = args.native_functions or locate_native_functions()
    data = catalog(source)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    text = (
        "{\n"
        + ",\n".join(
            [
                f'  "source": {json.dumps(data["source"])}',
                f'  "framework_version": {json.dumps(data["framework_version"])}',
                '  "ops": {\n'
                + ",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in data["ops"].items())
                + "\n  }",
                '  "variants": [\n' + ",\n".join(f"    {json.dumps(group)}" for group in data["variants"]) + "\n  ]",
            ]
        )
        + "\n}\n"
    )
    args.output.write_text(text, encoding="utf-8")
    print(
        f"{args.output}: {len(data['ops'])} overloads in {len(data['variants'])} groups of variants "
        f"from torch {data['framework_version']}"
    )


if __name__ == "__main__":
    main()
