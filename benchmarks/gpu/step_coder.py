"""Step 2: a chunk of CODER bi-encoder training in bf16 (train/'s model, sampler and losses), timed
at two batch sizes.

For each batch size (triplet rows per step, `--batch-triplets`; each step embeds twice as many
names, heads and tails) a fresh model is built as `python -m codemap.train` builds it (the
default model with LoRA adapters, as the shipped coder-multilingual was trained, or all weights
with GPU_CODER_LORA_RANK=0), the sampler draws batches from the carried graph, and steps run
under bf16 autocast for GPU_CODER_SECONDS after a few untimed warm-up steps. Reported: steps/s,
names (terms) embedded per second, the loss at the start and end of the window, peak memory.
Nothing is saved: this measures what a GPU-scale CODER run would cost, it does not make one.
"""
from __future__ import annotations

import gc
import time

import numpy as np

from harness import Context, Recorder, cuda_sync, peak_memory_gb


def load_graph(path):
    """The carried graph (prepare_carry.py's kg.npz) as train.kg.KnowledgeGraph."""
    import json

    from codemap.train.kg import KnowledgeGraph

    with np.load(path) as data:
        info = json.loads(bytes(data["info"]).decode())
        blob = bytes(data["names"]).decode("utf-8")
        names = blob.split("\n")
        return KnowledgeGraph(concepts=[f"c{i}" for i in range(len(data["offsets"]) - 1)],
                              names=names, offsets=data["offsets"].astype(np.int64),
                              relation_labels=info["relation_labels"],
                              triplets=data["triplets"].astype(np.int64),
                              relation_only=data["relation_only"] if "relation_only" in data else None)


def measure(ctx: Context, graph, batch_triplets: int, repeats: int, seconds: float,
            lora_rank: int) -> dict:
    """Train steps at one batch size for `seconds` (after warm-up); the timings and losses."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from codemap.embed.manifest import Pooling, read_manifest
    from codemap.train.config import TrainConfig
    from codemap.train.kg import TripletSampler
    from codemap.train.model import CoderModel, TermEncoder, add_lora, build_loss

    device = ctx.device
    config = TrainConfig(batch_triplets=batch_triplets, repeats=repeats, lora_rank=lora_rank,
                         lr=2e-4 if lora_rank else 2e-5, relation_loss="cosine",
                         part_term_loss=False, triplet_end_negatives=False, precision="bf16")
    info = read_manifest(ctx.model, "default")
    torch.manual_seed(0)
    base = AutoModel.from_pretrained(str(ctx.model))
    if lora_rank:
        base = add_lora(base, lora_rank, config.lora_alpha, 0.0)
    encoder = TermEncoder(base, AutoTokenizer.from_pretrained(str(ctx.model)), Pooling.MEAN,
                          config.max_length, info.prefix)
    sampler = TripletSampler(graph, batch_triplets, repeats, seed=0)
    model = CoderModel(encoder, build_loss(config, len(graph.relation_labels),
                                           base.config.hidden_size)).to(device)
    model.train()
    params = [p for p in model.encoder.parameters() if p.requires_grad]
    groups = [{"params": params, "lr": config.lr, "weight_decay": config.weight_decay}]
    relation = list(model.loss.parameters())
    if relation:
        groups.append({"params": relation, "lr": config.relation_lr, "weight_decay": 0.0})
    optimiser = torch.optim.AdamW(groups)
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    cuda_type = device.split(":")[0]

    def one(step: int) -> torch.Tensor:
        batch = sampler.batch(step)
        tokens = encoder.tokenize(batch.names, device)
        labels = torch.as_tensor(batch.labels, device=device)
        relations = torch.as_tensor(batch.relations, device=device)
        with torch.autocast(cuda_type, dtype=torch.bfloat16, enabled=cuda_type == "cuda"):
            result = model(tokens, labels, relations)
        result["loss"].backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimiser.step()
        optimiser.zero_grad(set_to_none=True)
        return result["loss"].detach()

    warm = ctx.knob("coder_warmup_steps", 3, 1)
    for step in range(warm):
        one(step)
    cuda_sync(device)
    losses, step = [], warm
    started = time.time()
    stop = min(started + seconds, ctx.deadline - 5)
    while time.time() < stop:
        losses.append(one(step))
        step += 1
    cuda_sync(device)
    took = time.time() - started
    steps = step - warm
    values = [float(v) for v in losses]
    names = 2 * batch_triplets
    out = {"batch_triplets": batch_triplets, "names_per_step": names, "repeats": repeats,
           "lora_rank": lora_rank, "steps": steps, "seconds": round(took, 1),
           "steps_per_s": round(steps / max(took, 1e-9), 3),
           "terms_per_s": round(steps * names / max(took, 1e-9), 1),
           "loss_first": round(float(np.mean(values[:10])), 4) if values else None,
           "loss_last": round(float(np.mean(values[-10:])), 4) if values else None,
           "peak_memory_gb": peak_memory_gb(device)}
    return out


def run(ctx: Context, record: Recorder) -> dict:
    import torch

    if ctx.device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = True
    else:
        torch.set_num_threads(ctx.knob("threads", 1, 1))
    graph = load_graph(ctx.carry / "kg.npz")
    record.update(graph=graph.summary())
    batches = [int(b) for b in str(ctx.knob("coder_batches", "256,1024", "16,32")).split(",")]
    lora_rank = ctx.knob("coder_lora_rank", 16)
    results = []
    for n, batch in enumerate(batches):
        left = ctx.left() - 5
        # each batch size gets an equal share of what is left, less its model set-up
        seconds = min(ctx.knob("coder_seconds", 45.0, 3.0), left / (len(batches) - n) - 10)
        if seconds < 2:
            results.append({"batch_triplets": batch, "skipped": f"{left:.0f} s left"})
            continue
        repeats = 8 if batch >= 64 else 4
        try:
            results.append(measure(ctx, graph, batch, repeats, seconds, lora_rank))
        except torch.cuda.OutOfMemoryError as exc:  # a batch too large is a result too
            results.append({"batch_triplets": batch, "error": f"out of memory: {exc}"[:300]})
        gc.collect()  # the last model's memory, before the next one is built
        if ctx.device.startswith("cuda"):
            torch.cuda.empty_cache()
        print(f"coder {results[-1]}", flush=True)
        record.update(batches=results)
    return {"graph": graph.summary(), "batches": results}
