"""TrainConfig: every training setting with its default, its help group and one line of help
(`codemap train --help` is made from them), overridable as `--key value` (nanoGPT-style), from
presets in train/configs/*.json (`--config smoke`).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

from codemap.errors import CodemapError

PRESETS = Path(__file__).parent / "configs"


# The groups of `codemap train --help`, in the order they are shown.
DATA, REVIEWS, MODEL, BATCHES, LOSS = "Data", "Site tuning", "Model", "Batches", "Loss"
OPTIMISER, HARDWARE, RERANKER = "Optimiser", "Hardware", "Re-ranker"
OUTPUT = "Output and monitoring"


def setting(default, group: str, help: str):
    """A TrainConfig field with its help group and one line of help (`codemap train --help`)."""
    return field(default=default, metadata={"group": group, "help": help})


@dataclass(frozen=True)
class TrainConfig:
    kg: tuple[str, ...] = setting(("loinc",), DATA, "Knowledge graphs: loinc/hpo/do (from "
                                  "--data-dir), .obo files, store names; repeat for several.")
    data_dir: str = setting("", DATA, "Folder holding the public data folders (loinc-top2000, "
                                      "hpo-2015, …).")
    holdout: tuple[str, ...] = setting((), DATA, "Tables whose query texts are removed from the "
                                                 "training names; repeat for several.")
    # An English word-piece model reads Chinese or Japanese names as [UNK] runs, which would all
    # look alike to it: keep only the languages the base model reads.
    languages: tuple[str, ...] = setting((), DATA, "Name languages kept (ISO 639-1, e.g. en de); "
                                                   "repeat for several; empty: all.")
    drop_brackets: bool = setting(False, DATA, "Name cleaning: drop bracketed parts (LOINC's "
                                               "brackets carry the property, so kept by default).")
    # LOINC axis parts ("part" names, e.g. the component "Hemoglobin") as term-loss concepts (the
    # paper treats every concept alike) or, False, as relation-loss tails only: a part is not a
    # wrong answer for the codes it belongs to, and as a negative it pushes them off the analyte.
    part_term_loss: bool = setting(True, DATA, "LOINC axis parts as term-loss concepts (false: "
                                               "relation-loss tails only).")
    # site tuning: train on a mapping memory's reviews instead of --kg (train/reviews.py)
    from_reviews: str = setting("", REVIEWS, "Mapping memory (.db) written by `codemap apply "
                                             "--memory`: train on its reviews instead of --kg.")
    review_target: str = setting("", REVIEWS, "Target to rank against (empty: the one recorded "
                                              "in the memory).")
    store_dir: str = setting("", REVIEWS, "Vocabulary store folder for store names (empty: "
                                          "<cache dir>/store).")
    heldout_share: float = setting(0.2, REVIEWS, "Share of the reviewed sources held out for the "
                                                 "before/after report.")
    split_seed: int = setting(0, REVIEWS, "Seed of the held-out split (a pure function of it and "
                                          "the source keys).")
    hard_negatives: int = setting(4, REVIEWS, "Rejected candidates per reviewed source that join "
                                              "its batch.")
    base: str = setting("default", MODEL, "Start checkpoint, as --model names it (default: "
                                          "coder-multilingual; coder-en, default-base, "
                                          "multilingual-base), a folder or a hub id.")
    pooling: str = setting("", MODEL, "cls or mean (empty: the base checkpoint's own).")
    max_length: int = setting(32, MODEL, "Tokens per term: terms are short; CODER trains at 32.")
    # An adapter and its optimiser state are megabytes, so a long run's checkpoint can be
    # committed and resumed on another machine, and the trained model ships as a small file.
    lora_rank: int = setting(0, MODEL, "LoRA rank: train low-rank adapters on every linear layer, "
                                       "base weights frozen (0: train all weights).")
    lora_alpha: float = setting(32.0, MODEL, "LoRA alpha (the adapter is scaled by alpha / rank).")
    lora_dropout: float = setting(0.0, MODEL, "Dropout on the LoRA adapters' input.")
    # batches: k triplet rows per step, each distinct triplet repeated m times (2 ≤ m ≤ √k)
    batch_triplets: int = setting(128, BATCHES, "Triplet rows per step (k).")
    repeats: int = setting(8, BATCHES, "Times each distinct triplet repeats in a batch (m, "
                                       "2 ≤ m ≤ √k): each anchor needs positives.")
    grad_accum: int = setting(1, BATCHES, "Micro-batches per optimiser step (paper: 8).")
    # loss: L = L_term + mu * L_relation
    term_loss: str = setting("ms", LOSS, "ms (multi-similarity, the paper's) or infonce "
                                         "(ablation).")
    relation_loss: str = setting("cosine", LOSS, "cosine (the paper's), transe or none "
                                                 "(ablations).")
    mu: float = setting(1.0, LOSS, "Weight of the relation loss: L = L_term + mu · L_relation.")
    # the head and tail concepts of a batch triplet as term-loss negatives of each other (paper);
    # False: only the relation loss relates them
    triplet_end_negatives: bool = setting(True, LOSS, "A triplet's head and tail as term-loss "
                                                      "negatives of each other (the paper's).")
    alpha: float = setting(2.0, LOSS, "MS loss: scale of the positive pairs (paper default, both "
                                      "losses).")
    beta: float = setting(50.0, LOSS, "MS loss: scale of the negative pairs (paper default).")
    lam: float = setting(0.5, LOSS, "MS loss: similarity margin λ (paper default).")
    eps: float = setting(0.1, LOSS, "MS loss: margin ε of the hard-pair mining (paper default).")
    temperature: float = setting(0.05, LOSS, "InfoNCE temperature (--term-loss infonce only).")
    # optimiser: AdamW with linear warm-up then linear decay to 0
    steps: int = setting(1000, OPTIMISER, "Optimiser steps (AdamW, linear warm-up, then linear "
                                          "decay to 0).")
    lr: float = setting(2e-5, OPTIMISER, "Learning rate of the encoder.")
    relation_lr: float = setting(1e-3, OPTIMISER, "Learning rate of the relation matrices: they "
                                                  "start at I and need larger steps than BERT.")
    warmup_steps: int = setting(100, OPTIMISER, "Steps of linear learning-rate warm-up.")
    weight_decay: float = setting(0.01, OPTIMISER, "AdamW weight decay.")
    clip: float = setting(1.0, OPTIMISER, "Gradient norm clip.")
    seed: int = setting(0, OPTIMISER, "Seed of the model head, the batches and the data order.")
    device: str = setting("auto", HARDWARE, "auto, cpu or cuda.")
    threads: int = setting(0, HARDWARE, "Torch CPU threads (0: torch's default, all cores).")
    precision: str = setting("auto", HARDWARE, "auto (bf16 on CUDA, fp32 on CPU), fp32, bf16 or "
                                               "fp16.")
    out: str = setting("runs/coder", OUTPUT, "Run folder: checkpoints, log.csv, the final model.")
    checkpoint_every: int = setting(500, OUTPUT, "Steps between checkpoints (also the resume "
                                                 "granularity).")
    keep_checkpoints: int = setting(2, OUTPUT, "Checkpoints kept.")
    log_every: int = setting(10, OUTPUT, "Steps between log lines.")
    eval_every: int = setting(0, OUTPUT, "Steps between dev evaluations (0: only before and "
                                         "after training, when --eval-file is set).")
    eval_file: str = setting("", OUTPUT, "Dev (query, gold code) table.")
    eval_target: str = setting("LOINC", OUTPUT, "Target the dev queries are ranked against.")
    eval_gold_col: str = setting("loinc_code", OUTPUT, "Column of the dev table holding the "
                                                       "gold code.")
    eval_text_cols: tuple[str, ...] = setting((), OUTPUT, "Columns of the dev table holding the "
                                                          "query text; repeat to join several.")
    progress: bool = setting(True, OUTPUT, "Progress bar while training.")
    # cross-encoder re-ranker (`codemap train-reranker`, train/rerank.py)
    rerank_batch: int = setting(16, RERANKER, "Anchor names per step, each with 1 positive and "
                                              "the negatives.")
    rerank_negatives: int = setting(7, RERANKER, "Hard negatives per anchor, from the "
                                                 "bi-encoder's top names.")
    rerank_pool: int = setting(30, RERANKER, "Bi-encoder top names searched per anchor for the "
                                             "negatives.")
    rerank_random_negatives: int = setting(0, RERANKER, "Extra random-concept (easy) negatives "
                                                        "per anchor.")

    def as_dict(self) -> dict:
        return asdict(self)


def parse_overrides(argv: list[str], base: TrainConfig = TrainConfig()) -> TrainConfig:
    """`--config NAME` (a preset in train/configs or a JSON file) then `--key value` pairs, as
    `python -m codemap.train` takes them. Unknown keys and bad values raise CodemapError."""
    args = list(argv)
    preset = None
    if "--config" in args:
        at = args.index("--config")
        preset = args[at + 1] if at + 1 < len(args) else ""
        del args[at:at + 2]
    pairs = []
    while args:
        flag = args.pop(0)
        pairs.append((flag, args.pop(0) if args else None))
    return configure(preset, pairs, base)


def configure(preset: str | None, overrides: list[tuple[str, str | None]],
              base: TrainConfig = TrainConfig()) -> TrainConfig:
    """`base`, then the preset (when given), then the `(--key, value)` overrides as text: repeating
    a tuple option appends (`--kg loinc --kg hpo`), other values are converted to the field's
    type. Both `codemap train` and `python -m codemap.train` end here.

    Raises CodemapError for an unknown preset or key, a missing value and a bad value.
    """
    config = base if preset is None else load_preset(preset, base)
    types = {f.name: f for f in fields(TrainConfig)}
    updates: dict = {}
    for flag, value in overrides:
        key = flag[2:].replace("-", "_") if flag.startswith("--") else ""
        if key not in types:
            raise CodemapError(f"unknown training option {flag!r} (known: "
                               f"{', '.join('--' + k.replace('_', '-') for k in types)})")
        if value is None:
            raise CodemapError(f"{flag} needs a value")
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
