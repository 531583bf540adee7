"""``llm-generate``: a decoder language model measured the way llama.cpp's ``llama-bench`` does —
prompt processing (``pp512``: one forward over a 512-token prompt, tokens/s) and text
generation (``tg128``: 128 tokens one at a time, tokens/s) — per precision and batch. Its item is
a token (``Workload.item``), so every page reads its throughput in tokens/s.

The models are Llama-3.2-1B's shape and GPT-2 small, built offline by ``transformers`` with
random weights (:mod:`benchsite.toolkit.architectures`); the quick profile uses a tiny GPT-2
(``scale=tiny``) with ``pp32``/``tg8``. Generation is greedy with ``min_new_tokens`` equal to
the count and no end-of-sequence token, so random weights never stop early. ``cache`` is
``dynamic`` (eager, the default cache) or ``static-compiled`` (a static KV cache, with which
``transformers`` compiles the decoding step with ``torch.compile``: the serving fast path; its
first call, compile included, is stored as ``compile_s``; GPU only, skipped on the CPU with
the reason).

Each case stores, besides its time per call: ``ttft_s`` (time to first token: a prompt case's
prefill and first token, one timed call), ``token_p50_s``/``token_p90_s``/``token_p99_s`` (a
generation case's per-token latencies, from one call timed token by token), ``kv_cache_bytes``
(the KV cache at the end of the call: 2 × layers × KV heads × head size × context × batch ×
bytes per value) and ``weight_bytes``. A generation case declares as its bytes what each token
must read — every weight once per step plus the KV cache so far — and ``memory_bound`` = 1, so
the site shows its GB/s as a share of the device's measured memory bandwidth
(:mod:`benchsite.tables.bandwidth`): at batch 1 that share is how close it runs to the
physical limit.
"""

from __future__ import annotations

import itertools
import statistics
import time
from typing import Any

from benchsite import Case, Device, SkipCase, Workload, hookimpl
from benchsite.toolkit import architectures
from benchsite.toolkit.precision import check_precision, tensor_dtype
from benchsite.toolkit.steps import first_call_s

TINY_GPT2 = {"n_embd": 64, "n_layer": 2, "n_head": 2, "vocab_size": 1000}
TINY_GPT2 |= {"bos_token_id": 0, "eos_token_id": 0}
CPU_MAX_BATCH = 4  # larger generation batches on a CPU take minutes per call and say nothing new


@hookimpl
def register_workloads() -> list[Workload]:
    base = {"scale": ["real"], "model": list(architectures.DECODERS), "batch": [1]}
    full = [
        {**base, "phase": ["pp512", "tg128"], "precision": ["fp32", "bf16", "fp16"]}
        | {"cache": ["dynamic"]},
        {**base, "phase": ["tg128"], "precision": ["bf16"], "cache": ["static-compiled"]},
        {**base, "phase": ["pp512", "tg128"], "precision": ["bf16"], "batch": [4, 16, 64]}
        | {"cache": ["dynamic"]},
    ]
    quick = [
        {"scale": ["tiny"], "model": ["gpt2"], "phase": ["pp32", "tg8"], "precision": ["fp32"]}
        | {"batch": [1], "cache": ["dynamic"]}
    ]
    description = (
        "Prompt processing (pp512) and generation (tg128) of a Llama-3.2-1B-shaped decoder "
        "and GPT-2 small, llama-bench style: tokens/s, time to first token, per-token "
        "latency, KV cache; eager and static cache + torch.compile."
    )
    if not architectures.available():
        description = f"unavailable: {architectures.MISSING}. {description}"
        full = quick
    return [
        Workload(
            name="llm-generate",
            description=description,
            setup=setup_generate,
            params=full,
            quick=quick,
            tags=("inference", "language-model", "large-model", "batch-sweep"),
            axis="batch",
            item="token",
        )
    ]


def setup_generate(device: Device, params: dict[str, Any]) -> Case:
    import torch

    architectures.require()
    phase, batch, precision = str(params["phase"]), int(params["batch"]), params["precision"]
    check_precision(device, precision)
    if device.kind == "cpu" and batch > CPU_MAX_BATCH:
        raise SkipCase(f"generation on the CPU measured up to batch {CPU_MAX_BATCH}")
    static = params.get("cache") == "static-compiled"
    if static and phase.startswith("pp"):
        raise SkipCase("a static cache changes generation only: the prompt is one forward")
    if static and device.kind == "cpu":
        raise SkipCase(
            "static cache + torch.compile measured on GPUs only (compiling each "
            "shape of a decoder on the CPU takes minutes)"
        )
    torch.manual_seed(0)
    with torch.device(device.name):
        model = build_decoder(params).to(tensor_dtype(precision))
    tokens = int(phase[2:])
    if phase.startswith("pp"):
        return prompt_case(device, model, batch, tokens)
    return generate_case(device, model, batch, tokens, static)


def build_decoder(params: dict[str, Any]) -> Any:
    overrides = TINY_GPT2 if params.get("scale") == "tiny" else {}
    return architectures.decoder(str(params["model"]), **overrides)


def prompt_case(device: Device, model: Any, batch: int, tokens: int) -> Case:
    """One forward over the prompt, filling the cache (the first token's logits come out)."""
    import torch

    ids = _prompt(model, batch, tokens, device)

    def run() -> None:
        with torch.inference_mode():
            model(ids, use_cache=True)

    metrics = {
        "ttft_s": _first_token_s(device, model, ids),
        "kv_cache_bytes": kv_cache_bytes(model, batch, tokens),
        "weight_bytes": weight_bytes(model),
    }
    return Case(run=run, flops=_forward_flops(model, ids), items=batch * tokens, metrics=metrics)


def generate_case(device: Device, model: Any, batch: int, tokens: int, static: bool) -> Case:
    """``tokens`` new tokens after a one-token prompt, greedily, never stopping early."""
    import torch

    ids = _prompt(model, batch, 1, device)
    settings = {"max_new_tokens": tokens, "min_new_tokens": tokens, "do_sample": False}
    settings |= {"eos_token_id": None, "pad_token_id": 0}
    if static:  # transformers compiles the decoding step itself for a static cache on a GPU
        settings["cache_implementation"] = "static"

    def run() -> None:
        with torch.inference_mode():
            model.generate(ids, **settings)

    first_s = first_call_s(device, run)  # the first call compiles (static), warms the allocator
    latencies = _token_latencies(device, model, ids, settings)
    weights = weight_bytes(model)
    read = tokens * weights + sum(kv_cache_bytes(model, batch, 1 + t) for t in range(tokens))
    metrics = {
        "token_p50_s": _percentile(latencies, 50),
        "token_p90_s": _percentile(latencies, 90),
        "token_p99_s": _percentile(latencies, 99),
        "kv_cache_bytes": kv_cache_bytes(model, batch, 1 + tokens),
        "weight_bytes": weights,
        "memory_bound": 1.0,
        **({"compile_s": first_s} if static else {}),
    }
    teardown = _reset_compiled if static else None
    return Case(
        run=run, bytes=float(read), items=batch * tokens, metrics=metrics, teardown=teardown
    )


def _prompt(model: Any, batch: int, tokens: int, device: Device) -> Any:
    import torch

    vocab = int(model.config.vocab_size)
    return torch.randint(0, vocab, (batch, tokens), device=device.name)


class TokenClock:
    """A ``generate`` streamer that notes, after a device synchronize, when each token is out
    (the prompt first)."""

    def __init__(self, device: Device) -> None:
        self.device, self.times = device, [time.perf_counter()]

    def put(self, value: Any) -> None:
        self.device.synchronize()
        self.times.append(time.perf_counter())

    def end(self) -> None:
        pass


def _token_latencies(device: Device, model: Any, ids: Any, settings: dict[str, Any]) -> list[float]:
    """Seconds between consecutive generated tokens in one call (the first from the prompt)."""
    import torch

    clock = TokenClock(device)
    device.synchronize()
    clock.times[0] = time.perf_counter()
    with torch.inference_mode():
        model.generate(ids, streamer=clock, **settings)
    marks = clock.times[1:]  # put() is called with the prompt first: the first mark is its end
    return [later - earlier for earlier, later in itertools.pairwise(marks)]


def _first_token_s(device: Device, model: Any, ids: Any) -> float:
    """One timed call from the prompt to the first generated token (after a warm-up call)."""
    import torch

    settings = {"max_new_tokens": 1, "do_sample": False, "eos_token_id": None, "pad_token_id": 0}
    with torch.inference_mode():
        model.generate(ids, **settings)
        device.synchronize()
        started = time.perf_counter()
        model.generate(ids, **settings)
        device.synchronize()
    return time.perf_counter() - started


def _percentile(values: list[float], percent: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[percent - 1]


def weight_bytes(model: Any) -> float:
    """Bytes of every parameter (a tied embedding and output layer counted once)."""
    return float(sum(p.numel() * p.element_size() for p in model.parameters()))


def kv_cache_bytes(model: Any, batch: int, context: int) -> float:
    """Bytes of the KV cache holding ``context`` tokens of ``batch`` sequences."""
    config = model.config
    layers = config.num_hidden_layers
    heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    value_bytes = next(model.parameters()).element_size()
    return float(2 * layers * heads * head_dim * context * batch * value_bytes)


def _forward_flops(model: Any, ids: Any) -> float | None:
    """FLOPs of one prompt forward, counted by ``FlopCounterMode`` on the case's device (the
    attention masks of some decoders cannot be built on ``meta``); None where the counter has
    no formula for an operator's shapes (torch's attention formula refuses grouped-query
    attention, whose keys have fewer heads than its queries): the case is then measured in
    tokens/s without a TFLOP/s."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    try:
        with FlopCounterMode(display=False) as counter, torch.inference_mode():
            model(ids, use_cache=False)
    except AssertionError:  # the counter's own shape checks, not the model's
        return None
    return float(counter.get_total_flops())


def _reset_compiled() -> None:
    import torch

    torch._dynamo.reset()  # drop compiled graphs: the worker lives on to the next case
