"""Scale of the name index: exact vs IVF search on generated unit vectors (no model needed).

For each dictionary size: build time, search time for the queries, recall@10 of IVF (fp32 and
fp16) against exact search, and the process's peak RSS. Queries are dictionary vectors plus noise,
so each has a true nearest neighbourhood as real term queries do.

    OMP_NUM_THREADS=2 python benchmarks/speed/scale.py --names 100000 1000000 --queries 2000
"""
from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from codemap.config import IndexConfig
from codemap.embed.index import build_faiss_index

DIM = 384  # all-MiniLM-L6-v2


def unit_vectors(n: int, seed: int) -> np.ndarray:
    """Names in topical clusters (term embeddings are clustered, uniform noise is not), unit norm."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((max(1, n // 50), DIM), dtype=np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    out = np.empty((n, DIM), np.float32)
    for start in range(0, n, 100_000):  # in blocks: no float64 copy of the whole matrix
        size = min(100_000, n - start)
        block = centers[rng.integers(0, len(centers), size)]
        block += (0.6 / np.sqrt(DIM)) * rng.standard_normal((size, DIM), dtype=np.float32)
        out[start:start + size] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(n_names: int, n_queries: int, nprobe: int) -> list[dict]:
    names = unit_vectors(n_names, seed=1)
    rng = np.random.default_rng(2)
    picked = names[rng.choice(n_names, n_queries, replace=False)]
    queries = picked + (0.3 / np.sqrt(DIM)) * rng.standard_normal(picked.shape, dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    results, exact_ids = [], None
    for label, config in [("exact", IndexConfig(approximate_above=n_names)),
                          ("ivf", IndexConfig(approximate_above=0, nprobe=nprobe)),
                          ("ivf fp16", IndexConfig(approximate_above=0, nprobe=nprobe, float16=True))]:
        started = time.perf_counter()
        index = build_faiss_index(names, config)
        built = time.perf_counter() - started
        started = time.perf_counter()
        _, ids = index.search(queries, 10)
        searched = time.perf_counter() - started
        exact_ids = ids if exact_ids is None else exact_ids
        recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids, exact_ids)])
        results.append({"names": n_names, "index": label, "build_s": round(built, 2),
                        "search_ms_per_query": round(1000 * searched / n_queries, 3),
                        "recall@10": round(float(recall), 4), "peak_rss_mb": round(peak_rss_mb())})
        print(results[-1], flush=True)
        del index
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--nprobe", type=int, default=IndexConfig.nprobe)
    args = parser.parse_args()
    for n in args.names:
        run(n, args.queries, args.nprobe)


if __name__ == "__main__":
    main()
