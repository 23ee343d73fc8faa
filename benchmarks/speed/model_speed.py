"""Encoding throughput of several models side by side in one process: the same real terms
(codemap.embed.bench.bench_terms), each model through Encoder.encode with the CPU default
(`--backend auto`: its ONNX fp32 export), rounds interleaved so load drifts hit every model alike.

    python benchmarks/speed/model_speed.py default multilingual --terms 2000 --rounds 3 -o OUT.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from codemap.config import EncoderConfig
from codemap.embed.bench import bench_terms
from codemap.embed.encoder import Encoder


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--terms", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("-o", "--out", type=Path)
    args = parser.parse_args(argv)
    terms = bench_terms(args.terms)[0]
    encoders = {m: Encoder.load(EncoderConfig(model=m)) for m in args.models}
    for encoder in encoders.values():
        encoder.encode(terms[:64])  # warm-up: sessions and thread pools started
    seconds = {m: [] for m in args.models}
    for _ in range(args.rounds):
        for model, encoder in encoders.items():
            clock = time.perf_counter()
            encoder.encode(terms)
            seconds[model].append(time.perf_counter() - clock)
    first = args.models[0]
    rate = {m: len(terms) / float(np.median(s)) for m, s in seconds.items()}
    report = {"terms": len(terms), "rounds": args.rounds, "cpus": os.cpu_count(),
              "load_average": os.getloadavg(),
              "models": {m: {"variant": f"{e.variant} on {e.provider}", "id": e.info.id,
                             "seconds": [round(x, 2) for x in seconds[m]],
                             "terms_per_s": round(rate[m], 1),
                             f"vs_{first}": round(rate[m] / rate[first], 3)}
                         for m, e in encoders.items()}}
    print(json.dumps(report, indent=1))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
