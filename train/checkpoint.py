"""Checkpoints and the final model folder: safetensors + JSON only (no pickles).

A checkpoint folder `step-NNNNNNN/` holds `model/` (a Hugging Face folder with codemap.json and
relations.safetensors, usable by `codemap map --model` as is), `optimizer.safetensors`,
`rng.safetensors` and `state.json` (step, scheduler, optimiser groups, config, data hash).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from codemap.errors import CodemapError
from codemap.embed import ModelInfo, Pooling, write_manifest

RELATIONS_FILE = "relations.safetensors"


def save_model_folder(folder: Path, model, base_path: Path, extra: dict) -> None:
    """Write the encoder as a Hugging Face folder, its codemap.json and the relation parameters.
    `model` is the (unwrapped) CoderModel."""
    folder.mkdir(parents=True, exist_ok=True)
    encoder = model.encoder
    encoder.model.save_pretrained(folder, safe_serialization=True)
    encoder.tokenizer.save_pretrained(folder)
    info = ModelInfo(id=str(folder), path=folder, pooling=Pooling(encoder.pooling),
                     max_length=encoder.max_length, extra=extra)
    write_manifest(folder, info)
    relation = model.loss.relation
    if relation is not None:
        tensors = {name: p.detach().float().cpu().contiguous() for name, p in relation.named_parameters()}
        save_file(tensors, str(folder / RELATIONS_FILE),
                  metadata={"relation_labels": json.dumps(extra.get("relation_labels", [])),
                            "kind": type(relation).__name__})


def save_checkpoint(out: Path, step: int, model, optimizer, scheduler, state: dict,
                    base_path: Path, extra: dict, keep: int) -> Path:
    """Write checkpoint `step` under out/checkpoints (into a temporary folder renamed at the end,
    so a killed run never leaves a half-written checkpoint), and prune old ones."""
    root = out / "checkpoints"
    final = root / f"step-{step:07d}"
    tmp = root / f".tmp-step-{step:07d}"
    shutil.rmtree(tmp, ignore_errors=True)
    save_model_folder(tmp / "model", model, base_path, extra)
    tensors, groups = _flatten_optimizer(optimizer.state_dict())
    save_file(tensors, str(tmp / "optimizer.safetensors"))
    save_file(_rng_tensors(), str(tmp / "rng.safetensors"))
    (tmp / "state.json").write_text(json.dumps({**state, "step": step, "param_groups": groups,
                                                "scheduler": scheduler.state_dict()}, indent=1),
                                    encoding="utf-8")
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    for old in sorted(root.glob("step-*"))[:-keep] if keep > 0 else []:
        shutil.rmtree(old, ignore_errors=True)
    return final


def latest_checkpoint(out: Path) -> Path | None:
    found = sorted((out / "checkpoints").glob("step-*"))
    return found[-1] if found else None


def load_checkpoint(folder: Path, model, optimizer, scheduler, device) -> dict:
    """Restore weights, relation parameters, optimiser, scheduler and RNG; returns state.json."""
    state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
    weights = load_file(str(folder / "model" / "model.safetensors"), device=str(device))
    model.encoder.model.load_state_dict(weights, strict=False)
    relation_file = folder / "model" / RELATIONS_FILE
    if model.loss.relation is not None:
        if not relation_file.exists():
            raise CodemapError(f"{folder}: no {RELATIONS_FILE}; the checkpoint was trained "
                               f"without the relation loss")
        model.loss.relation.load_state_dict(load_file(str(relation_file), device=str(device)))
    optimizer.load_state_dict(_unflatten_optimizer(
        load_file(str(folder / "optimizer.safetensors"), device=str(device)), state["param_groups"]))
    scheduler.load_state_dict(state["scheduler"])
    _restore_rng(load_file(str(folder / "rng.safetensors")))
    return state


def _flatten_optimizer(state_dict: dict) -> tuple[dict, list]:
    tensors = {}
    for index, values in state_dict["state"].items():
        for key, value in values.items():
            tensor = value if torch.is_tensor(value) else torch.tensor(value)
            tensors[f"{index}.{key}"] = tensor.detach().cpu().contiguous()
    return tensors, state_dict["param_groups"]


def _unflatten_optimizer(tensors: dict, groups: list) -> dict:
    state: dict = {}
    for name, tensor in tensors.items():
        index, key = name.split(".", 1)
        state.setdefault(int(index), {})[key] = tensor
    for group in groups:
        if "betas" in group:
            group["betas"] = tuple(group["betas"])
    return {"state": state, "param_groups": groups}


def _rng_tensors() -> dict:
    tensors = {"cpu": torch.get_rng_state()}
    if torch.cuda.is_available():
        tensors["cuda"] = torch.stack([s for s in torch.cuda.get_rng_state_all()])
    return tensors


def _restore_rng(tensors: dict) -> None:
    torch.set_rng_state(tensors["cpu"])
    if "cuda" in tensors and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(list(tensors["cuda"]))
