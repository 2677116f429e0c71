"""The values a Python name may take, read from the module (`air.index.python_values`)."""

from __future__ import annotations

import pytest
from air.index import build_index
from air.index.python_values import bound_values
from helpers.trees import write_tree

FILES = {
    "pkg/__init__.py": "",
    "pkg/tables.py": "import torch\n\nTABLE = {torch.float16: 'h'}\nALIAS = TABLE\nLOOSE = 1e-2\n",
    "pkg/use.py": """\
import pytest
from pkg.tables import ALIAS
from pkg import tables as t

RTOL, ATOL = 1e-3, 5e-2
COMPUTED = make()


@pytest.mark.parametrize("size, tol", [(1, ATOL), (2, 1e-6)])
def test_a(size, tol):
    check(tol)


@pytest.mark.parametrize("tol", make_list())
def test_b(tol):
    check(tol)


def helper(x, tol=1e-1):
    check(tol)
""",
}


@pytest.mark.parametrize(
    ("name", "line", "values"),
    [
        ("ALIAS", None, ("{torch.float16: 'h'}",)),  # imported, then followed through a name
        ("t.LOOSE", None, ("1e-2",)),  # a module imported under another name
        ("ATOL", None, ("5e-2",)),  # bound with another name in one statement
        ("tol", 11, ("5e-2", "1e-6")),  # parametrized, a module constant among the values
        ("tol", 16, None),  # parametrized by a call: not known
        ("tol", 20, None),  # a parameter's default: a caller may pass another value
        ("COMPUTED", None, None),  # bound to a call
        ("MISSING", None, None),
        ("x + 1", None, None),  # not a name
    ],
)
def test_bound_values(tmp_path, name, line, values):
    index = build_index(write_tree(tmp_path, FILES))
    assert bound_values(index, "pkg/use.py", name, line) == values
