"""Training a cross-encoder re-ranker on the same knowledge graph as the bi-encoder.

    codemap train-reranker --kg loinc-en --kg icd10cm --data-dir ../shared/data --steps 300 \
        --out runs/reranker --holdout tests/data/mimic_labs_gold.tsv

A training group is one anchor name, its positive (another name of the same concept) and
`rerank_negatives` hard negatives: names of other concepts among the default bi-encoder's top
`rerank_pool` names for the anchor (the FAISS name index of `codemap.embed.index`, over the graph's
names). The model (a BERT-family base with a 1-logit head) scores every (anchor, candidate) pair;
the loss is a softmax cross-entropy over each group, positive first (listwise). Those are exactly
the confusions the re-ranker must undo: the candidates it sees at map time are the bi-encoder's.

Settings are the trainer's `TrainConfig` (`--kg`, `--holdout`, `--base`, `--steps`, `--lr`,
`--warmup-steps`, `--seed`, `--out`, `--rerank-*`, e.g. `--rerank-random-negatives`). Which anchors a run sees, and every batch, are
pure functions of the seed and the step, like the bi-encoder trainer's batches.
"""
from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from codemap.config import EncoderConfig, default_cache_dir
from codemap.embed import Encoder
from codemap.errors import CodemapError
from codemap.progress import bar as progress_bar
from codemap.embed import load_or_build_index
from codemap.embed import resolve_model
from codemap.rank.rerank import RERANKER_FILE, pair_length
from codemap.vocab import Vocabulary

from .config import TrainConfig
from .kg import KnowledgeGraph
from .loop import _append_csv, _precision, check_config, load_graph, lr_factor, optimizer_step

log = logging.getLogger(__name__)

LOG_COLUMNS = ["step", "loss", "accuracy", "lr", "steps_per_s", "elapsed_s"]


@dataclass
class PairGroups:
    """One step's training groups: for group g, `candidates[g][0]` is the positive."""

    anchors: list[str]
    candidates: list[list[str]]


def graph_vocabulary(graph: KnowledgeGraph) -> Vocabulary:
    """The graph's names as a Vocabulary, so the one name index (cached, resumable) embeds them."""
    counts = np.diff(graph.offsets)
    codes = np.repeat(np.asarray(graph.concepts, dtype=object), counts)
    names = pd.DataFrame({"code": codes, "name": graph.names, "name_type": "synonym", "lang": ""})
    concepts = pd.DataFrame({"code": graph.concepts,
                             "name": [graph.names[o] for o in graph.offsets[:-1]]})
    return Vocabulary(id="KG", version="training graph", concepts=concepts, names=names)


def anchor_rows(graph: KnowledgeGraph) -> np.ndarray:
    """Name rows that can be anchors: their concept has at least one other name (the positive)."""
    counts = np.diff(graph.offsets)
    return np.flatnonzero(np.repeat(counts, counts) >= 2).astype(np.int64)


def plan_anchors(graph: KnowledgeGraph, steps: int, batch: int, seed: int) -> np.ndarray:
    """(steps, batch) anchor name rows: the whole run's anchors, drawn once from the seed."""
    rows = anchor_rows(graph)
    if len(rows) == 0:
        raise CodemapError("the knowledge graph has no concept with two names: a re-ranker "
                           "needs synonyms (positives); add a --kg with synonyms")
    rng = np.random.default_rng([seed, 1])
    return rng.choice(rows, size=(steps, batch), replace=len(rows) < steps * batch)


def mine_negatives(graph: KnowledgeGraph, anchors: np.ndarray, encoder: Encoder, pool: int,
                   cache_dir: Path, progress: bool = False) -> dict[int, np.ndarray]:
    """Hard negatives per anchor name row: the concepts of the bi-encoder's top `pool` names for
    it, best first, without its own concept and without concepts that carry the anchor's own
    text (a duplicate name across vocabularies is not a wrong answer)."""
    vocab = graph_vocabulary(graph)
    index = load_or_build_index(vocab, encoder, cache_dir, progress=progress)
    unique = np.unique(anchors)
    concept_of = np.repeat(np.arange(len(graph.concepts)), np.diff(graph.offsets))
    text_concepts = pd.Series(concept_of).groupby(pd.Series(graph.names)).agg(set).to_dict()
    _, hits = index.search(index.vectors[unique], pool + 1)
    mined = {}
    for row, found in zip(unique, hits):
        skip = text_concepts[graph.names[row]] | {int(concept_of[row])}
        concepts = pd.unique(concept_of[found[found >= 0]])
        mined[int(row)] = np.array([c for c in concepts if c not in skip], dtype=np.int64)
    return mined


def step_groups(graph: KnowledgeGraph, anchors: np.ndarray, mined: dict[int, np.ndarray],
                negatives: int, seed: int, step: int, random_negatives: int = 0) -> PairGroups:
    """The groups of one step: a random other name of the anchor's concept as the positive, up
    to `negatives` mined concepts, then random concepts up to `negatives + random_negatives`
    (easy negatives: with hard ones only, the positive is the one candidate that need not look
    like the anchor, a shortcut random ones contradict), one random name of each."""
    rng = np.random.default_rng([seed, 2, step])
    concept_of = np.searchsorted(graph.offsets, anchors, side="right") - 1
    texts, groups = [], []
    for row, concept in zip(anchors, concept_of):
        start, end = graph.offsets[concept], graph.offsets[concept + 1]
        others = [i for i in range(start, end) if i != row]
        pool = mined.get(int(row), np.zeros(0, np.int64))
        chosen = list(rng.choice(pool, size=min(negatives, len(pool)), replace=False))
        while len(chosen) < negatives + random_negatives:
            extra = int(rng.integers(len(graph.concepts)))
            if extra != concept and extra not in chosen:
                chosen.append(extra)
        picks = [others[int(rng.integers(len(others)))]]
        picks += [graph.offsets[c] + int(rng.integers(graph.offsets[c + 1] - graph.offsets[c]))
                  for c in chosen]
        texts.append(graph.names[row])
        groups.append([graph.names[i] for i in picks])
    return PairGroups(texts, groups)


def group_loss(model, tokenizer, groups: PairGroups, max_length: int, device) -> tuple:
    """Softmax cross-entropy over each group's logits (target: the positive, first); returns
    (loss, share of groups whose positive scored highest)."""
    size = len(groups.candidates[0])
    queries = [a for a in groups.anchors for _ in range(size)]
    candidates = [c for group in groups.candidates for c in group]
    tokens = tokenizer(queries, candidates, padding=True, truncation=True, max_length=max_length,
                       return_tensors="pt").to(device)
    logits = model(**tokens).logits.view(len(groups.anchors), size)
    target = torch.zeros(len(groups.anchors), dtype=torch.long, device=device)
    loss = torch.nn.functional.cross_entropy(logits.float(), target)
    accuracy = float((logits.argmax(dim=1) == 0).float().mean())
    return loss, accuracy


def load_base(base: str):
    """(model with a 1-logit head, tokenizer, ModelInfo) from `--base`, resolved like --model."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    info = resolve_model(base)
    model = AutoModelForSequenceClassification.from_pretrained(info.path, num_labels=1)
    return model, AutoTokenizer.from_pretrained(info.path), info


def save_reranker(folder: Path, model, tokenizer, meta: dict) -> None:
    """A Hugging Face folder plus reranker.json, written to a temporary folder renamed at the end
    (a killed run never leaves a half-written model)."""
    folder = Path(folder)
    tmp = folder.with_name(f".tmp-{folder.name}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    (tmp / RERANKER_FILE).write_text(json.dumps(meta, indent=1, default=str), encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)


def train_reranker(config: TrainConfig) -> dict:
    """Train a cross-encoder re-ranker as `config` says; returns a summary. The model lands in
    `config.out`/model (HF folder + reranker.json), the loss log in `config.out`/log.csv.

    Raises CodemapError for bad settings, data or model specs.
    """
    check_config(config)
    if config.rerank_negatives < 1 or config.rerank_batch < 1 or config.rerank_pool < 1:
        raise CodemapError("--rerank-negatives, --rerank-batch and --rerank-pool must be ≥ 1")
    if config.rerank_random_negatives < 0:
        raise CodemapError("--rerank-random-negatives must be ≥ 0")
    device = torch.device("cuda" if config.device != "cpu" and torch.cuda.is_available() else "cpu")
    torch.manual_seed(config.seed)
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "log.csv").unlink(missing_ok=True)
    graph = load_graph(config)
    log.info("training graph: %s", graph.summary())
    started = time.perf_counter()
    anchors = plan_anchors(graph, config.steps, config.rerank_batch, config.seed)
    miner = Encoder.load(EncoderConfig(model="default", device=config.device), default_cache_dir())
    mined = mine_negatives(graph, anchors, miner, config.rerank_pool, default_cache_dir(),
                           config.progress)
    mine_seconds = time.perf_counter() - started
    log.info("mined hard negatives for %d anchors in %.0f s", len(mined), mine_seconds)
    model, tokenizer, info = load_base(config.base)
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: lr_factor(s, config))
    autocast, scaler = _precision(config, device)
    meta = {"kind": "cross-encoder re-ranker", "base_model": config.base,
            "base_model_path": str(info.path), "kg": list(config.kg),
            "holdout": list(config.holdout), "data_hash": graph.content_hash,
            "graph": graph.summary(), "max_length": pair_length(config.max_length),
            "negatives": config.rerank_negatives,
            "random_negatives": config.rerank_random_negatives, "miner": "default", "pool": config.rerank_pool,
            "train_config": config.as_dict()}
    bar = progress_bar(config.steps, "training re-ranker", "step", config.progress)
    clock = window = time.perf_counter()
    losses = []
    for step in range(1, config.steps + 1):
        groups = step_groups(graph, anchors[step - 1], mined, config.rerank_negatives, config.seed,
                             step, config.rerank_random_negatives)
        with autocast():
            loss, accuracy = group_loss(model, tokenizer, groups, meta["max_length"], device)
        (scaler.scale(loss) if scaler else loss).backward()
        optimizer_step(model, optimizer, scheduler, scaler, config.clip)
        losses.append(float(loss.detach()))
        bar.update(1)
        bar.set_postfix(loss=f"{losses[-1]:.4f}")
        if step % config.log_every == 0 or step == config.steps:
            now = time.perf_counter()
            every = config.log_every if step % config.log_every == 0 else step % config.log_every
            _append_csv(out / "log.csv", LOG_COLUMNS, {
                "step": step, "loss": round(float(np.mean(losses[-every:])), 6),
                "accuracy": round(accuracy, 4), "lr": scheduler.get_last_lr()[0],
                "steps_per_s": round(every / max(now - window, 1e-9), 4),
                "elapsed_s": round(now - clock, 2)})
            log.info("step %d loss %.4f", step, losses[-1])
            window = now
        if config.checkpoint_every and step % config.checkpoint_every == 0 and step < config.steps:
            # The model so far (no optimiser state: a re-ranker run restarts, it does not resume).
            save_reranker(out / "model", model, tokenizer, {**meta, "steps": step})
    bar.close()
    train_seconds = time.perf_counter() - clock
    save_reranker(out / "model", model, tokenizer,
                  {**meta, "steps": config.steps, "train_seconds": round(train_seconds, 1)})
    first, last = losses[:config.log_every], losses[-config.log_every:]
    return {"graph": graph.summary(), "anchors": int(len(mined)), "steps": config.steps,
            "mine_seconds": round(mine_seconds, 1), "train_seconds": round(train_seconds, 1),
            "steps_per_s": round(config.steps / train_seconds, 4),
            "loss_first": round(float(np.mean(first)), 4), "loss_last": round(float(np.mean(last)), 4),
            "model": str(out / "model"), "device": str(device)}
