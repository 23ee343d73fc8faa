"""Rows per second of `Mapper.map_block` (embedding + hybrid ranking), in one process.

Loads a Mapper once (target, model, both indexes, from the cache), then maps a source list and
times the block; the embedding is timed on its own so the ranking's share is the difference.
`--profile` prints the cProfile of the block. `--save` writes the candidates, so two versions of
codemap can be compared row for row on the same input (run this script with each on PYTHONPATH):

    python benchmarks/speed/rank_speed.py --source examples/labs.xlsx --target LOINC --generate 2000
    PYTHONPATH=/path/to/other/checkout python benchmarks/speed/rank_speed.py ... --save other.parquet
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import time
from pathlib import Path

import numpy as np
import pandas as pd

import codemap
from codemap.config import EncoderConfig, IndexConfig, MapConfig
from codemap.engines import Mapper
from codemap.read import SourceTable, read_code_list


def generated_rows(mapper: Mapper, n: int) -> SourceTable:
    """n target names with one of their first four words dropped (as benchmarks/speed/scale_map.py
    makes its source rows), so every row has a close but inexact target, and a specimen column
    (blank in a third of the rows) so the specimen evidence has work to do."""
    names = mapper.vocab.names["name"].to_numpy()
    rng = np.random.default_rng(2)
    picked, drop = names[rng.integers(0, len(names), n)], rng.integers(0, 4, n)
    texts = [" ".join(w for j, w in enumerate(t.split()) if j != d) or t for t, d in zip(picked, drop)]
    specimens = np.array(["", "Blood", "Urine", "Serum", "CSF", "Plasma"])[rng.integers(0, 6, n)]
    frame = pd.DataFrame({"code": [f"S{i:07d}" for i in range(n)], "name": texts,
                          "specimen": specimens})
    return SourceTable(Path("generated"), frame, "code", ("name",), None, "specimen")


def measure(mapper: Mapper, source: SourceTable, profile: bool) -> tuple[dict, pd.DataFrame]:
    """Seconds of the embedding alone and of the whole block; the block's candidates."""
    started = time.perf_counter()
    mapper.encoder.encode(source.query_texts, progress=False)
    encode_s = time.perf_counter() - started
    profiler = cProfile.Profile() if profile else None
    started = time.perf_counter()
    if profiler:
        profiler.enable()
    candidates = mapper.map_block(source)
    block_s = time.perf_counter() - started
    if profiler:
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    rows = len(source.texts)
    return {"rows": rows, "encode_s": round(encode_s, 2), "block_s": round(block_s, 2),
            "rank_s (block - encode)": round(block_s - encode_s, 2),
            "rows_per_s": round(rows / block_s, 1),
            "ranking_rows_per_s": round(rows / max(block_s - encode_s, 1e-9), 1)}, candidates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="LOINC")
    parser.add_argument("--model", default="default")
    parser.add_argument("--source", type=Path, help="a code list; else --generate rows")
    parser.add_argument("--generate", type=int, default=0, help="rows made from the target's names")
    parser.add_argument("--approximate-above", type=int, default=IndexConfig().approximate_above)
    parser.add_argument("--cache-dir", type=Path, default=MapConfig.__dataclass_fields__["cache_dir"].default)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--save", type=Path, help="write the candidates here (.parquet)")
    parser.add_argument("--json", type=Path, help="append the figures here as one JSON line")
    args = parser.parse_args()
    config = MapConfig(source=args.source or Path("generated"), target=args.target,
                       encoder=EncoderConfig(model=args.model), cache_dir=args.cache_dir,
                       progress=False, index=IndexConfig(approximate_above=args.approximate_above))
    started = time.perf_counter()
    mapper = Mapper.load(config)
    load_s = time.perf_counter() - started
    source = read_code_list(args.source) if args.source else generated_rows(mapper, args.generate)
    figures, candidates = measure(mapper, source, args.profile)
    figures = {"codemap": str(Path(codemap.__file__).parent), "target": args.target,
               "model": args.model, "names": len(mapper.vocab.names),
               "approximate": bool(mapper.index.approximate), "load_s": round(load_s, 1),
               **figures, "load_average": os.getloadavg()}
    print(json.dumps(figures), flush=True)
    if args.json:
        with open(args.json, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(figures) + "\n")
    if args.save:
        candidates.to_parquet(args.save, index=False)


if __name__ == "__main__":
    main()
