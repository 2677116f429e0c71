"""Probes of small models built in code (nothing downloaded): trained or differentiated on the
device and on the CPU from the same weights and data, compared in float32."""


def _cnn(torch):
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(8 * 4 * 4, 10),
    )


def _losses(torch, model, device, steps):
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    generator = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(steps):
        x = torch.randn(16, 3, 8, 8, generator=generator).to(device)
        y = torch.randint(0, 10, (16,), generator=generator).to(device)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach().cpu()))
    return losses


def cnn_training(ctx):
    """Eight SGD steps of a small CNN: the device's losses track the CPU's within 1e-3."""
    torch = ctx.torch
    on_device = _losses(torch, _cnn(torch), ctx.device, 8)
    on_cpu = _losses(torch, _cnn(torch), "cpu", 8)
    worst = max(abs(a - b) / max(abs(b), 1e-6) for a, b in zip(on_device, on_cpu))
    assert worst <= 1e-3, f"the loss curves part by {worst:.2g} (relative): {on_device} vs {on_cpu}"
    return f"8 training steps of a small CNN track the CPU's losses (largest relative difference {worst:.2g})"


def transformer_block(ctx):
    """A transformer encoder layer's output and input gradient match the CPU's."""
    torch = ctx.torch
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True)
    x = torch.randn(2, 6, 32, generator=torch.Generator().manual_seed(2))
    results = []
    for device in (ctx.device, "cpu"):
        model = layer.to(device)
        inputs = x.to(device, copy=True).requires_grad_()
        out = model(inputs)
        out.pow(2).sum().backward()
        results.append((out.detach().cpu(), inputs.grad.cpu()))
    (out, grad), (reference_out, reference_grad) = results
    torch.testing.assert_close(out, reference_out, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(grad, reference_grad, atol=1e-4, rtol=1e-4)
    return "a transformer encoder layer's output and input gradient match the CPU's within 1e-4"
