"""Well-known architectures, built offline with Hugging Face ``transformers`` (the optional extra
``benchsite[models]``): random weights from each model's published configuration, nothing
downloaded. Throughput does not depend on what the weights are, only on their shapes and dtype.

Each builder takes ``**overrides`` (fewer layers, a smaller image) so that a quick profile can
keep the architecture and shrink its size. Without ``transformers``, :func:`available` is false
and :func:`require` skips a case with the command that installs it.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from benchsite import SkipCase

__all__ = [
    "DECODERS",
    "INSTALL",
    "MISSING",
    "available",
    "bert_base",
    "decoder",
    "require",
    "resnet50",
    "vit_b16",
]

INSTALL = "pip install 'benchsite[models]'"
MISSING = f"needs Hugging Face transformers, not installed here: {INSTALL}"

# Llama-3.2-1B's public config.json (meta-llama/Llama-3.2-1B): the shape that matters for speed
LLAMA_3_2_1B: dict[str, Any] = {
    "hidden_size": 2048,
    "num_hidden_layers": 16,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 8192,
    "vocab_size": 128256,
    "tie_word_embeddings": True,
    "rope_theta": 500000.0,
    "max_position_embeddings": 131072,
    "head_dim": 64,
}
GPT2_SMALL: dict[str, Any] = {"n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257}


def available() -> bool:
    """Whether ``transformers`` can be imported here (looked up, not imported: it is slow)."""
    try:
        return importlib.util.find_spec("transformers") is not None
    except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules
        return False


def require() -> None:
    """Raise :class:`SkipCase` with the install command when ``transformers`` is missing."""
    if not available():
        raise SkipCase(MISSING)


def resnet50(**overrides: Any) -> Any:
    """ResNet-50 (bottleneck blocks, depths 3-4-6-3, 1000 classes): ``ResNetConfig``'s defaults."""
    from transformers import ResNetConfig, ResNetForImageClassification

    return ResNetForImageClassification(ResNetConfig(num_labels=1000, **overrides))


def vit_b16(**overrides: Any) -> Any:
    """ViT-B/16 (width 768, 12 layers, 12 heads, 16×16 patches of 224×224; 1000 classes)."""
    from transformers import ViTConfig, ViTForImageClassification

    config = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12}
    config |= {"intermediate_size": 3072, "image_size": 224, "patch_size": 16, **overrides}
    return ViTForImageClassification(ViTConfig(num_labels=1000, **config))


def bert_base(**overrides: Any) -> Any:
    """BERT-base (width 768, 12 layers, 12 heads, vocabulary 30,522) with a 2-way classifier."""
    from transformers import BertConfig, BertForSequenceClassification

    config = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12}
    config |= {"intermediate_size": 3072, "vocab_size": 30522, **overrides}
    return BertForSequenceClassification(BertConfig(num_labels=2, **config))


def decoder(name: str, **overrides: Any) -> Any:
    """A causal language model: ``llama-3.2-1b`` (Llama-3.2-1B's shape) or ``gpt2`` (GPT-2
    small), in eval mode."""
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    if name == "llama-3.2-1b":
        model = LlamaForCausalLM(LlamaConfig(**{**LLAMA_3_2_1B, **overrides}))
    elif name == "gpt2":
        model = GPT2LMHeadModel(GPT2Config(**{**GPT2_SMALL, **overrides}))
    else:
        raise SkipCase(f"unknown decoder {name!r}: use llama-3.2-1b or gpt2")
    return model.eval()


DECODERS = ("gpt2", "llama-3.2-1b")
