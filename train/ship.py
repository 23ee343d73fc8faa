"""Ship a LoRA run's adapter with codemap (`codemap.embed.adapters` loads it):

    python -m codemap.train.ship train/runs/coder-en --name coder-en [--replaces default]

Reads the run's newest checkpoint, writes `codemap/data/models/<name>/adapter.safetensors` (the
adapter in fp16: half the size, and the merge into fp32 base weights is exact to fp16's 1e-3
relative precision, far below what separates two candidates) and `codemap.json` (base model, LoRA
settings, embedding settings and the training record). `--replaces ALIAS` is for the decision
script only: it says the pre-registered rule made this adapter `--model ALIAS`.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from codemap.embed.adapters import ADAPTER_FILE, MANIFEST, shipped_folder
from codemap.errors import CodemapError
from codemap.embed.models import resolve_model

from .checkpoint import ADAPTER_FILE as CHECKPOINT_ADAPTER, latest_checkpoint
from .config import from_dict
from .model import LORA_TARGETS


def ship(run: Path, name: str, out_root: Path | None = None, replaces: str = "",
         evaluation: dict | None = None) -> Path:
    """Write the shipped adapter folder of `run`'s newest checkpoint; returns the folder.

    Raises CodemapError when the run has no LoRA checkpoint."""
    checkpoint = latest_checkpoint(run)
    if checkpoint is None or not (checkpoint / CHECKPOINT_ADAPTER).exists():
        raise CodemapError(f"{run}: no LoRA checkpoint in {run / 'checkpoints'}")
    state = json.loads((checkpoint / "state.json").read_text(encoding="utf-8"))
    config = from_dict(state["config"])
    base = resolve_model(config.base)
    adapter = {key.replace(".default.", "."): tensor.to(torch.float16).contiguous()
               for key, tensor in load_file(str(checkpoint / CHECKPOINT_ADAPTER)).items()}
    folder = (out_root or shipped_folder()) / name
    folder.mkdir(parents=True, exist_ok=True)
    save_file(adapter, str(folder / ADAPTER_FILE))
    manifest = {
        "format": 1, "base": config.base, "base_model": str(base.extra.get("base") or base.path.name),
        "lora": {"rank": config.lora_rank, "alpha": config.lora_alpha, "targets": LORA_TARGETS},
        "pooling": (config.pooling or base.pooling.value), "max_length": config.max_length,
        "prefix": base.prefix, "normalize": True,
        "trained": {"steps": state["step"], "planned_steps": config.steps, "kg": list(config.kg),
                    "languages": list(config.languages), "batch_triplets": config.batch_triplets,
                    "repeats": config.repeats, "grad_accum": config.grad_accum, "lr": config.lr,
                    "relation_loss": config.relation_loss, "seed": config.seed,
                    "data_hash": state.get("data_hash", ""), "checkpoint": checkpoint.name},
        "replaces": replaces or None,
        "evaluation": evaluation or {},
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codemap.train.ship", description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="the run folder (its checkpoints/ holds the adapter)")
    parser.add_argument("--name", required=True, help="the shipped model's name, e.g. coder-en")
    parser.add_argument("--out", type=Path, default=None, help="[default: codemap/data/models]")
    parser.add_argument("--replaces", default="", help="default or multilingual (decision script only)")
    args = parser.parse_args(argv)
    try:
        print(ship(args.run, args.name, args.out, args.replaces))
    except CodemapError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
