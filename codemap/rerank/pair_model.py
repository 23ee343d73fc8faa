"""The second stage's cross-encoder at run time: reads a source row and a candidate's name
together and gives a logit (train/cross_encoder.py trains it).

What ships is small (codemap/data/second_stage/cross_encoder/): LoRA adapters and a linear head
over the first `layers` layers of the default bi-encoder. Loading merges W + (alpha/r)·B·A into
those layers' weights once, in memory; the base is the merged default model the embedding stage
already converted (so nothing new is downloaded or converted), and torch runs it. Pairs are
scored in length-sorted batches (padding is most of the cost of short terms).
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..embed.adapters import merge_lora
from ..embed.models import resolve_model
from ..errors import CodemapError

log = logging.getLogger(__name__)

MANIFEST = "cross_encoder.json"
ADAPTER = "adapter.safetensors"


def row_side(text: str, unit: str = "", specimen: str = "") -> str:
    """What the model reads of a source row: its text and the unit and specimen columns (the
    same string train/cross_encoder.py trained on)."""
    extra = [f"unit {unit}" if unit else "", f"specimen {specimen}" if specimen else ""]
    return " | ".join([text, *[e for e in extra if e]])


@dataclass
class PairModel:
    """(row side, candidate name) pairs → logits."""

    model: object  # torch module: encoder + head
    tokenizer: object
    max_length: int
    manifest: dict
    batch_size: int = 64

    @classmethod
    def load(cls, folder: Path, cache_dir: Path | None = None, threads: int | None = None) -> "PairModel":
        """The cross-encoder in `folder` on its base model (resolved like `--model`, converted
        into `cache_dir` on first use). Raises CodemapError for a folder that is not one."""
        import torch
        from safetensors.numpy import load_file
        from transformers import AutoModel, AutoTokenizer

        manifest_file = Path(folder) / MANIFEST
        if not manifest_file.is_file():
            raise CodemapError(f"{folder}: not a cross-encoder folder (no {MANIFEST})")
        manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
        base = resolve_model(manifest["base"], cache_dir)
        if manifest.get("base_adapter") and base.extra.get("adapter") != manifest["base_adapter"]:
            raise CodemapError(f"{folder}: trained on {manifest['base']!r} with adapter "
                               f"{manifest['base_adapter']!r}, but that name is now "
                               f"{base.extra.get('adapter')!r}: retrain the cross-encoder")
        if threads:
            torch.set_num_threads(threads)
        encoder = AutoModel.from_pretrained(str(base.path))
        layers = int(manifest["layers"])
        encoder.encoder.layer = encoder.encoder.layer[:layers]
        encoder.config.num_hidden_layers = layers
        weights = load_file(str(Path(folder) / ADAPTER))
        own = {k: v.numpy() for k, v in encoder.state_dict().items()}
        lora = manifest["lora"]
        merged = merge_lora(own, {k: v for k, v in weights.items() if ".lora_" in k},
                            float(lora["alpha"]) / float(lora["rank"]))
        encoder.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v))
                                 for k, v in merged.items()})
        head = torch.nn.Linear(encoder.config.hidden_size, 1)
        head.load_state_dict({"weight": torch.from_numpy(weights["head.weight"].astype(np.float32)),
                              "bias": torch.from_numpy(weights["head.bias"].astype(np.float32))})
        model = scorer_module(encoder, head).eval()
        return cls(model, AutoTokenizer.from_pretrained(str(base.path)),
                   int(manifest["max_length"]), manifest)

    def score(self, sides: list[str], names: list[str]) -> np.ndarray:
        """One logit per (row side, name) pair, in input order."""
        import torch

        out = np.zeros(len(sides), dtype=np.float32)
        order = np.argsort([-(len(a) + len(b)) for a, b in zip(sides, names)], kind="stable")
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start:start + self.batch_size]
                tokens = self.tokenizer([sides[i] for i in idx], [names[i] for i in idx],
                                        truncation="longest_first", max_length=self.max_length,
                                        padding=True, return_tensors="pt")
                out[idx] = self.model(tokens["input_ids"], tokens["attention_mask"]).numpy()
        return out


def scorer_module(encoder, head):
    """encoder + head as one module: the first token's hidden state → logit."""
    import torch

    class Scorer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder, self.head = encoder, head

        def forward(self, input_ids, attention_mask):
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            return self.head(hidden[:, 0]).squeeze(-1)

    return Scorer()
