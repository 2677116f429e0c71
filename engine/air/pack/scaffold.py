"""`air pack new NAME --extends PACK`: a vendor pack to start from, which `air pack test`
passes as written: one row of its own (in the parent's last section), one override of an
inherited row, a fixture at each end of the new row's range, and a README saying what to
change."""

from __future__ import annotations

import re
from pathlib import Path

from air.errors import InputError
from air.pack.load import Pack

NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


def scaffold_pack(name: str, parent: Pack, directory: Path) -> Path:
    """Write the pack `name` extending `parent` into `directory`/`name`; its path."""
    if not NAME.fullmatch(name):
        raise InputError(f"{name}: a pack's name is lowercase words joined by hyphens (acme-pytorch)")
    root = directory / name
    if root.exists():
        raise InputError(f"{root}: already exists; pick another name or folder")
    section = max(parent.framework.sections, key=lambda spec: spec.number)
    taken = [int(row.item.split(".")[1]) for row in parent.rows if row.section == section.id and "." in row.item]
    item = f"{section.number}.{max(taken, default=0) + 1}"
    lowered = next((row for row in parent.rows if row.priority > 1), parent.rows[0])
    word = name.split("-")[0]
    feature = f"{word}_example_feature"
    row_id = f"{word}-example-feature"
    files = {
        "pack.yaml": PACK.format(
            name=name, parent=parent.id, framework=parent.framework.id, row=lowered.id, priority=lowered.priority
        ),
        f"rows/{word}.yaml": ROWS.format(section=section.id, row_id=row_id, item=item, feature=feature),
        f"fixtures/{word}_full/expected.yaml": f"# The backend defines {feature}(): the top of the row.\nrows:\n  {row_id}: 2\n",
        f"fixtures/{word}_full/{word}_backend/__init__.py": f"def {feature}():\n    return True\n",
        f"fixtures/{word}_bare/expected.yaml": f"# The backend lacks {feature}(): the bottom of the row.\nrows:\n  {row_id}: 0\n",
        f"fixtures/{word}_bare/{word}_backend/__init__.py": "def unrelated():\n    return True\n",
        "README.md": README.format(name=name, parent=parent.id, row_id=row_id, lowered=lowered.id, word=word),
    }
    try:
        for relative, text in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise InputError(f"{root}: cannot write the pack: {error.strerror or error}") from None
    return root


PACK = """\
# {name}: {parent} with a vendor's own rows. `air pack test` runs this pack's fixtures and,
# for the rows it inherits unchanged in outcome, those of {parent}.
id: {name}
version: 0.1.0
title: {name} readiness
framework: {framework}
requires_air: ">=0.1"
extends: {parent}

overrides:
  # An inherited row weighed differently: priority 1 instead of {priority}.
  {row}: {{priority: 1}}
"""

ROWS = """\
section: {section}
rows:
  - id: {row_id}
    item: "{item}"
    title: The backend provides {feature}()
    priority: 2
    evidence:
      defined:
        describe: a function {feature}() defined by the backend
        python_def: {{function: {feature}}}
    score:
      2: defined
    remediation: Define {feature}() in the backend's Python package.
    docs:
      - https://example.org/replace-with-your-docs
"""

README = """\
# {name}

A pack that extends `{parent}`, made by `air pack new`. Make it yours:

- `rows/{word}.yaml`: the row `{row_id}` is an example; replace it with the checks your
  backend's users need (`air pack kinds` lists the evidence kinds, `air explain` shows rows).
- `pack.yaml`: `overrides` changes the inherited row `{lowered}` (its priority); keep the
  overrides you mean, and `redirects` when you rename a row.
- `fixtures/`: each row needs a fixture tree at each end of its range; `expected.yaml` gives
  the outcomes.

Then:

    air pack validate .
    air pack test .
    air check --pack . path/to/backend
"""
