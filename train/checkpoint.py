"""Checkpoints and the final model folder: safetensors + JSON only (no pickles).

A checkpoint folder `step-NNNNNNN/` holds the trained weights, the optimiser state in
`optimizer-NNN.safetensors` shards, `rng.safetensors` and `state.json` (step, scheduler,
optimiser groups, config, data hash). The weights are `model/` (a Hugging Face folder with
codemap.json and relations.safetensors, usable by `codemap map --model` as is) for full
fine-tuning, or, for a LoRA run, only `adapter.safetensors` and `relations.safetensors`: the frozen
base comes from the package it always comes from, so the whole checkpoint is megabytes and can be
committed and resumed on another machine. No file is larger than SHARD_BYTES.
"""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from codemap.errors import CodemapError
from codemap.embed import ModelInfo, Pooling, write_manifest

RELATIONS_FILE = "relations.safetensors"
ADAPTER_FILE = "adapter.safetensors"
ADAPTER_FOLDER = "adapter"  # in a final model folder: the LoRA adapter (peft layout) that ships
# A file size that git hosts, the device tool and e-mail all take.
SHARD_BYTES = 15 * 2**20


def save_model_folder(folder: Path, model, base_path: Path, extra: dict) -> None:
    """Write the encoder as a Hugging Face folder, its codemap.json and the relation parameters.
    `model` is the (unwrapped) CoderModel. A LoRA encoder is saved merged into its base (a plain
    folder any tool loads), with the adapter alone in `adapter/` beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    encoder = model.encoder
    weights = encoder.model
    if encoder.lora:
        weights.save_pretrained(folder / ADAPTER_FOLDER, safe_serialization=True)
        # merged on a copy: merging in place and unmerging again would round the base weights
        # and break exact resumption
        weights = copy.deepcopy(weights).merge_and_unload()
    weights.save_pretrained(folder, safe_serialization=True)
    encoder.tokenizer.save_pretrained(folder)
    info = ModelInfo(id=str(folder), path=folder, pooling=Pooling(encoder.pooling),
                     max_length=encoder.max_length, prefix=encoder.prefix, extra=extra)
    write_manifest(folder, info)
    _save_relations(folder / RELATIONS_FILE, model, extra)


def _save_relations(path: Path, model, extra: dict) -> None:
    relation = model.loss.relation
    if relation is not None:
        tensors = {name: p.detach().float().cpu().contiguous() for name, p in relation.named_parameters()}
        save_file(tensors, str(path),
                  metadata={"relation_labels": json.dumps(extra.get("relation_labels", [])),
                            "kind": type(relation).__name__})


def trainable_state(module) -> dict:
    """The parameters that train (a LoRA run: the adapters only), on the CPU."""
    return {name: p.detach().cpu().contiguous() for name, p in module.named_parameters()
            if p.requires_grad}


def save_checkpoint(out: Path, step: int, model, optimizer, scheduler, state: dict,
                    base_path: Path, extra: dict, keep: int) -> Path:
    """Write checkpoint `step` under out/checkpoints (into a temporary folder renamed at the end,
    so a killed run never leaves a half-written checkpoint), and prune old ones."""
    root = out / "checkpoints"
    final = root / f"step-{step:07d}"
    tmp = root / f".tmp-step-{step:07d}"
    shutil.rmtree(tmp, ignore_errors=True)
    if model.encoder.lora:
        tmp.mkdir(parents=True)
        save_file(trainable_state(model.encoder.model), str(tmp / ADAPTER_FILE))
        _save_relations(tmp / RELATIONS_FILE, model, extra)
    else:
        save_model_folder(tmp / "model", model, base_path, extra)
    tensors, groups = _flatten_optimizer(optimizer.state_dict())
    save_shards(tensors, tmp, "optimizer")
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
    adapter = folder / ADAPTER_FILE
    if adapter.exists() != model.encoder.lora:
        raise CodemapError(f"{folder}: the checkpoint was trained "
                           f"{'with' if adapter.exists() else 'without'} LoRA; resume with the "
                           f"--lora-rank it was trained with")
    if adapter.exists():
        _load_trainable(model.encoder.model, load_file(str(adapter), device=str(device)), folder)
        relation_file = folder / RELATIONS_FILE
    else:
        weights = load_file(str(folder / "model" / "model.safetensors"), device=str(device))
        model.encoder.model.load_state_dict(weights, strict=False)
        relation_file = folder / "model" / RELATIONS_FILE
    if model.loss.relation is not None:
        if not relation_file.exists():
            raise CodemapError(f"{folder}: no {RELATIONS_FILE}; the checkpoint was trained "
                               f"without the relation loss")
        model.loss.relation.load_state_dict(load_file(str(relation_file), device=str(device)))
    optimizer.load_state_dict(_unflatten_optimizer(load_shards(folder, "optimizer", device),
                                                   state["param_groups"]))
    scheduler.load_state_dict(state["scheduler"])
    _restore_rng(load_file(str(folder / "rng.safetensors")))
    return state


def _load_trainable(module, tensors: dict, folder: Path) -> None:
    expected = set(trainable_state(module))
    if set(tensors) != expected:
        raise CodemapError(f"{folder}: the adapter does not fit this model (other --lora-rank, "
                           f"base or layers?)")
    module.load_state_dict(tensors, strict=False)


def save_shards(tensors: dict, folder: Path, stem: str) -> None:
    """Tensors into `stem-000.safetensors`, `stem-001…`, each at most SHARD_BYTES (a tensor
    larger than that gets a file of its own)."""
    shards: list[dict] = [{}]
    size = 0
    for name, tensor in tensors.items():
        nbytes = tensor.numel() * tensor.element_size()
        if shards[-1] and size + nbytes > SHARD_BYTES:
            shards.append({})
            size = 0
        shards[-1][name] = tensor
        size += nbytes
    for number, shard in enumerate(shards):
        save_file(shard, str(folder / f"{stem}-{number:03d}.safetensors"))


def load_shards(folder: Path, stem: str, device) -> dict:
    files = sorted(folder.glob(f"{stem}-*.safetensors")) or [folder / f"{stem}.safetensors"]
    tensors: dict = {}
    for path in files:  # older checkpoints: one `optimizer.safetensors`
        tensors.update(load_file(str(path), device=str(device)))
    return tensors


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
