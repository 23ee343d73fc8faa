"""Encoder.encode(): the one way texts become vectors, for indexing, ranking, evaluation and
export parity checks.

Texts are sorted by length before batching and put back in input order afterwards: padding a
batch to its longest member wastes less when its members are of similar length (about 2x on CPU).
Texts whose tokens are the same once cut to the model's length are embedded once.
"""
from __future__ import annotations

import dataclasses
import logging

import numpy as np

from ..config import EncoderConfig, default_cache_dir, model_cache_dir
from ..progress import bar
from .manifest import Backend, ModelInfo
from .models import resolve_model
from .onnx_backend import OnnxBackend
from .onnx_cache import runtime_model
from .torch_backend import TorchBackend

log = logging.getLogger(__name__)


class Encoder:
    """Embeds texts with one model; vectors are float32, L2-normalised when the model says so."""

    def __init__(self, info: ModelInfo, config: EncoderConfig = EncoderConfig()):
        self.info = info
        self.config = config
        self._backend = _load_backend(info, config)
        self.dim: int = self._backend.dim

    @classmethod
    def load(cls, config: EncoderConfig = EncoderConfig(), cache_dir=None,
             progress: bool = False) -> "Encoder":
        """Resolve `config.model` and load it with `config.backend` (auto: its ONNX export, made
        once into the model cache under `cache_dir` when needed; see codemap.embed.onnx_cache).
        `progress`: the elapsed time of a first-use export or conversion, on a terminal.
        Raises CodemapError for a bad model spec or a backend this machine cannot run."""
        cache_dir = cache_dir or default_cache_dir()
        info = resolve_model(config.model, cache_dir, progress)
        info = runtime_model(info, config.backend, model_cache_dir(cache_dir), progress)
        if 0 < config.max_length < info.max_length:  # the fingerprint, hence index keys, follow
            info = dataclasses.replace(info, max_length=config.max_length)
        return cls(info, config)

    @property
    def variant(self) -> str:
        """What computes the vectors, e.g. "torch", "onnx-fp32", "onnx-int8": index caches key
        on it, so vectors of different runtimes or precisions are never mixed."""
        return self._backend.variant

    @property
    def provider(self) -> str:
        """Where it runs: torch's device ("cpu", "cuda") or an ONNX Runtime execution provider."""
        return self._backend.provider

    def encode(self, texts: list[str], *, batch_size: int | None = None,
               progress: bool = False, desc: str = "embedding") -> np.ndarray:
        """Embed `texts`; returns an (n, dim) float32 matrix in input order."""
        batch_size = batch_size or self.config.batch_size
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        prefixed = [self.info.prefix + t for t in texts]
        # Texts the model reads the same (equal once cut to max_length) are embedded once: names
        # that differ past the cut are many in a large target (ICD-10-CM: 72,616 names, 52,242
        # distinct in their first 24 tokens).
        first, same_as = _distinct(self._backend.token_keys(prefixed))
        order = first[np.argsort([-len(prefixed[i]) for i in first], kind="stable")]
        with bar(len(first), desc, "term", progress, leave=False) as shown:
            for start in range(0, len(order), batch_size):
                idx = order[start:start + batch_size]
                out[idx] = self._backend.embed([prefixed[i] for i in idx])
                shown.update(len(idx))
        out[:] = out[same_as]
        return out


def _distinct(keys: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """(the first position of each distinct key, each position's first position of its key)."""
    seen: dict[bytes, int] = {}
    same_as = np.fromiter((seen.setdefault(k, i) for i, k in enumerate(keys)), np.int64, len(keys))
    return np.fromiter(seen.values(), np.int64, len(seen)), same_as


def _load_backend(info: ModelInfo, config: EncoderConfig):
    # Each backend imports its runtime when it is made, so an export runs where torch is missing.
    if info.backend is Backend.ONNX:
        return OnnxBackend(info, config)
    return TorchBackend(info, config)
