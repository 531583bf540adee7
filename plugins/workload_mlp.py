"""``mlp-train``: one full training step (forward, loss, backward, optimizer) of a multi-layer
perceptron, over batch sizes.

The smallest realistic model: it shows the batch size at which a GPU's parallelism starts to pay
and how throughput (samples/s) grows with the batch on each device.
"""

from __future__ import annotations

from typing import Any

from benchsite import Case, Device, Workload, hookimpl

WIDTH, DEPTH, CLASSES = 1024, 4, 10


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="mlp-train",
            description=(
                f"One SGD training step of a {DEPTH}-layer, {WIDTH}-wide ReLU MLP "
                "(forward, cross-entropy, backward, optimizer step)."
            ),
            setup=setup_mlp_train,
            params={"batch": [1, 4, 16, 64, 256, 1024, 4096]},
            quick={"batch": [1, 16, 128]},
            tags=("training", "batch-sweep"),
            axis="batch",
        )
    ]


def build_mlp(torch: Any, width: int = WIDTH, depth: int = DEPTH) -> Any:
    layers: list[Any] = []
    for _ in range(depth - 1):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    layers.append(torch.nn.Linear(width, CLASSES))
    return torch.nn.Sequential(*layers)


def mlp_flops(batch: int, width: int = WIDTH, depth: int = DEPTH) -> float:
    """Analytic FLOPs of one training step: forward 2·b·in·out per layer, backward twice that."""
    forward = sum(2.0 * batch * width * out for out in [width] * (depth - 1) + [CLASSES])
    return 3 * forward


def setup_mlp_train(device: Device, params: dict[str, Any]) -> Case:
    import torch

    batch = int(params["batch"])
    torch.manual_seed(0)
    model = build_mlp(torch).to(device.name)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    inputs = torch.randn(batch, WIDTH, device=device.name)
    targets = torch.randint(0, CLASSES, (batch,), device=device.name)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model(inputs), targets).backward()
        optimizer.step()

    return Case(run=step, flops=mlp_flops(batch), items=batch)
