"""The models the built-in workloads train and run, built from ``torch.nn`` alone (no downloads).

Each builder returns a fresh ``nn.Module`` on the current default device (use
``with torch.device(...)`` to build straight onto a device, or onto ``meta`` to count FLOPs for
free). Sizes are fixed here so that every host measures the same model.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CLASSES",
    "CNN_CLASSES",
    "CNN_WIDTHS",
    "LSTM",
    "MLP_DEPTH",
    "MLP_WIDTH",
    "TRANSFORMER",
    "build_cnn",
    "build_lstm",
    "build_mlp",
    "build_transformer",
    "lstm_forward_flops",
    "mlp_forward_flops",
    "mlp_train_flops",
]

MLP_WIDTH, MLP_DEPTH, CLASSES = 1024, 4, 10
CNN_WIDTHS = (64, 128, 256, 512)
CNN_CLASSES = 1000
TRANSFORMER = {"d_model": 512, "nhead": 8, "dim_feedforward": 2048, "layers": 4}
LSTM = {"input_size": 256, "hidden_size": 512, "num_layers": 2}


def build_mlp(width: int = MLP_WIDTH, depth: int = MLP_DEPTH) -> Any:
    """A ``depth``-layer ReLU perceptron, ``width`` wide, with ``CLASSES`` outputs."""
    import torch

    layers: list[Any] = []
    for _ in range(depth - 1):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    layers.append(torch.nn.Linear(width, CLASSES))
    return torch.nn.Sequential(*layers)


def mlp_forward_flops(batch: int, width: int = MLP_WIDTH, depth: int = MLP_DEPTH) -> float:
    """Analytic forward FLOPs: 2·batch·in·out per linear layer (biases and ReLU not counted)."""
    return sum(2.0 * batch * width * out for out in [width] * (depth - 1) + [CLASSES])


def mlp_train_flops(batch: int, width: int = MLP_WIDTH, depth: int = MLP_DEPTH) -> float:
    """Analytic FLOPs of a training step: the forward, the weight gradients (as much again) and
    the input gradients of every layer but the first (whose input needs none)."""
    forward = mlp_forward_flops(batch, width, depth)
    return 3 * forward - 2.0 * batch * width * width


def _basic_block(torch: Any, cin: int, cout: int, stride: int) -> Any:
    nn = torch.nn

    class BasicBlock(nn.Module):
        """Two 3×3 convolutions with batch norm and a residual shortcut (ResNet's block)."""

        def __init__(self) -> None:
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
                nn.BatchNorm2d(cout),
                nn.ReLU(inplace=True),
                nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                nn.BatchNorm2d(cout),
            )
            self.shortcut = (
                nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                if stride != 1 or cin != cout
                else nn.Identity()
            )

        def forward(self, x: Any) -> Any:
            return torch.relu(self.body(x) + self.shortcut(x))

    return BasicBlock()


def build_cnn(checkpointing: bool = False) -> Any:
    """A ResNet-10-style image classifier: a 7×7 stem, four stages of one basic block each
    (64 → 512 channels), global pooling and a 1000-way linear head. With ``checkpointing`` each
    stage's activations are recomputed in the backward pass instead of stored."""
    import torch

    nn = torch.nn
    stem = nn.Sequential(
        nn.Conv2d(3, 64, 7, 2, 3, bias=False),
        nn.BatchNorm2d(64),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(3, 2, 1),
    )
    stages, cin = [], CNN_WIDTHS[0]
    for index, cout in enumerate(CNN_WIDTHS):
        stages.append(_basic_block(torch, cin, cout, 1 if index == 0 else 2))
        cin = cout
    if checkpointing:
        stages = [_checkpointed(torch, stage) for stage in stages]
    head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, CNN_CLASSES))
    return nn.Sequential(stem, *stages, head)


def build_transformer(checkpointing: bool = False) -> Any:
    """An encoder stack (``nn.TransformerEncoder`` of pre-norm, GELU, batch-first layers) over
    token embeddings of width ``d_model``, then a per-token linear head. With ``checkpointing``
    each layer's activations are recomputed in the backward pass instead of stored."""
    import torch

    nn, spec = torch.nn, TRANSFORMER
    layer = nn.TransformerEncoderLayer(
        spec["d_model"],
        spec["nhead"],
        spec["dim_feedforward"],
        dropout=0.0,
        activation="gelu",
        batch_first=True,
        norm_first=True,
    )
    encoder = nn.TransformerEncoder(layer, spec["layers"], enable_nested_tensor=False)
    if checkpointing:
        encoder.layers = nn.ModuleList(_checkpointed(torch, inner) for inner in encoder.layers)
    return nn.Sequential(encoder, nn.Linear(spec["d_model"], CLASSES))


def _checkpointed(torch: Any, inner: Any) -> Any:
    """``inner`` wrapped so that, in training, its activations are recomputed in backward."""

    class Checkpointed(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = inner

        def __getattr__(self, name: str) -> Any:
            try:
                return super().__getattr__(name)
            except AttributeError:  # nn.TransformerEncoder inspects its layers' attributes
                return getattr(self.inner, name)

        def forward(self, x: Any, **kwargs: Any) -> Any:
            if not self.training:
                return self.inner(x, **kwargs)
            return torch.utils.checkpoint.checkpoint(self.inner, x, use_reentrant=False, **kwargs)

    return Checkpointed()


def build_lstm() -> Any:
    """A two-layer LSTM over a sequence, classifying from the last hidden state."""
    import torch

    class SequenceClassifier(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = torch.nn.LSTM(**LSTM, batch_first=True)
            self.head = torch.nn.Linear(LSTM["hidden_size"], CLASSES)

        def forward(self, x: Any) -> Any:
            output, _ = self.lstm(x)
            return self.head(output[:, -1])

    return SequenceClassifier()


def lstm_forward_flops(batch: int, seq_len: int) -> float:
    """Analytic LSTM forward FLOPs: four gates, each 2·(in + hidden)·hidden per step and layer
    (the same count on every device, whether cuDNN fuses the layer or not)."""
    hidden, total, size_in = LSTM["hidden_size"], 0.0, LSTM["input_size"]
    for _ in range(LSTM["num_layers"]):
        total += 4 * 2.0 * (size_in + hidden) * hidden * batch * seq_len
        size_in = hidden
    return total + 2.0 * batch * hidden * CLASSES
