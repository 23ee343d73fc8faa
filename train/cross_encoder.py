"""Train the second stage's cross-encoder: it reads a source row and one candidate's name together
and scores whether the candidate is the row's concept.

    python -m codemap.train.cross_encoder RUN_FOLDER --pairs PAIRS_FOLDER [--steps 4000]

PAIRS_FOLDER holds train.pairs' first-stage candidates of generated rows (lab.parquet,
drug.parquet…). A step takes `groups` rows, each with its gold candidate and `negatives` of the
first stage's other candidates (the best-ranked ones more often), and minimises the softmax
cross-entropy of the gold within its group: the model learns what tells a row's concept from
the siblings the first stage confuses it with, not from random names.

The model is the shipped bi-encoder (coder-multilingual: multilingual-e5-small trained by the
CODER method) cut to its first `layers` layers, with LoRA adapters on every linear layer and a
linear head on the first token. Only adapters and head train, so a checkpoint is a few MB:
RUN_FOLDER/checkpoint.pt (adapters, head, optimiser, step, the sampler's state) is written every
`save_every` steps and resumed exactly by running the same command again. RUN_FOLDER/model/
holds what ships: adapter.safetensors (peft names, + head) and cross_encoder.json.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import nn

from codemap.embed.models import resolve_model
from codemap.progress import bar as progress_bar
from codemap.rerank.pair_model import ADAPTER, MANIFEST, row_side, scorer_module

from .model import LORA_TARGETS, add_lora



@dataclass(frozen=True)
class CrossEncoderConfig:
    base: str = "default"  # the bi-encoder whose weights start the cross-encoder
    layers: int = 6  # of its 12: half the cost, and a pair needs less depth than a name alone
    lora_rank: int = 16
    lora_alpha: float = 32.0
    max_length: int = 64  # tokens of row + candidate together
    groups: int = 8  # rows per step
    negatives: int = 7  # first-stage candidates per row besides its gold
    hard_pool: int = 15  # negatives are drawn from the row's best-ranked non-gold candidates
    steps: int = 4000
    lr: float = 2e-4
    head_lr: float = 1e-3
    warmup: int = 100
    save_every: int = 100
    eval_every: int = 500
    eval_rows: int = 300  # held-out generated rows scored against all their candidates
    held_out_share: float = 0.03
    seed: int = 0
    threads: int = 1  # CPU threads (the other core stays free)
    # "cuda" on a GPU machine: the steps run there in bf16 autocast (the loss and what is saved
    # stay fp32); a checkpoint is kept on the CPU side, so a run moves between machines.
    device: str = "cpu"
    # Share of each step's rows drawn from each kind of generated rows (train.pairs), so the
    # largest kind does not decide what the model learns; kinds not named share what is left.
    kind_shares: str = "lab=0.55,drug=0.3,icd-de=0.15"


def build_model(config: CrossEncoderConfig):
    """The cut bi-encoder with LoRA adapters, its head, and the tokenizer."""
    from transformers import AutoModel, AutoTokenizer

    info = resolve_model(config.base)
    tokenizer = AutoTokenizer.from_pretrained(str(info.path))
    encoder = AutoModel.from_pretrained(str(info.path))
    encoder.encoder.layer = encoder.encoder.layer[:config.layers]
    encoder.config.num_hidden_layers = config.layers
    encoder = add_lora(encoder, config.lora_rank, config.lora_alpha, 0.0)
    return scorer_module(encoder, nn.Linear(encoder.config.hidden_size, 1)), tokenizer, info


# --- data -----------------------------------------------------------------------------------------

@dataclass
class Rows:
    """Every generated row with its candidates: the gold name and the ranked negative names."""

    sides: list[str]  # row_side of each row
    gold: list[str]  # the gold candidate's name
    negatives: list[list[str]]  # the row's non-gold candidate names, best first
    kinds: list[str]

    @staticmethod
    def load(folder: Path) -> "Rows":
        sides, gold, negatives, kinds = [], [], [], []
        for path in sorted(Path(folder).glob("*.parquet")):
            frame = pd.read_parquet(path).sort_values(["row", "rank"])
            for _, group in frame.groupby("row", sort=True):
                positive = group[group["label"] == 1]
                if positive.empty:
                    continue
                first = group.iloc[0]
                sides.append(row_side(first["text"], first.get("unit") or "",
                                      first.get("specimen") or ""))
                gold.append(str(positive["target_name"].iloc[0]))
                negatives.append(group.loc[group["label"] == 0, "target_name"].astype(str).tolist())
                kinds.append(path.stem)
        return Rows(sides, gold, negatives, kinds)

    def split(self, share: float, seed: int) -> tuple[list[int], list[int]]:
        order = list(range(len(self.sides)))
        random.Random(seed).shuffle(order)
        cut = int(len(order) * share)
        return order[cut:], order[:cut]

    def group(self, i: int, config: CrossEncoderConfig, rng: random.Random) -> list[str]:
        """Row i's gold name first, then `negatives` names from its best-ranked candidates
        (other rows' golds fill a short list)."""
        pool = self.negatives[i][:config.hard_pool]
        chosen = rng.sample(pool, min(config.negatives, len(pool)))
        while len(chosen) < config.negatives:
            chosen.append(self.gold[rng.randrange(len(self.gold))])
        return [self.gold[i], *chosen]


def tokens(tokenizer, sides: list[str], names: list[str], max_length: int,
           device=None) -> dict:
    batch = tokenizer(sides, names, truncation="longest_first", max_length=max_length,
                      padding=True, return_tensors="pt")
    return {k: v.to(device) for k, v in batch.items()} if device is not None else dict(batch)


def kind_shares(spec: str, by_kind: dict) -> dict[str, float]:
    """`lab=0.55,drug=0.3` → a share per kind present; kinds not named split the rest evenly."""
    named = {k: float(v) for k, v in (item.split("=") for item in spec.split(",") if item)}
    named = {k: v for k, v in named.items() if k in by_kind}
    others = [k for k in by_kind if k not in named]
    rest = max(0.0, 1.0 - sum(named.values()))
    return {**named, **{k: rest / len(others) for k in others}} if others else named


# --- the loop ---------------------------------------------------------------------------------------

def lr_factor(step: int, config: CrossEncoderConfig) -> float:
    """Linear warm-up, then cosine decay to a tenth."""
    if step <= config.warmup:
        return step / max(1, config.warmup)
    done = (step - config.warmup) / max(1, config.steps - config.warmup)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, done)))


def train(run: Path, pairs: Path, config: CrossEncoderConfig) -> dict:
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    run.mkdir(parents=True, exist_ok=True)
    device = torch.device(config.device)
    model, tokenizer, info = build_model(config)
    model.to(device)
    rows = Rows.load(pairs)
    train_rows, held_rows = rows.split(config.held_out_share, config.seed)
    by_kind: dict[str, list[int]] = {}
    for i in train_rows:
        by_kind.setdefault(rows.kinds[i], []).append(i)
    shares = kind_shares(config.kind_shares, by_kind)
    trainable = [p for n, p in model.named_parameters() if p.requires_grad and "head" not in n]
    optimiser = torch.optim.AdamW([{"params": trainable, "lr": config.lr},
                                   {"params": model.head.parameters(), "lr": config.head_lr}],
                                  weight_decay=0.01)
    start, history = _resume(run, model, optimiser)
    log = run / "log.jsonl"
    shown = progress_bar(config.steps, "training cross-encoder", "step", True, initial=start)
    clock, losses = time.perf_counter(), []
    for step in range(start + 1, config.steps + 1):
        rng = random.Random(f"{config.seed}:{step}")  # the step's batch, the same after a resume
        picked = [rng.choice(by_kind[kind]) for kind in
                  rng.choices(list(shares), weights=list(shares.values()), k=config.groups)]
        sides, names = [], []
        for i in picked:
            group = rows.group(i, config, rng)
            sides += [rows.sides[i]] * len(group)
            names += group
        for params, base in zip(optimiser.param_groups, (config.lr, config.head_lr)):
            params["lr"] = base * lr_factor(step, config)
        model.train()
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            logits = model(**tokens(tokenizer, sides, names, config.max_length, device)).float()
        loss = nn.functional.cross_entropy(logits.view(config.groups, -1),
                                           torch.zeros(config.groups, dtype=torch.long,
                                                       device=logits.device))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        optimiser.zero_grad()
        losses.append(loss.item())
        shown.update(1)
        shown.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}")
        if step % config.eval_every == 0 or step == config.steps:
            record = {"step": step, "loss": float(np.mean(losses[-config.eval_every:])),
                      "seconds_per_step": (time.perf_counter() - clock) / max(1, len(losses)),
                      **evaluate(model, tokenizer, rows, held_rows[:config.eval_rows], config)}
            history.append(record)
            with open(log, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")
        if step % config.save_every == 0 or step == config.steps:
            _save_checkpoint(run, model, optimiser, step, history, config)
    shown.close()
    save_model(run / "model", model, config, info, history)
    return history[-1] if history else {}


@torch.no_grad()
def evaluate(model, tokenizer, rows: Rows, held: list[int], config: CrossEncoderConfig) -> dict:
    """On held-out generated rows: how often the gold outscores every first-stage candidate,
    beside how often the first stage ranked it first (the order `negatives` keeps)."""
    model.eval()
    right = first = 0
    for i in held:
        names = [rows.gold[i], *rows.negatives[i]]
        scores = []
        for start in range(0, len(names), 32):
            chunk = names[start:start + 32]
            scores += model(**tokens(tokenizer, [rows.sides[i]] * len(chunk), chunk,
                                     config.max_length, next(model.parameters()).device)
                            ).float().tolist()
        right += int(np.argmax(scores) == 0)
    return {"held_out_rows": len(held), "held_out_acc1": right / max(1, len(held))}


def _save_checkpoint(run, model, optimiser, step, history, config) -> None:
    state = {"step": step, "history": history, "config": asdict(config),
             "adapter": {n: p.detach().cpu().clone() for n, p in model.named_parameters()
                         if p.requires_grad},
             "optimiser": optimiser.state_dict()}
    tmp = run / "checkpoint.pt.part"
    torch.save(state, tmp)
    tmp.replace(run / "checkpoint.pt")


def _resume(run: Path, model, optimiser=None) -> tuple[int, list]:
    """The step, history and trained weights of the run's checkpoint (and the optimiser's
    state, when given); (0, []) for a new run."""
    path = run / "checkpoint.pt"
    if not path.exists():
        return 0, []
    state = torch.load(path, weights_only=True, map_location="cpu")
    own = dict(model.named_parameters())
    for name, tensor in state["adapter"].items():
        own[name].data.copy_(tensor)
    if optimiser is not None:
        optimiser.load_state_dict(state["optimiser"])
    return int(state["step"]), list(state["history"])


def save_model(folder: Path, model, config: CrossEncoderConfig, info, history: list) -> Path:
    """adapter.safetensors (LoRA A/B under peft's names, fp16, + head) and cross_encoder.json:
    what codemap loads on top of the base model (codemap.rerank)."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    weights = {name.replace(".default.", "."): p.detach().cpu().to(torch.float16).contiguous()
               for name, p in model.encoder.named_parameters() if p.requires_grad}
    weights["head.weight"] = model.head.weight.detach().cpu().float().contiguous()
    weights["head.bias"] = model.head.bias.detach().cpu().float().contiguous()
    save_file(weights, str(folder / ADAPTER))
    manifest = {"format": 1, "base": config.base, "base_adapter": info.extra.get("adapter", ""),
                "layers": config.layers, "max_length": config.max_length,
                "lora": {"rank": config.lora_rank, "alpha": config.lora_alpha,
                         "targets": LORA_TARGETS},
                "row_side": "text | unit U | specimen S", "trained": asdict(config),
                "history": history}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--pairs", type=Path, required=True)
    for item in fields(CrossEncoderConfig):
        parser.add_argument(f"--{item.name.replace('_', '-')}", type=type(item.default),
                            default=item.default)
    args = vars(parser.parse_args())
    run, pairs = args.pop("run"), args.pop("pairs")
    print(json.dumps(train(run, pairs, CrossEncoderConfig(**args))))


if __name__ == "__main__":
    main()
