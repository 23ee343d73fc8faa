"""Step 4: the large LOINC-like targets of the vocabulary-scale benchmark (426k and 1.4M names
once prepared, benchmarks/speed/vocab_scale.py) embedded whole on the GPU, and what a full index
gives the lab dev rows beside the two-stage pool.

This is the reduced form of the issue's step: codemap's full pipeline (FAISS, the lexical index,
the domain's evidence) does not run on the GPU machine, so the encoder alone is compared. The
carry (prepare_carry.py) holds every prepared name of the two tables with its concept, and for
the MIMIC and German lab dev rows their gold codes and the names the two-stage index pooled for
them on the CPU (when prepare_carry.py was run with --pools). Here:

- names/s: every name of the table embedded in bf16 (batch GPU_SCALE_BATCH, sorted by length),
  tokenising included;
- full index: each row's concepts ordered by their best name's cosine over all names: acc@1,
  acc@10 (the encoder alone over the full index);
- pool: the same order over the pooled names only (what the two-stage path lets the encoder
  see): acc@1, acc@10, whether the gold is in the pool, and whether the full index's first
  concept is.

The 426k table is done first; the 1.4M one embeds only the names the 426k one lacked, when the
time left allows it by the rate just measured.
"""
from __future__ import annotations

import time

import numpy as np

from harness import Context, Recorder, cuda_sync, peak_memory_gb
from step_inference import TorchCast

TABLES = ("426k", "1.4M")  # each table is the first n names of the carried ones


def read_scale(path):
    """(names, concept ids, {table: its number of names}) of prepare_carry.write_scale_npz."""
    import json
    import lzma

    with np.load(path) as data:
        names = lzma.decompress(data["names_xz"].tobytes()).decode("utf-8").split("\n")
        codes = np.cumsum(data["code_diff"].astype(np.int64))
        sizes = json.loads(bytes(data["info"]).decode())["tables"]
    return np.asarray(names, dtype=object), codes, sizes


def concept_order(scores: np.ndarray, names: np.ndarray, codes: np.ndarray, k: int = 10) -> list:
    """The first `k` distinct concepts of the names `names` ordered by `scores` (best first)."""
    found = []
    for j in np.argsort(-scores, kind="stable"):
        code = codes[names[j]]
        if code not in found:
            found.append(code)
            if len(found) == k:
                break
    return found


def run(ctx: Context, record: Recorder) -> dict:
    import pandas as pd
    import torch

    from codemap.embed.manifest import read_manifest

    device = ctx.device
    if not device.startswith("cuda"):
        torch.set_num_threads(ctx.knob("threads", 1, 1))
    info = read_manifest(ctx.model, "default")
    started = time.time()
    names, codes, sizes = read_scale(ctx.carry / "scale.npz")
    queries = pd.read_parquet(ctx.carry / "scale_queries.parquet")
    limit = ctx.knob("scale_max_names", 0, 3000)
    if limit:  # a rehearsal: the first names of each table and every gold code's names
        keep = np.isin(codes, np.concatenate(queries["gold"].to_numpy()))
        for size in sizes.values():
            keep[:min(limit, size)] = True
            keep[size - min(limit, size):size] = True
        moved = np.cumsum(keep) - 1
        sizes = {label: int(keep[:size].sum()) for label, size in sizes.items()}
        names, codes = names[keep], codes[keep]
        for column in [c for c in queries.columns if c.startswith("pool_")]:
            queries[column] = [[int(moved[p]) for p in np.asarray(pool, dtype=np.int64) if keep[p]]
                               for pool in queries[column]]
    batch = ctx.knob("scale_batch", 1024, 64)
    model = TorchCast(ctx.model, torch.bfloat16 if device.startswith("cuda") else torch.float32,
                      device, info.max_length, info.prefix)
    query_vectors = torch.from_numpy(model.embed(list(queries["text"]))).to(device)
    results = {"read_s": round(time.time() - started, 1), "rows": len(queries),
               "sets": sorted(queries["set"].unique()), "tables": {}}
    record.update(**results)
    vectors = torch.zeros((len(names), query_vectors.shape[1]), dtype=torch.float16, device=device)
    embedded = np.zeros(len(names), dtype=bool)
    rate = None
    for label in TABLES:
        members = np.arange(sizes[label])
        todo = members[~embedded[members]]
        if rate is not None and len(todo) / rate > ctx.left() - 15:
            results["tables"][label] = {"skipped": f"{len(todo):,} names to embed at "
                                                   f"{rate:,.0f}/s, {ctx.left():.0f} s left"}
            break
        order = np.argsort([len(t) for t in names[todo]], kind="stable")
        clock = time.time()
        stopped = False
        chunks = [todo[order[start:start + batch]] for start in range(0, len(order), batch)]
        for idx, tokens in prefetched(model, names, chunks):
            vectors[torch.as_tensor(idx, device=device)] = model.vectors(tokens).half()
            embedded[idx] = True
            if ctx.left() < 10:
                stopped = True
                break
        cuda_sync(device)
        took = time.time() - clock
        done = int(embedded[todo].sum())
        rate = done / max(took, 1e-9)
        entry = {"names": int(len(members)), "embedded_now": done, "embed_s": round(took, 1),
                 "names_per_s": round(rate, 1), "complete": not stopped}
        if not stopped:
            entry.update(score(vectors, query_vectors, members, codes, queries, label))
        entry["peak_memory_gb"] = peak_memory_gb(device)
        results["tables"][label] = entry
        print(f"scale {label} {entry}", flush=True)
        record.update(**results)
        if stopped:
            break
    return results


def prefetched(model, names, chunks, ahead: int = 4):
    """(chunk, its tokens) in order, the next `ahead` chunks tokenised by threads meanwhile (the
    tokenizer releases the GIL): the GPU does not wait for the CPU between batches."""
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2) as pool:
        queue = deque()
        for n, idx in enumerate(chunks):
            queue.append((idx, pool.submit(model.tokens, list(names[idx]))))
            if len(queue) > ahead or n == len(chunks) - 1:
                while queue and (len(queue) > ahead or n == len(chunks) - 1):
                    done, future = queue.popleft()
                    yield done, future.result()


def score(vectors, query_vectors, members, codes, queries, label: str) -> dict:
    """The encoder alone over the full index (the table's names) and over each row's pool."""
    import torch

    index = vectors[torch.as_tensor(members, device=vectors.device)]
    sims = (query_vectors.half() @ index.T).float()  # rows × names
    top = torch.topk(sims, k=min(400, sims.shape[1]), dim=1)
    top_idx, top_val = top.indices.cpu().numpy(), top.values.cpu().numpy()
    pool_col = f"pool_{label}"
    has_pool = pool_col in queries.columns
    by_set: dict[str, dict] = {}
    for r, row in enumerate(queries.to_dict("records")):
        gold = set(row["gold"])
        full = concept_order(top_val[r], members[top_idx[r]], codes)
        entry = {"full_acc1": full[:1] and full[0] in gold, "full_acc10": bool(gold & set(full))}
        if has_pool and row_has_pool(row[pool_col]):
            pool = np.asarray(row[pool_col], dtype=np.int64)
            pool_scores = (query_vectors[r:r + 1].half() @ vectors[torch.as_tensor(pool, device=vectors.device)].T
                           ).float().cpu().numpy()[0]
            pooled = concept_order(pool_scores, pool, codes)
            pool_codes = set(codes[pool])
            entry.update(pool_acc1=bool(pooled[:1] and pooled[0] in gold),
                         pool_acc10=bool(gold & set(pooled)), gold_in_pool=bool(gold & pool_codes),
                         full_top1_in_pool=bool(full[:1] and full[0] in pool_codes))
        by_set.setdefault(row["set"], []).append(entry)
    out = {}
    for name, entries in by_set.items():
        keys = ["full_acc1", "full_acc10", "pool_acc1", "pool_acc10", "gold_in_pool",
                "full_top1_in_pool"]
        pooled = [e for e in entries if "pool_acc1" in e]
        out[name] = {"rows": len(entries), "rows_with_pool": len(pooled),
                     **{k: round(float(np.mean([bool(e[k]) for e in entries if k in e])), 4)
                        for k in keys if any(k in e for e in entries)}}
    return {"sets": out}


def row_has_pool(value) -> bool:
    return value is not None and len(value) > 0
