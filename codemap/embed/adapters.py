"""Trained CODER weights that ship with codemap: LoRA adapters on top of the packaged base models.

A shipped model is a folder `codemap/data/models/<name>/` holding `adapter.safetensors` (the
low-rank A and B matrices, fp16, under peft's parameter names) and `codemap.json` (its base model,
rank and alpha, how and on what it was trained, its dev figures, and — only when the
pre-registered rule said so — which model name it replaces, e.g. "default"). A full copy of the
weights would be 90–470 MB; an adapter is a few MB.

Loading merges W + (alpha / r) · B·A into the base's weights once and keeps the merged folder in
the model cache, so every backend (torch, the ONNX export) sees a plain Hugging Face folder and
peft is not needed to run.
"""
from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path

import numpy as np

from ..errors import CodemapError
from ..files import build_once, publish_dir, sha256_file, sha256_text, temp_dir_beside

ADAPTER_FILE = "adapter.safetensors"
MANIFEST = "codemap.json"
WEIGHTS = "model.safetensors"
_PEFT_PREFIX = "base_model.model."


def shipped_folder() -> Path:
    return Path(str(resources.files("codemap.data") / "models"))


def shipped_adapters() -> dict[str, dict]:
    """Name → manifest of every adapter shipped in the package."""
    found = {}
    root = shipped_folder()
    for manifest in sorted(root.glob(f"*/{MANIFEST}")) if root.is_dir() else []:
        if (manifest.parent / ADAPTER_FILE).exists():
            found[manifest.parent.name] = json.loads(manifest.read_text(encoding="utf-8"))
    return found


def adapter_replacing(alias: str) -> str | None:
    """The shipped adapter that a pre-registered rule made `alias` ("default", "multilingual"),
    or None: then the alias means the untrained base. A manifest's `replaces` names one alias or
    a list of them (coder-multilingual is both since 2026-11-25)."""
    for name, manifest in shipped_adapters().items():
        replaces = manifest.get("replaces") or []
        if alias in ([replaces] if isinstance(replaces, str) else replaces):
            return name
    return None


def merge_lora(base: dict[str, np.ndarray], adapter: dict[str, np.ndarray],
               scale: float) -> dict[str, np.ndarray]:
    """Base weights with every adapted layer's W replaced by W + scale · B·A (fp32).

    `adapter` holds peft's names (`base_model.model.<module>.lora_A[.default].weight`); raises
    CodemapError when an adapted module has no weight in `base` (adapter of another model)."""
    merged = dict(base)
    for key, a in adapter.items():
        if ".lora_A." not in key:
            continue
        module = key.split(".lora_A.")[0].removeprefix(_PEFT_PREFIX)
        b = adapter[key.replace(".lora_A.", ".lora_B.")]
        weight = module + ".weight"
        if weight not in merged:
            raise CodemapError(f"the adapter changes {module}, which the base model does not have")
        delta = b.astype(np.float32) @ a.astype(np.float32)
        merged[weight] = (merged[weight].astype(np.float32) + scale * delta).astype(np.float32)
    return merged


def materialise(folder: Path, base_folder: Path, models: Path) -> Path:
    """The merged model of the adapter in `folder` on the base in `base_folder`, built once into
    the model cache `models/<name>-<hash>/` (atomically) and reused after that. The hash covers
    the adapter and its manifest, whose settings (the fusion weights) travel into the merged one."""
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    digest = sha256_text(sha256_file(folder / ADAPTER_FILE), sha256_file(folder / MANIFEST))[:12]
    target = Path(models) / f"{folder.name}-{digest}"
    return build_once(target, lambda: target if (target / MANIFEST).exists() else None,
                      lambda: _merge_into(target, folder, base_folder, manifest),
                      f"merging the {folder.name} adapter")


def _merge_into(target: Path, folder: Path, base_folder: Path, manifest: dict) -> Path:
    from safetensors.numpy import load_file, save_file

    tmp = temp_dir_beside(target)
    try:
        for item in base_folder.iterdir():  # config, tokenizer and the like, not the weights
            if item.is_file() and item.suffix not in (".safetensors", ".bin") and item.name != MANIFEST:
                shutil.copy2(item, tmp / item.name)
        lora = manifest["lora"]
        merged = merge_lora(load_file(str(base_folder / WEIGHTS)), load_file(str(folder / ADAPTER_FILE)),
                            float(lora["alpha"]) / float(lora["rank"]))
        save_file(merged, str(tmp / WEIGHTS))
        base_manifest = base_folder / MANIFEST
        settings = json.loads(base_manifest.read_text(encoding="utf-8")) if base_manifest.exists() else {}
        settings.update({key: manifest[key] for key in ("pooling", "max_length", "prefix", "normalize")
                         if key in manifest})
        settings["extra"] = {**settings.get("extra", {}), "adapter": folder.name,
                             "adapter_sha256": sha256_file(folder / ADAPTER_FILE),
                             "trained": manifest.get("trained", {}),
                             "encoder_weights": manifest.get("encoder_weights", {})}
        (tmp / MANIFEST).write_text(json.dumps(settings, indent=1), encoding="utf-8")
        if target.exists() and not (target / MANIFEST).exists():
            shutil.rmtree(target)  # a folder without its manifest: a merge killed by an older codemap
        publish_dir(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target
