"""Step 1: the second stage's cross-encoder (train/cross_encoder.py's model and rows) trained in
bf16 on the GPU for as many steps as its time budget allows.

The model, the rows and what is saved are the CPU trainer's: the default model's first `layers`
layers with LoRA adapters and a linear head, each step `groups` generated rows, each with its
gold candidate and `negatives` of its best-ranked first-stage candidates, softmax cross-entropy of
the gold within its group. What differs is the schedule: the run has seconds, not steps, so the
learning rate warms up over the first 3 % of the time and then follows the CPU trainer's cosine
(down to a tenth) over the time left, and the number of steps is what fitted.

Optionally (GPU_CE_RANK_REG > 0) a rank regularisation as xMEN's ScoredCrossEncoder has it
(Borchert et al. 2023, xmen/reranking/scored_cross_encoder.py): the L2 distance between a group's
logits and the first stage's scores of the same candidates is added to the loss, λ times, which
keeps the cross-encoder's order near the first stage's unless the text says otherwise.

Writes OUT/cross_encoder/: adapter.safetensors and cross_encoder.json (the format
codemap.rerank.pair_model.PairModel loads, so benchmarks/quality/second_stage.py collect takes
the folder as it is) and checkpoint.pt (adapters, head, optimiser, history: the CPU trainer's
format, so `python -m codemap.train.cross_encoder OUT/cross_encoder --pairs …` resumes it).
Saved at every evaluation and at the end, so a kill at the budget loses at most one interval.
"""
from __future__ import annotations

import math
import random
import shutil
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from harness import Context, Recorder, cuda_sync, peak_memory_gb

FOLDER = "cross_encoder"
KIND_SHARES = "lab=0.55,drug=0.3,icd-de=0.15"  # the CPU run's (v1)


def step_shares(spec: str, by_kind: dict) -> dict[str, float]:
    """Each kind's share of a step's rows: the spec's for the kinds it names (rescaled), and
    for a kind it does not name (real pairs) its share of the rows, so that a few real rows are
    not drawn thousands of times (train.cross_encoder.kind_shares would give them what the named
    shares leave: nothing, with the CPU run's spec)."""
    from codemap.train.cross_encoder import kind_shares

    total = sum(len(v) for v in by_kind.values())
    named = {k for k in (item.split("=")[0] for item in spec.split(",") if item) if k in by_kind}
    natural = {k: len(v) / total for k, v in by_kind.items() if k not in named}
    given = kind_shares(spec, {k: v for k, v in by_kind.items() if k in named})
    scale = (1 - sum(natural.values())) / max(sum(given.values()), 1e-9)
    return {**{k: v * scale for k, v in given.items()}, **natural}


def load_rows(folder: Path):
    """Every row of the carried pairs as train.cross_encoder.Rows (the same rows, gold and
    negatives in rank order as its Rows.load, read in whole columns: a group at a time takes
    minutes), with the first stage's score of the gold and of each negative (for the rank
    regularisation) and the gold's rank."""
    import pandas as pd

    from codemap.rerank.pair_model import row_side
    from codemap.train.cross_encoder import Rows

    sides, gold, negatives, kinds, gold_score, neg_scores, gold_rank = [], [], [], [], [], [], []
    for path in sorted(Path(folder).glob("*.parquet")):
        frame = pd.read_parquet(path).sort_values(["row", "rank"], kind="stable")
        frame["score"] = pd.to_numeric(frame["score"], errors="coerce") if "score" in frame else 0.0
        # the gold that the first stage did not propose (added at rank 0) has no score: it
        # ranks below every candidate that was proposed
        frame["score"] = frame["score"].fillna(frame.groupby("row")["score"].transform("min")).fillna(0.0)
        first = frame.drop_duplicates("row").set_index("row")
        positive = frame[frame["label"] == 1].drop_duplicates("row").set_index("row")
        others = frame[frame["label"] == 0].groupby("row")
        names = others["target_name"].agg(lambda s: s.astype(str).tolist())
        scores = others["score"].agg(list)
        keep = positive.index  # rows without their gold are left out, as Rows.load does
        head = first.loc[keep]
        sides += [row_side(t, u or "", p or "") for t, u, p in
                  zip(head["text"].tolist(), head["unit"].tolist(), head["specimen"].tolist())]
        gold += positive["target_name"].astype(str).tolist()
        negatives += names.reindex(keep).tolist()
        neg_scores += scores.reindex(keep).tolist()
        gold_score += positive["score"].astype(float).tolist()
        # a gold the first stage left unranked is not first
        gold_rank += positive["rank"].fillna(0).astype(int).tolist()
        kinds += [path.stem] * len(keep)
    # a row whose candidates are all gold has no negative list: an empty one
    negatives = [n if isinstance(n, list) else [] for n in negatives]
    neg_scores = [n if isinstance(n, list) else [] for n in neg_scores]
    return Rows(sides, gold, negatives, kinds), gold_score, neg_scores, gold_rank


def build_model(ctx: Context, layers: int, rank: int, alpha: float):
    """The rebuilt default model cut to `layers`, LoRA on every linear layer, a linear head:
    train/cross_encoder.py's build_model, on the carried model folder."""
    from torch import nn
    from transformers import AutoModel, AutoTokenizer

    from codemap.rerank.pair_model import scorer_module
    from codemap.train.model import add_lora

    tokenizer = AutoTokenizer.from_pretrained(str(ctx.model))
    encoder = AutoModel.from_pretrained(str(ctx.model))
    encoder.encoder.layer = encoder.encoder.layer[:layers]
    encoder.config.num_hidden_layers = layers
    encoder = add_lora(encoder, rank, alpha, 0.0)
    return scorer_module(encoder, nn.Linear(encoder.config.hidden_size, 1)), tokenizer


def lr_factor(progress: float, warmup: float = 0.03) -> float:
    """By the share of the training time used: linear warm-up, then cosine down to a tenth (the
    CPU trainer's shape, train.cross_encoder.lr_factor, over time instead of steps)."""
    if progress < warmup:
        return max(progress / warmup, 0.01)
    done = min(1.0, (progress - warmup) / (1 - warmup))
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * done))


def encode_pairs(tokenizer, sides, names, max_length, device):
    batch = tokenizer(sides, names, truncation="longest_first", max_length=max_length,
                      padding=True, pad_to_multiple_of=8, return_tensors="pt")
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()
            if k in ("input_ids", "attention_mask")}


def evaluate(model, tokenizer, rows, held, gold_rank, config, device, batch: int = 512) -> dict:
    """On held-out generated rows: how often the gold outscores every first-stage candidate
    (train.cross_encoder.evaluate, batched), beside how often the first stage ranked it first."""
    import torch

    model.eval()
    pairs, owner = [], []
    for n, i in enumerate(held):
        for name in [rows.gold[i], *rows.negatives[i]]:
            pairs.append((rows.sides[i], name))
            owner.append(n)
    order = sorted(range(len(pairs)), key=lambda j: -len(pairs[j][0]) - len(pairs[j][1]))
    scores = np.zeros(len(pairs), dtype=np.float32)
    with torch.inference_mode(), torch.autocast(device.split(":")[0], dtype=torch.bfloat16,
                                                enabled=device.startswith("cuda")):
        for start in range(0, len(order), batch):
            idx = order[start:start + batch]
            tokens = encode_pairs(tokenizer, [pairs[j][0] for j in idx], [pairs[j][1] for j in idx],
                                  config.max_length, device)
            scores[idx] = model(**tokens).float().cpu().numpy()
    model.train()
    owner = np.asarray(owner)
    right, by_kind = [], {}
    for n, i in enumerate(held):
        mine = scores[owner == n]
        ok = bool(np.argmax(mine) == 0)
        right.append(ok)
        by_kind.setdefault(rows.kinds[i], []).append(ok)
    first = [gold_rank[i] == 1 for i in held]
    return {"held_out_rows": len(held), "held_out_acc1": float(np.mean(right)) if right else None,
            "first_stage_acc1": float(np.mean(first)) if first else None,
            "held_out_acc1_by_kind": {k: round(float(np.mean(v)), 4) for k, v in sorted(by_kind.items())}}


def save(ctx: Context, model, optimiser, config, info, history, step) -> Path:
    """adapter.safetensors + cross_encoder.json + checkpoint.pt into OUT/cross_encoder/,
    replaced whole (written beside, then moved)."""
    from codemap.train.cross_encoder import _save_checkpoint, save_model

    done = replace(config, steps=max(step, 1))
    tmp = ctx.work / "cross_encoder.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    save_model(tmp, model, done, info, history)
    _save_checkpoint(tmp, model, optimiser, step, history, done)
    target = ctx.out / FOLDER
    target.mkdir(parents=True, exist_ok=True)
    for item in tmp.iterdir():
        # The optimiser state of a 12-layer run would pass the 16 MiB a returned file may have.
        if item.stat().st_size > 15 * 2**20:
            continue
        item.replace(target / item.name)
    shutil.rmtree(tmp, ignore_errors=True)
    return target


def run(ctx: Context, record: Recorder) -> dict:
    import torch
    from torch import nn

    from codemap.embed.manifest import read_manifest
    from codemap.train.cross_encoder import CrossEncoderConfig

    started = time.time()
    device = ctx.device
    torch.manual_seed(0)
    if device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    else:
        torch.set_num_threads(ctx.knob("threads", 1, 1))
    config = CrossEncoderConfig(
        base="default", layers=ctx.knob("ce_layers", 6, 2), lora_rank=ctx.knob("ce_lora_rank", 16, 4),
        lora_alpha=32.0, max_length=64, groups=ctx.knob("ce_groups", 32, 2), negatives=7,
        hard_pool=15, steps=0, lr=ctx.knob("ce_lr", 2e-4), head_lr=1e-3, warmup=0,
        eval_rows=ctx.knob("ce_eval_rows", 300, 20), held_out_share=0.03, seed=0,
        device=device, kind_shares=ctx.knob("ce_kind_shares", KIND_SHARES))
    rank_reg = ctx.knob("ce_rank_reg", 0.0)
    eval_every = ctx.knob("ce_eval_every_s", 60.0)
    eval_steps = ctx.knob("ce_eval_every_steps", 0, 15)  # a rehearsal evaluates by steps
    rows, gold_score, neg_scores, gold_rank = load_rows(ctx.carry / "pairs")
    limit = ctx.knob("ce_max_rows", 0, 400)
    train_rows, held_rows = rows.split(config.held_out_share, config.seed)
    if limit:  # a rehearsal: a few hundred rows
        train_rows, held_rows = train_rows[:limit], held_rows[:max(10, limit // 20)]
    held = held_rows[:config.eval_rows]
    by_kind: dict[str, list[int]] = {}
    for i in train_rows:
        by_kind.setdefault(rows.kinds[i], []).append(i)
    shares = step_shares(config.kind_shares, by_kind)
    record.update(config=asdict(config), rank_reg=rank_reg, rows=len(rows.sides),
                  train_rows=len(train_rows), held_out_rows=len(held),
                  rows_by_kind={k: len(v) for k, v in by_kind.items()}, shares=shares,
                  load_rows_s=round(time.time() - started, 1))

    model, tokenizer = build_model(ctx, config.layers, config.lora_rank, config.lora_alpha)
    model.to(device)
    model.train()
    info = read_manifest(ctx.model, "default")
    trainable = [p for n, p in model.named_parameters() if p.requires_grad and "head" not in n]
    optimiser = torch.optim.AdamW([{"params": trainable, "lr": config.lr},
                                   {"params": model.head.parameters(), "lr": config.head_lr}],
                                  weight_decay=0.01)
    record.update(model_load_s=round(time.time() - started, 1),
                  trainable_parameters=sum(p.numel() for p in trainable))

    # Time kept back at the end: a last evaluation and the save (measured once, on a first
    # evaluation of a few rows, then scaled to the held-out rows).
    probe = time.time()
    evaluate(model, tokenizer, rows, held[:10], gold_rank, config, device)
    eval_s = (time.time() - probe) * max(1, len(held)) / 10
    reserve = eval_s * 1.3 + 8
    train_start = time.time()
    train_s = ctx.left() - reserve
    history, step, pairs_seen = [], 0, 0
    window = {"loss": torch.zeros((), device=device), "steps": 0, "t": time.time()}
    next_eval = train_start + eval_every
    group_size = config.negatives + 1
    targets = torch.zeros(config.groups, dtype=torch.long, device=device)
    log_every = ctx.knob("ce_log_every", 50, 5)
    max_steps = ctx.knob("ce_max_steps", 0, 30)  # 0: as many as the time allows
    while True:
        elapsed = time.time() - train_start
        if elapsed >= train_s or (max_steps and step >= max_steps):
            break
        step += 1
        rng = random.Random(f"{config.seed}:{step}")  # the step's batch, as the CPU trainer draws it
        picked = [rng.choice(by_kind[kind]) for kind in
                  rng.choices(list(shares), weights=list(shares.values()), k=config.groups)]
        sides, names, first_scores = [], [], []
        for i in picked:
            pool = list(range(min(config.hard_pool, len(rows.negatives[i]))))
            chosen = rng.sample(pool, min(config.negatives, len(pool)))
            group = [rows.gold[i]] + [rows.negatives[i][j] for j in chosen]
            scores = [gold_score[i]] + [neg_scores[i][j] for j in chosen]
            while len(group) < group_size:  # a short list: other rows' golds fill it
                group.append(rows.gold[rng.randrange(len(rows.gold))])
                scores.append(min(scores))
            sides += [rows.sides[i]] * group_size
            names += group
            first_scores += scores
        factor = lr_factor(step / max_steps if max_steps else elapsed / max(train_s, 1e-9))
        for params, base in zip(optimiser.param_groups, (config.lr, config.head_lr)):
            params["lr"] = base * factor
        tokens = encode_pairs(tokenizer, sides, names, config.max_length, device)
        with torch.autocast(device.split(":")[0], dtype=torch.bfloat16,
                            enabled=device.startswith("cuda")):
            logits = model(**tokens).float().view(config.groups, group_size)
        loss = nn.functional.cross_entropy(logits, targets)
        if rank_reg > 0:
            first = torch.tensor(first_scores, device=device).view(config.groups, group_size)
            loss = loss + rank_reg * torch.linalg.vector_norm(logits - first, dim=1).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        optimiser.zero_grad(set_to_none=True)
        pairs_seen += len(names)
        window["loss"] += loss.detach()
        window["steps"] += 1
        if step % log_every == 0:  # the one sync per window: reading the loss
            now = time.time()
            entry = {"step": step, "elapsed_s": round(now - train_start, 1),
                     "loss": round(float(window["loss"]) / window["steps"], 4),
                     "steps_per_s": round(window["steps"] / (now - window["t"]), 2),
                     "lr_factor": round(factor, 3)}
            print(f"cross_encoder {entry}", flush=True)
            record.update(log=record.data.get("log", []) + [entry], steps=step)
            window = {"loss": torch.zeros((), device=device), "steps": 0, "t": now}
        due = (step % eval_steps == 0) if eval_steps else time.time() >= next_eval
        if due and ctx.left() > reserve + eval_s:
            history.append({"step": step, "elapsed_s": round(time.time() - train_start, 1),
                            **evaluate(model, tokenizer, rows, held, gold_rank, config, device)})
            save(ctx, model, optimiser, config, info, history, step)
            record.update(history=history, steps=step, saved_at_step=step)
            print(f"cross_encoder eval {history[-1]}", flush=True)
            next_eval = time.time() + eval_every
    cuda_sync(device)
    train_time = time.time() - train_start
    if not history or history[-1]["step"] != step:  # else the last evaluation was at this step
        history.append({"step": step, "elapsed_s": round(train_time, 1),
                        **evaluate(model, tokenizer, rows, held, gold_rank, config, device)})
    folder = save(ctx, model, optimiser, config, info, history, step)
    result = {"steps": step, "train_s": round(train_time, 1),
              "steps_per_s": round(step / max(train_time, 1e-9), 2),
              "pairs_per_s": round(pairs_seen / max(train_time, 1e-9), 1),
              "rows_seen": step * config.groups,
              "epochs_of_train_rows": round(step * config.groups / max(1, len(train_rows)), 2),
              "history": history, "final": history[-1], "saved": str(folder.relative_to(ctx.out)),
              "files": {p.name: p.stat().st_size for p in sorted(folder.iterdir())},
              "peak_memory_gb": peak_memory_gb(device)}
    record.update(**result)
    return result
