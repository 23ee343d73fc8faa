"""Local engine vs `--engine ray` with 1 and 2 workers on this machine, and the overhead per block.

The list is examples/labs.csv repeated to --rows rows (real lab names, codes made unique); the
target is the built-in LOINC subset; the model the shipped default. Figures:
- local: `Mapper.load` (index cached) then `map_block` over the whole list, and the mapping alone;
- ray N: wall time of `map_with_ray` end to end (Ray start, N actors loading the model, mapping,
  parts and manifest written), and rows/s; equality of the candidates with the local engine;
- overhead per block: the same rows with 1 worker in blocks of --small rows; from the manifest,
  the time between two parts being written minus the actor's time mapping the later one
  (scheduling, moving the block and the part, writing it), median over the blocks.
The index cache is built before timing. A ratio on this machine's shared cores, not a promise of
speed-up: on a cluster each worker is a GPU (README, "Beyond one machine").

    OMP_NUM_THREADS=1 python benchmarks/ray_bench.py --rows 3000 --batch-rows 500 --small 50
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from codemap.config import MapConfig, RayConfig
from codemap.parts import SOURCE_FILE_COLUMN, read_parts
from codemap.pipeline import Mapper
from codemap.ray_engine import map_with_ray
from codemap.readers import read_code_list

REPO = Path(__file__).resolve().parents[1]


def generated_list(rows: int, folder: Path) -> Path:
    labs = pd.read_csv(REPO / "examples" / "labs.csv", dtype=str, keep_default_na=False)
    frame = pd.concat([labs] * (rows // len(labs) + 1), ignore_index=True).iloc[:rows]
    code = frame.columns[0]
    frame[code] = [f"{c}-{i}" for i, c in enumerate(frame[code])]
    path = folder / f"labs_{rows}.csv"
    frame.to_csv(path, index=False)
    return path


def ordered(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(["source_row", "score", "target_code"],
                             ascending=[True, False, True]).reset_index(drop=True)


def same_candidates(parts: pd.DataFrame, local: pd.DataFrame) -> dict:
    parts, local = ordered(parts.drop(columns=[SOURCE_FILE_COLUMN])), ordered(local)
    keys = ["source_row", "target_code"]  # target_code is empty (NaN) for rows without text
    return {"same_codes": parts[keys].astype(str).equals(local[keys].astype(str)),
            "max_score_diff": float((parts["score"] - local["score"]).abs().max())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--batch-rows", type=int, default=500)
    parser.add_argument("--small", type=int, default=50, help="block size for the overhead run")
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "codemap-bench")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ray-bench-"))
    source = generated_list(args.rows, work)
    config = MapConfig(source=source, target="LOINC", cache_dir=args.cache_dir, progress=False)
    Mapper.load(config)  # builds the index cache once, outside every timing
    started = time.perf_counter()
    mapper = Mapper.load(config)
    loaded = time.perf_counter()
    local = mapper.map_block(read_code_list(source))
    ended = time.perf_counter()
    results = {"rows": args.rows, "local": {"seconds": ended - started},
               "local_mapping_only": {"seconds": ended - loaded}}
    del mapper
    for workers in (1, 2):
        started = time.perf_counter()
        out = work / f"ray{workers}"
        counts = map_with_ray(config, [source], RayConfig(workers=workers, batch_rows=args.batch_rows),
                              out)
        results[f"ray{workers}"] = {"seconds": time.perf_counter() - started, "parts": counts["parts"],
                                    **same_candidates(read_parts(out), local)}
    started = time.perf_counter()
    counts = map_with_ray(config, [source], RayConfig(workers=1, batch_rows=args.small), work / "small")
    small = {"seconds": time.perf_counter() - started, "parts": counts["parts"]}
    parts = sorted(json.loads((work / "small" / "manifest.json").read_text())["parts"].values(),
                   key=lambda e: e["written_at"])
    gaps = [b["written_at"] - a["written_at"] - b["seconds"] for a, b in zip(parts, parts[1:])]
    results["overhead_per_block_s"] = float(np.median(gaps))
    results["mapping_per_block_s"] = float(np.median([e["seconds"] for e in parts]))
    results["ray1_small_blocks"] = small
    for name, r in results.items():
        if isinstance(r, dict):
            r["rows_per_s"] = args.rows / r["seconds"]
            r["vs_local"] = r["rows_per_s"] / (args.rows / results["local"]["seconds"])
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
