"""``preprocess``: a typical image input pipeline on a batch of uint8 images, on the CPU versus
on the GPU including the upload.

Each call takes a batch of 3×320×320 uint8 images (as decoded JPEGs arrive), crops 256×256,
converts to float, resizes to 224×224 (bilinear, antialiased), flips a fixed half of the images
horizontally and normalizes with the ImageNet mean and standard deviation. On a GPU the call
starts from pinned host memory (what ``DataLoader(pin_memory=True)`` hands over) and includes
the upload. It answers "should augmentation move to the GPU?": if the GPU's time per image,
upload included, is far below the CPU's, a CPU-bound input pipeline can be moved. Items are
images.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchsite import Case, Device, Workload, hookimpl

SOURCE, CROP, OUTPUT = 320, 256, 224
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


@hookimpl
def register_workloads() -> list[Workload]:
    return [
        Workload(
            name="preprocess",
            description=(
                "Crop, uint8→float, antialiased resize 320→224, flip and normalize a batch of "
                "images; on a GPU including the upload from pinned memory."
            ),
            setup=setup_preprocess,
            params={"batch": [1, 8, 32, 128, 256]},
            quick={"batch": [1, 8, 32]},
            tags=("input-pipeline", "batch-sweep"),
            axis="batch",
        )
    ]


def setup_preprocess(device: Device, params: dict[str, Any]) -> Case:
    import torch

    batch = int(params["batch"])
    generator = torch.Generator().manual_seed(0)
    images = torch.randint(
        0, 256, (batch, 3, SOURCE, SOURCE), dtype=torch.uint8, generator=generator
    )
    if device.kind == "cuda":  # a DataLoader with pin_memory=True hands over pinned batches
        images = images.pin_memory()
    flip = (torch.arange(batch) % 2 == 0).view(batch, 1, 1, 1).to(device.name)
    mean = torch.tensor(MEAN, device=device.name).view(1, 3, 1, 1) * 255
    std = torch.tensor(STD, device=device.name).view(1, 3, 1, 1) * 255
    run = _pipeline(device, images, flip, mean, std)
    return Case(run=run, items=batch)


def _pipeline(device: Device, images: Any, flip: Any, mean: Any, std: Any) -> Callable[[], Any]:
    import torch
    import torch.nn.functional as F

    top = left = (SOURCE - CROP) // 2

    def call() -> Any:
        x = images.to(device.name, non_blocking=True)
        x = x[:, :, top : top + CROP, left : left + CROP].float()
        x = F.interpolate(x, size=(OUTPUT, OUTPUT), mode="bilinear", antialias=True)
        x = torch.where(flip, x.flip(-1), x)
        return (x - mean) / std

    return call
