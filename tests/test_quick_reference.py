"""The registration quick reference ticks a mechanism only where the backend's product code uses it."""

from __future__ import annotations

from air.run import check
from helpers.trees import write_tree

BACKEND = {
    "torch_qr/__init__.py": (
        "import torch\n"
        "from torch_qr import device\n\n"
        "torch.utils.rename_privateuse1_backend('qr')\n"
        "# torch._register_device_module('qr', device)\n"
        "torch.__setattr__('qr', device)\n"
    ),
    "torch_qr/device.py": "def is_available():\n    return True\n",
    "csrc/Ops.cpp": (
        "#include <torch/library.h>\n\n"
        "/* TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) { m.fallback(autograd_fallback); } */\n"
        'TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {\n  m.impl("add.Tensor", &qr_add);\n}\n'
    ),
    "docs/registration.md": 'Call `torch._register_device_module("qr", mod)` and TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m).\n',
    "tests/test_register.py": (
        "import torch\nimport torch_qr\n\n"
        "def test_register():\n    torch._register_device_module('qr', torch_qr.device)\n"
    ),
}


def test_an_entry_ticks_only_where_product_code_uses_it(tmp_path, pack):
    report = check(write_tree(tmp_path, BACKEND), pack)
    entries = {entry.entry: entry for entry in report.quick_reference}
    renamed = entries["torch.utils.rename_privateuse1_backend / c10::register_privateuse1_backend"]
    assert (renamed.status, renamed.location) == ("used", "torch_qr/__init__.py:4")
    # the row earns 1 through torch.__setattr__; the mechanism itself is in a comment, docs and a test
    module = entries["torch._register_device_module"]
    assert (module.status, module.location, module.points) == ("unused", "", 1)
    # kernels on the device key earn the autograd row 1; its key is only in a commented-out block and docs
    autograd = next(entry for name, entry in entries.items() if "AutogradPrivateUse1, m)" in name)
    assert (autograd.status, autograd.points) == ("unused", 1)
    fork_guard = entries["C10_REGISTER_GUARD_IMPL(<in-tree key>, Impl)"]
    assert fork_guard.status == "not_applicable"
