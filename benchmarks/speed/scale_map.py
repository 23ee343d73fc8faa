"""Scale of `codemap map` end to end: generated source lists of growing length against a generated
dictionary, each run a separate `codemap map` process (wall time and peak RSS from getrusage).

The real all-MiniLM-L6-v2 embeds ~100-300 terms/s on a 2-core CPU, so 2M terms would take hours:
these runs use a small random-weight BERT (BertConfig, 2 layers, hidden 128) with the real
tokenizer, which measures the pipeline's scaling (reading, search, ranking, writing), not its
quality. The real model's speed comes from `codemap bench`; extrapolate with it.

    OMP_NUM_THREADS=1 python benchmarks/speed/scale_map.py --names 1000000 --rows 10000 100000 1000000

Each step is appended to <work>/results-<names>.json as it finishes, so a long series that is
stopped keeps what it measured; recall@10 of the IVF index against exact search is measured once,
right after the warm-up run that builds the caches.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

WORK = Path(__file__).resolve().parents[1] / "results" / "scale_map"
ANALYTES = ("glucose sodium potassium chloride calcium magnesium phosphate urea creatinine "
            "albumin bilirubin lactate ferritin troponin insulin cortisol thyroxine lipase "
            "amylase ammonia hemoglobin platelets leukocytes neutrophils ketones nitrite "
            "protein cholesterol triglyceride fibrinogen").split()
QUALIFIERS = ("total free ionized direct indirect fasting random baseline maximum minimum "
              "corrected estimated calculated screening confirmatory panel ratio").split()
SPECIMENS = "serum plasma blood urine csf saliva stool sweat fluid tissue".split()
METHODS = "immunoassay enzymatic colorimetric electrode chromatography manual automated".split()


def tiny_model(folder: Path) -> Path:
    """A random BERT (2 layers, hidden 128) with the real MiniLM tokenizer, as a codemap model."""
    if (folder / "codemap.json").exists():
        return folder
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from codemap.embed import ModelInfo, Pooling, default_model_path, write_manifest

    tokenizer = AutoTokenizer.from_pretrained(default_model_path())
    torch.manual_seed(0)
    model = BertModel(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=128, num_hidden_layers=2,
                                 num_attention_heads=2, intermediate_size=256,
                                 max_position_embeddings=64))
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    write_manifest(folder, ModelInfo(id="tiny-bert", path=folder, pooling=Pooling.MEAN, max_length=32))
    return folder


def term(rng: np.random.Generator, n: int) -> np.ndarray:
    """n lab-like names from word lists and a number, e.g. "free glucose serum enzymatic 4711"."""
    pick = lambda words: np.array(words)[rng.integers(0, len(words), n)]  # noqa: E731
    return (pd.Series(pick(QUALIFIERS)) + " " + pick(ANALYTES) + " " + pick(SPECIMENS) + " "
            + pick(METHODS) + " " + pd.Series(rng.integers(0, 10 ** 6, n)).astype(str)).to_numpy()


def make_dictionary(path: Path, n: int) -> Path:
    if not path.exists():
        rng = np.random.default_rng(1)
        pd.DataFrame({"code": [f"D{i:07d}" for i in range(n)], "name": term(rng, n)}).to_csv(path, index=False)
    return path


def make_source(path: Path, dictionary: Path, n: int) -> Path:
    """Source rows: dictionary names with one word dropped, so each has a close target."""
    if not path.exists():
        names = pd.read_csv(dictionary, dtype=str)["name"].to_numpy()
        rng = np.random.default_rng(2)
        picked = names[rng.integers(0, len(names), n)]
        drop = rng.integers(0, 4, n)
        texts = [" ".join(w for j, w in enumerate(t.split()) if j != d) for t, d in zip(picked, drop)]
        pd.DataFrame({"code": [f"S{i:07d}" for i in range(n)], "name": texts}).to_csv(path, index=False)
    return path


def run_map(source: Path, dictionary: Path, model: Path, cache: Path, out: Path, extra: list[str]) -> dict:
    """One `codemap map` process: wall time, its own peak RSS (ru_maxrss from wait4 on that child)
    and the load average of the machine when it finished."""
    command = [sys.executable, "-m", "codemap", "map", str(source), "--target", str(dictionary),
               "--model", str(model), "--cache-dir", str(cache), "-o", str(out), *extra]
    log = out.with_suffix(".log")
    started = time.perf_counter()
    with open(log, "w") as handle:
        child = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT,
                                 env={**os.environ, "HF_HUB_OFFLINE": "1"})
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(log.read_text()[-3000:])
    return {"wall_s": round(wall, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
            "load_average": [round(x, 1) for x in os.getloadavg()],
            "log_tail": log.read_text().strip().splitlines()[-2:]}


def index_recall(dictionary: Path, source: Path, model: Path, cache: Path, queries: int) -> dict:
    """recall@10 of the cached IVF index against exact search, on source rows as queries."""
    import faiss

    from codemap.config import EncoderConfig, IndexConfig
    from codemap.embed import Encoder
    from codemap.embed import load_or_build_index
    from codemap.vocab import load_target

    vocab = load_target(str(dictionary))
    encoder = Encoder.load(EncoderConfig(model=str(model)), cache)
    index = load_or_build_index(vocab, encoder, cache, index_config=IndexConfig())
    texts = pd.read_csv(source, dtype=str, nrows=queries)["name"].tolist()
    vectors = encoder.encode(texts)
    exact = faiss.IndexFlatIP(index.vectors.shape[1])
    exact.add(index.vectors)
    _, truth = exact.search(vectors, 10)
    result = {}
    for nprobe in (8, 32, 128):
        index.faiss_index.nprobe = nprobe
        started = time.perf_counter()
        _, found = index.search(vectors, 10)
        ms = 1000 * (time.perf_counter() - started) / len(texts)
        recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found, truth)])
        result[f"nprobe {nprobe}"] = {"recall@10": round(float(recall), 4), "ms_per_query": round(ms, 3)}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=1_000_000)
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--recall-queries", type=int, default=1000, help="0: skip the recall")
    parser.add_argument("--work", type=Path, default=WORK)
    parser.add_argument("map_options", nargs="*", help="passed to codemap map, after --")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    model = tiny_model(args.work / "tiny-bert")
    dictionary = make_dictionary(args.work / f"dictionary-{args.names}.csv", args.names)
    cache = args.work / "cache"
    results_file = args.work / f"results-{args.names}.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {"names": args.names, "runs": []}
    save = lambda: results_file.write_text(json.dumps(results, indent=2))  # noqa: E731  after each step
    # Warm-up: a 1000-row list builds the name vectors, the IVF lists and the lexical index.
    warm = make_source(args.work / "source-1000.csv", dictionary, 1000)
    build = run_map(warm, dictionary, model, cache, args.work / "out-1000.csv", ["-q", *args.map_options])
    if "index_build" not in results:  # the first run builds the caches
        results["index_build"] = build
    else:
        results["runs"].append({"rows": 1000, **build})
    print("warm-up", build, flush=True)
    save()
    if args.recall_queries and "recall" not in results:
        results["recall"] = index_recall(dictionary, warm, model, cache, args.recall_queries)
        print("recall", results["recall"], flush=True)
        save()
    for rows in args.rows:
        source = make_source(args.work / f"source-{rows}.csv", dictionary, rows)
        run = {"rows": rows, **run_map(source, dictionary, model, cache, args.work / f"out-{rows}.csv",
                                       ["-q", *args.map_options])}
        run["rows_per_s"] = round(rows / run["wall_s"], 1)
        results["runs"].append(run)
        print(run, flush=True)
        save()
        (args.work / f"out-{rows}.csv").unlink()


if __name__ == "__main__":
    main()
