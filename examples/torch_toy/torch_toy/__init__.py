"""A toy accelerator: enough registration for PyTorch to know it, and some honest gaps."""

import torch

from torch_toy import toy


def _autoload():
    torch.utils.rename_privateuse1_backend("toy")
    torch._register_device_module("toy", toy)
    torch.utils.generate_methods_for_privateuse1_backend()


_autoload()
