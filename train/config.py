"""TrainConfig: every training setting with its default, overridable as `--key value`
(nanoGPT-style), from presets in train/configs/*.json (`--config smoke`).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from codemap.errors import CodemapError

PRESETS = Path(__file__).parent / "configs"


@dataclass(frozen=True)
class TrainConfig:
    # data
    kg: tuple[str, ...] = ("loinc",)  # train.sources names (loinc, hpo, atc…), .obo, store names
    data_dir: str = ""  # folder holding the public data folders (loinc-top2000, hpo-2015, …)
    holdout: tuple[str, ...] = ()  # tables whose query texts are removed from the training names
    # name languages kept (ISO 639-1, e.g. en de); empty = all. An English word-piece model reads
    # Chinese or Japanese names as [UNK] runs, which would all look alike to it.
    languages: tuple[str, ...] = ()
    drop_brackets: bool = False  # name cleaning: LOINC brackets carry the property, keep them
    # LOINC axis parts ("part" names, e.g. the component "Hemoglobin") as term-loss concepts (the
    # paper treats every concept alike) or, False, as relation-loss tails only: a part is not a
    # wrong answer for the codes it belongs to, and as a negative it pushes them off the analyte.
    part_term_loss: bool = True
    # site tuning: train on a mapping memory's reviews instead of --kg (train/reviews.py)
    from_reviews: str = ""  # mapping memory (.db) written by `codemap apply --memory`
    review_target: str = ""  # target to rank against; default: the one recorded in the memory
    store_dir: str = ""  # vocabulary store folder for store names [default: <cache dir>/store]
    heldout_share: float = 0.2  # share of the reviewed sources held out for the before/after report
    split_seed: int = 0  # the held-out split is a pure function of this and the source keys
    hard_negatives: int = 4  # rejected candidates per reviewed source that join its batch
    # model
    base: str = "default"  # base checkpoint: "default" (MiniLM), a folder or a hub id
    pooling: str = ""  # "cls" or "mean"; empty = the base checkpoint's own pooling
    max_length: int = 32  # terms are short; CODER trains at 32 tokens
    # LoRA: train low-rank adapters on every linear layer, base weights frozen. 0 = all weights.
    # An adapter and its optimiser state are megabytes, so a long run's checkpoint can be
    # committed and resumed on another machine, and the trained model ships as a small file.
    lora_rank: int = 0
    lora_alpha: float = 32.0
    lora_dropout: float = 0.0
    # batches: k triplet rows per step, each distinct triplet repeated m times (2 ≤ m ≤ √k)
    batch_triplets: int = 128
    repeats: int = 8
    grad_accum: int = 1  # micro-batches per optimiser step (paper: 8)
    # loss: L = L_term + mu * L_relation
    term_loss: str = "ms"  # "ms" (paper) or "infonce" (ablation)
    relation_loss: str = "cosine"  # "cosine" (paper), "transe" or "none" (ablations)
    mu: float = 1.0
    # the head and tail concepts of a batch triplet as term-loss negatives of each other (paper);
    # False: only the relation loss relates them
    triplet_end_negatives: bool = True
    alpha: float = 2.0  # MS loss weights and margin, paper defaults for both losses
    beta: float = 50.0
    lam: float = 0.5
    eps: float = 0.1
    temperature: float = 0.05  # InfoNCE only
    # optimiser: AdamW with linear warm-up then linear decay to 0
    steps: int = 1000
    lr: float = 2e-5
    relation_lr: float = 1e-3  # the relation matrices start at I and need larger steps than BERT
    warmup_steps: int = 100
    weight_decay: float = 0.01
    clip: float = 1.0
    seed: int = 0
    # hardware
    device: str = "auto"  # auto, cpu, cuda
    threads: int = 0  # torch CPU threads; 0 = torch's default (all cores)
    precision: str = "auto"  # auto (bf16 on CUDA, fp32 on CPU), fp32, bf16, fp16
    # output and monitoring
    out: str = "runs/coder"
    checkpoint_every: int = 500  # also the resume granularity
    keep_checkpoints: int = 2
    log_every: int = 10
    eval_every: int = 0  # 0: evaluate only before and after training (when eval_file is set)
    eval_file: str = ""  # dev (query, gold code) table
    eval_target: str = "LOINC"
    eval_gold_col: str = "loinc_code"
    eval_text_cols: tuple[str, ...] = ()
    progress: bool = True
    # cross-encoder re-ranker (`codemap train-reranker`, train/rerank.py)
    rerank_batch: int = 16  # anchor names per step, each with 1 positive and the negatives
    rerank_negatives: int = 7  # hard negatives per anchor, from the bi-encoder's top names
    rerank_pool: int = 30  # bi-encoder top names searched per anchor for the negatives
    rerank_random_negatives: int = 0  # extra random-concept (easy) negatives per anchor

    def as_dict(self) -> dict:
        return asdict(self)


def parse_overrides(argv: list[str], base: TrainConfig = TrainConfig()) -> TrainConfig:
    """`--config NAME` (a preset in train/configs or a JSON file) then `--key value` pairs.
    Repeating a tuple option appends (`--kg loinc --kg hpo`). Unknown keys and bad values raise
    CodemapError."""
    config = base
    args = list(argv)
    if "--config" in args:
        at = args.index("--config")
        config = load_preset(args[at + 1] if at + 1 < len(args) else "", config)
        del args[at:at + 2]
    types = {f.name: f for f in fields(TrainConfig)}
    updates: dict = {}
    while args:
        flag = args.pop(0)
        key = flag[2:].replace("-", "_") if flag.startswith("--") else ""
        if key not in types:
            raise CodemapError(f"unknown training option {flag!r} (known: "
                               f"{', '.join('--' + k.replace('_', '-') for k in types)})")
        if not args:
            raise CodemapError(f"{flag} needs a value")
        value = args.pop(0)
        default = getattr(config, key)
        if isinstance(default, tuple):
            updates[key] = updates.get(key, ()) + (value,)
        else:
            updates[key] = _convert(flag, value, default)
    return replace(config, **updates)


def load_preset(name: str, base: TrainConfig = TrainConfig()) -> TrainConfig:
    path = Path(name) if name.endswith(".json") else PRESETS / f"{name}.json"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in PRESETS.glob("*.json")))
        raise CodemapError(f"--config {name}: no such preset (known: {known}) or JSON file")
    values = json.loads(path.read_text(encoding="utf-8"))
    return from_dict(values, base)


def from_dict(values: dict, base: TrainConfig = TrainConfig()) -> TrainConfig:
    known = {f.name for f in fields(TrainConfig)}
    unknown = set(values) - known
    if unknown:
        raise CodemapError(f"unknown training settings: {', '.join(sorted(unknown))}")
    return replace(base, **{k: tuple(v) if isinstance(getattr(base, k), tuple) else v
                            for k, v in values.items()})


def _convert(flag: str, value: str, default):
    try:
        if isinstance(default, bool):
            if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(value)
            return value.lower() in ("true", "1", "yes")
        return type(default)(value)
    except ValueError:
        raise CodemapError(f"{flag} {value!r}: expected a {type(default).__name__}") from None
