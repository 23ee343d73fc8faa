"""Diagnose the CODER trainer's batches on a knowledge graph with the untrained base model:
how many positive/negative pairs the MS miner keeps per batch, the loss parts, a sample of
triplets, and the time of one forward+backward step on this machine. "hard_neg_triplet_ends" counts
the mined term-loss negatives that are the head and the tail of one batch triplet (e.g. an ICD
code and its parent), with their mean similarity.

usage: python benchmarks/training/train_diagnose.py DATA_DIR [--key value ...]   (TrainConfig overrides,
       e.g. --kg loinc --kg icd10cm --batch-triplets 32 --repeats 2)
"""
from __future__ import annotations

import json
import sys
import time

import torch
import torch.nn.functional as F
from transformers import AutoModel, AutoTokenizer

from codemap.embed import Pooling, resolve_model
from codemap.train.config import parse_overrides
from codemap.train.kg import TripletSampler
from codemap.train.loop import load_graph
from codemap.train.losses import _term_pairs, mine_hard_pairs
from codemap.train.model import CoderModel, TermEncoder, build_loss


def main(argv: list[str]) -> None:
    config = parse_overrides(["--data-dir", argv[0], *argv[1:]])
    info = resolve_model(config.base)
    pooling = Pooling(config.pooling) if config.pooling else info.pooling
    encoder = TermEncoder(AutoModel.from_pretrained(info.path), AutoTokenizer.from_pretrained(info.path),
                          pooling, config.max_length)
    graph = load_graph(config)
    print(json.dumps(graph.summary()))
    sampler = TripletSampler(graph, config.batch_triplets, config.repeats, config.seed)
    model = CoderModel(encoder, build_loss(config, len(graph.relation_labels),
                                           encoder.model.config.hidden_size))
    k = config.batch_triplets
    steps = int(__import__("os").environ.get("DIAGNOSE_STEPS", "5"))
    for step in range(steps):
        batch = sampler.batch(step)
        labels = torch.as_tensor(batch.labels)
        start = time.perf_counter()
        tokens = encoder.tokenize(batch.names, "cpu")
        emb = encoder(**tokens)
        result = model.loss(emb, labels, torch.as_tensor(batch.relations))
        result["loss"].backward()
        seconds = time.perf_counter() - start
        model.zero_grad()
        unit = F.normalize(emb.detach(), dim=-1)
        sim = unit @ unit.T
        same, pairs = _term_pairs(labels)  # the term loss's own pairs (relation-only parts skipped)
        eye = ~pairs
        hard_pos, hard_neg = mine_hard_pairs(sim, same & pairs, ~same & pairs, config.eps)
        used = hard_pos.any(1) & hard_neg.any(1)
        rows = torch.as_tensor(batch.triplets).repeat(2)
        side = torch.arange(len(rows)) >= k
        ends = (rows[:, None] == rows[None, :]) & (side[:, None] != side[None, :]) & hard_neg
        print(json.dumps({"step": step, "seconds": round(seconds, 2), "tokens": list(tokens["input_ids"].shape),
                          "pos_pairs": int((same & ~eye).sum()), "hard_pos": int(hard_pos.sum()),
                          "hard_neg": int(hard_neg.sum()), "anchors_used": int(used.sum()),
                          "hard_neg_triplet_ends": int(ends.sum()),
                          "triplet_ends_sim": round(float(sim[ends].mean()), 3) if ends.any() else None,
                          "other_hard_neg_sim": round(float(sim[hard_neg & ~ends].mean()), 3)
                          if (hard_neg & ~ends).any() else None,
                          "pos_sim_mean": round(float(sim[same & ~eye].mean()), 3),
                          "neg_sim_max_mean": round(float(torch.where(~same, sim, -2).max(1).values.mean()), 3),
                          **{key: round(float(v), 4) for key, v in result.items()}}))
        if step == 0:
            rels = graph.relation_labels
            for i in range(0, k, config.repeats)[:8]:
                print("  ", batch.names[i], "|", rels[batch.relations[i]], "|", batch.names[k + i])


if __name__ == "__main__":
    main(sys.argv[1:])
