"""SmoothQuant for the int8 export: move activation outliers into the weights before quantising.

Dynamic int8 (convert.quantize_int8) quantises each MatMul input with a single scale per tensor.
BERT-family hidden states carry a few channels tens of times larger than the others, so that one
scale leaves the ordinary channels a handful of int8 steps. Following SmoothQuant (Xiao et al.,
ICML 2023), each Linear's input channel j is divided by s_j and its weight column multiplied by
s_j — the same function in exact arithmetic — with s_j = max|x_j|^α / max|W_{·j}|^(1-α) measured
on calibration text, so activations and weights share the range.

BERT is post-LayerNorm: the LayerNorm output is also the residual stream, so 1/s cannot be folded
into the LayerNorm as in pre-LN models; it stays an explicit per-channel Mul in front of the
MatMul, which costs little next to the MatMul it makes quantisable.
"""
from __future__ import annotations

import copy
from importlib import resources
from pathlib import Path

import pandas as pd
import torch

CALIBRATION_BATCH = 64
# How much of each channel's range moves into the weights (0: none, 1: all). Measured on the
# default MiniLM against torch on the 4,739 parity names (README, "int8 accuracy experiments"):
# top-1 agreement 0.825 unsmoothed; 0.784 / 0.879 / 0.888 / 0.884 / 0.880 / 0.859 / 0.829 at
# α 0.5 / 0.65 / 0.7 / 0.75 / 0.8 / 0.85 / 0.95 (0.75 was fixed after the first two).
ALPHA = 0.75


class SmoothedLinear(torch.nn.Module):
    """linear(x / s) with the weight columns scaled by s: the same output, a flatter input."""

    def __init__(self, linear: torch.nn.Linear, scale: torch.Tensor):
        super().__init__()
        with torch.no_grad():
            linear.weight.mul_(scale)  # weight is (out, in): column j meets input channel j
        self.linear = linear
        self.register_buffer("inverse", 1.0 / scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x * self.inverse)


def export_smoothed(model, tokenizer, info, target: Path, alpha: float = ALPHA) -> None:
    """Trace a smoothed copy of `model` (the caller's model stays as it was) to `target`."""
    from .convert import export_fp32

    smoothed = copy.deepcopy(model)
    smooth_linears(smoothed, tokenizer, calibration_texts(), alpha, info.max_length)
    export_fp32(smoothed, info, target)


def calibration_texts() -> list[str]:
    """Real terms that are not the parity check's LOINC names: the shipped drug target names."""
    path = resources.files("codemap.data") / "drugs" / "drug_targets.tsv"
    with resources.as_file(path) as file:
        return pd.read_csv(file, sep="\t", usecols=["concept_name"])["concept_name"].dropna().tolist()


def smooth_linears(model: torch.nn.Module, tokenizer, texts: list[str], alpha: float,
                   max_length: int = 32) -> int:
    """Replace every Linear of the encoder layers of `model` by a SmoothedLinear calibrated on
    `texts`; returns how many were replaced. The model's outputs are unchanged up to rounding."""
    linears = {name: module for name, module in model.named_modules()
               if isinstance(module, torch.nn.Linear) and ".layer." in f".{name}"}
    peaks = _input_peaks(model, tokenizer, texts, linears, max_length)
    for name, linear in linears.items():
        weight_peak = linear.weight.detach().abs().amax(dim=0).clamp(min=1e-5)
        scale = (peaks[name].clamp(min=1e-5) ** alpha / weight_peak ** (1 - alpha)).clamp(min=1e-5)
        parent_name, _, child = name.rpartition(".")
        setattr(model.get_submodule(parent_name), child, SmoothedLinear(linear, scale))
    return len(linears)


def _input_peaks(model, tokenizer, texts, linears, max_length) -> dict[str, torch.Tensor]:
    """Per-input-channel max |x| of every Linear in `linears`, over all tokens of `texts`
    (padding included: the runtime quantises padded batches, so their values set the scale too)."""
    peaks: dict[str, torch.Tensor] = {}

    def record(name):
        def hook(_module, inputs):
            peak = inputs[0].detach().abs().flatten(0, -2).amax(dim=0)
            peaks[name] = torch.maximum(peaks[name], peak) if name in peaks else peak
        return hook

    handles = [module.register_forward_pre_hook(record(name)) for name, module in linears.items()]
    try:
        with torch.no_grad():
            for start in range(0, len(texts), CALIBRATION_BATCH):
                batch = tokenizer(texts[start:start + CALIBRATION_BATCH], padding=True, truncation=True,
                                  max_length=max_length, return_tensors="pt")
                model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    finally:
        for handle in handles:
            handle.remove()
    return peaks
