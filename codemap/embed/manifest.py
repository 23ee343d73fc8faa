"""A model folder's codemap manifest (`codemap.json`): what it says, read and written.

A model is a folder: a Hugging Face checkpoint (config.json + weights + tokenizer) or an ONNX
export, with `codemap.json` beside it saying how to embed with it (pooling, max length, text
prefix). Pooling is a property of the checkpoint, so it travels with the folder, never with a
command-line default.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path

from ..config import default_cache_dir, model_cache_dir
from ..errors import CodemapError
from ..files import atomic_path, sha256_text, stamped_sha256

MANIFEST = "codemap.json"
MANIFEST_FORMAT = 1
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".onnx", ".onnx_data", ".pt")
HASH_BOOK = "weight-hashes.json"  # the weights' hashes by file stamp (files.stamped_sha256)
RANKING_KEYS = ("encoder_weights",)  # extra keys about how a model ranks, not how it embeds


class Pooling(str, Enum):
    CLS = "cls"
    MEAN = "mean"


class Backend(str, Enum):
    TORCH = "torch"
    ONNX = "onnx"


@dataclass(frozen=True)
class ModelInfo:
    """Everything needed to load a model and embed with it the way it was trained."""

    id: str  # as shown to users: "default", a folder path or a hub id
    path: Path
    backend: Backend = Backend.TORCH
    pooling: Pooling = Pooling.MEAN
    max_length: int = 32  # terms are short; CODER trains and embeds at 32 tokens
    normalize: bool = True
    prefix: str = ""  # put before every text, e.g. e5's "query: "
    onnx_file: str = "model.onnx"
    extra: dict = field(default_factory=dict)  # base model, training config, parity report…

    def fingerprint(self) -> str:
        """Hash of the weights and embedding settings: index caches key on it."""
        weights = sorted(p for p in self.path.rglob("*") if p.suffix in WEIGHT_SUFFIXES)
        if not weights:
            raise CodemapError(f"{self.path}: no model weights found (*.safetensors, *.bin, *.onnx)")
        book = model_cache_dir(default_cache_dir()) / HASH_BOOK
        parts = [stamped_sha256(p, book) for p in weights]
        return sha256_text(self.backend.value, self.pooling.value, str(self.max_length),
                           str(self.normalize), self.prefix, *parts)

    def multilingual(self) -> bool:
        """Whether the model embeds many languages: said in `codemap.json` (extra.multilingual),
        else read from the size of its vocabulary — multilingual BERT / XLM-R families have
        119k-250k word pieces, English BERT-family models about 30k."""
        if "multilingual" in self.extra:
            return bool(self.extra["multilingual"])
        config = self.path / "config.json"
        if not config.exists():
            return False
        try:
            return int(json.loads(config.read_text(encoding="utf-8")).get("vocab_size", 0)) >= 100_000
        except (ValueError, TypeError):
            return False

    def key(self) -> str:
        """The model as a calibration names it: its id, plus the adapter's hash for a shipped
        trained model, so a calibration fitted while `default` named another model (the untrained
        base, an older adapter) is not taken for the one it names now."""
        adapter = self.extra.get("adapter_sha256", "")
        return f"{self.id}@{adapter[:12]}" if adapter else self.id

    def encoder_weight(self, domain: str) -> float | None:
        """The same-language fusion weight this model was validated with on targets of `domain`
        (codemap.rank.prepare.target_domain), when its manifest names one (extra.encoder_weights,
        set by a rule written first: benchmarks/results/target-weight/RULE-domain-weight.md)."""
        weight = self.extra.get("encoder_weights", {}).get(domain)
        return None if weight is None else float(weight)

    def manifest(self) -> dict:
        data = asdict(self)
        data.update(format=MANIFEST_FORMAT, backend=self.backend.value, pooling=self.pooling.value)
        for key in ("id", "path"):
            data.pop(key)
        return data


def write_manifest(folder: str | Path, info: ModelInfo) -> Path:
    """Write `codemap.json` into a model folder (atomically)."""
    target = Path(folder) / MANIFEST
    with atomic_path(target) as tmp:
        tmp.write_text(json.dumps(info.manifest(), indent=2, sort_keys=True), encoding="utf-8")
    return target


def read_manifest(folder: Path, model_id: str) -> ModelInfo | None:
    """The folder's `codemap.json` as ModelInfo, or None when it has none."""
    path = folder / MANIFEST
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ModelInfo(id=model_id, path=folder, backend=Backend(data.get("backend", "torch")),
                         pooling=Pooling(data.get("pooling", "mean")),
                         max_length=int(data.get("max_length", 32)),
                         normalize=bool(data.get("normalize", True)),
                         prefix=str(data.get("prefix", "")),
                         onnx_file=str(data.get("onnx_file", "model.onnx")),
                         extra=dict(data.get("extra", {})))
    except (ValueError, TypeError) as exc:
        raise CodemapError(f"{path}: not a valid codemap manifest ({exc})") from None
