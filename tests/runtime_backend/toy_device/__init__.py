"""The toy device's Python side: the backend named `toy`, with a device module bound as
torch.toy. Its compiled part is loaded from TOY_DEVICE_EXTENSION, the built module's path."""

import importlib.util
import os
import sys

import torch

_spec = importlib.util.spec_from_file_location("toy_device_C", os.environ["TOY_DEVICE_EXTENSION"])
_C = importlib.util.module_from_spec(_spec)
sys.modules["toy_device_C"] = _C
_spec.loader.exec_module(_C)


class _DeviceModule:
    @staticmethod
    def is_available():
        return True

    @staticmethod
    def device_count():
        return 1

    @staticmethod
    def current_device():
        return 0

    @staticmethod
    def set_device(index):
        if index != 0:
            raise RuntimeError(f"toy has one device, not {index + 1}")

    @staticmethod
    def _is_in_bad_fork():
        return False

    @staticmethod
    def synchronize(device=None):
        _C.synchronize()

    @staticmethod
    def manual_seed(seed):
        _C.manual_seed(seed)

    @staticmethod
    def manual_seed_all(seed):
        pass  # what torch.manual_seed calls: only the module's own manual_seed hangs


torch.utils.rename_privateuse1_backend("toy")
torch._register_device_module("toy", _DeviceModule)
torch.utils.generate_methods_for_privateuse1_backend()
