import torch
import torch_toy  # noqa: F401


def test_tensor_on_device():
    assert torch.ones(2, device="toy").device.type == "toy"
