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

    OMP_NUM_THREADS=1 python benchmarks/speed/ray_bench.py --rows 1500 --batch-rows 250 --small 50

The equality check on a long generated list, with a random 2-layer BERT and the default model's
real tokenizer (mechanics only: its candidates mean nothing, but they must be the same):

    OMP_NUM_THREADS=1 python benchmarks/speed/ray_bench.py --rows 100000 --batch-rows 10000 --tiny \
        --workers 2 --small 0
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from codemap.config import EncoderConfig, MapConfig, RayConfig
from codemap.read import SOURCE_FILE_COLUMN
from codemap.write import read_parts
from codemap.engines import Mapper
from codemap.engines.ray import map_with_ray
from codemap.read import read_code_list

REPO = Path(__file__).resolve().parents[2]


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
    # Float noise between batchings (each engine pads its own batches) can swap candidates whose
    # scores tie to the shown precision: count the rows where that changed the set or the first.
    codes = [frame.assign(target_code=frame["target_code"].fillna("").astype(str))
             .groupby("source_row")["target_code"] for frame in (parts, local)]
    sets = [c.agg(frozenset) for c in codes]
    firsts = [c.first() for c in codes]
    return {"same_codes": parts[keys].astype(str).equals(local[keys].astype(str)),
            "rows_with_other_candidates": int((sets[0] != sets[1]).sum()),
            "rows_with_other_first": int((firsts[0] != firsts[1]).sum()),
            "max_score_diff": float((parts["score"] - local["score"]).abs().max())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--batch-rows", type=int, default=500)
    parser.add_argument("--small", type=int, default=50,
                        help="block size for the overhead run (0: no overhead run)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--tiny", action="store_true",
                        help="a random 2-layer BERT with the real tokenizer (mechanics only)")
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "codemap-bench")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ray-bench-"))
    source = generated_list(args.rows, work)
    model = str(tiny_model(work)) if args.tiny else "default"
    config = MapConfig(source=source, target="LOINC", cache_dir=args.cache_dir, progress=False,
                       encoder=EncoderConfig(model=model))
    Mapper.load(config)  # builds the index cache once, outside every timing
    started = time.perf_counter()
    mapper = Mapper.load(config)
    loaded = time.perf_counter()
    local = mapper.map_block(read_code_list(source))
    ended = time.perf_counter()
    results = {"rows": args.rows, "local": {"seconds": ended - started},
               "local_mapping_only": {"seconds": ended - loaded}}
    del mapper
    for workers in args.workers:
        started = time.perf_counter()
        out = work / f"ray{workers}"
        counts = map_with_ray(config, [source], RayConfig(workers=workers, batch_rows=args.batch_rows),
                              out)
        results[f"ray{workers}"] = {"seconds": time.perf_counter() - started, "parts": counts["parts"],
                                    **same_candidates(read_parts(out), local)}
    if args.small:
        overhead(args, config, source, work, results)
    for name, r in results.items():
        if isinstance(r, dict):
            r["rows_per_s"] = args.rows / r["seconds"]
            r["vs_local"] = r["rows_per_s"] / (args.rows / results["local"]["seconds"])
    print(json.dumps(results, indent=2))


def overhead(args, config: MapConfig, source: Path, work: Path, results: dict) -> None:
    started = time.perf_counter()
    counts = map_with_ray(config, [source], RayConfig(workers=1, batch_rows=args.small), work / "small")
    small = {"seconds": time.perf_counter() - started, "parts": counts["parts"]}
    parts = sorted(json.loads((work / "small" / "manifest.json").read_text())["parts"].values(),
                   key=lambda e: e["written_at"])
    gaps = [b["written_at"] - a["written_at"] - b["seconds"] for a, b in zip(parts, parts[1:])]
    results["overhead_per_block_s"] = float(np.median(gaps))
    results["mapping_per_block_s"] = float(np.median([e["seconds"] for e in parts]))
    results["ray1_small_blocks"] = small


def tiny_model(work: Path) -> Path:
    import torch
    import transformers

    from codemap.embed import default_model_path

    folder = work / "tiny-bert"
    config = transformers.BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64,
                                     max_position_embeddings=64)
    torch.manual_seed(0)
    transformers.BertModel(config).eval().save_pretrained(folder)
    transformers.AutoTokenizer.from_pretrained(default_model_path()).save_pretrained(folder)
    return folder


if __name__ == "__main__":
    main()
