"""The two-stage index of a large target against the full one (#44), on the dev sets: the
default ranking's acc@1 / acc@10 with every name embedded and with the two-stage path forced
(IndexConfig.two_stage_above = 0), the pool's recall (share of rows whose gold concept is among
the concepts the static + lexical stages pool), and the names the encoder embedded.

    python benchmarks/speed/two_stage.py OUT.json [SET,SET…]
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, usage

import sets  # noqa: E402
from usage import positional  # noqa: E402
from codemap.config import EvalConfig, IndexConfig  # noqa: E402
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods, gold_queries  # noqa: E402
from codemap.evaluate.metrics import gold_ranks, score_ranks  # noqa: E402

ARGS = positional(__doc__, 1)
# The model is converted and exported once, into the usual model cache: only the index is cold.
os.environ.setdefault("CODEMAP_MODEL_CACHE", str(Path.home() / ".cache" / "codemap" / "models"))


def measure(name: str, two_stage: bool) -> dict:
    gold, target, gold_col, text_cols = {**sets.SETS, **sets.FRESH}[name]
    clock = time.perf_counter()
    cache = Path(tempfile.mkdtemp(prefix="two-stage-"))  # both paths index from nothing
    index = IndexConfig(two_stage_above=0 if two_stage else 10**9)
    g = gold_queries(EvalConfig(gold=gold, target=target, gold_col=gold_col, text_cols=text_cols,
                                progress=False, index=index, cache_dir=cache))
    loaded = time.perf_counter() - clock
    default = eval_methods(g.base, drugs=g.kind == "drug")[DEFAULT_METHOD[g.kind == "drug"]]
    scores = score_ranks(gold_ranks(g.rank(default), g.gold))
    out = {"acc1": round(scores.acc[1], 4), "acc10": round(scores.acc[10], 4),
           "names": len(g.vocab.names), "load_s": round(loaded, 1),
           "total_s": round(time.perf_counter() - clock, 1)}
    if two_stage:
        ranking = g.ranking_for(default)
        rows = g.prepared[next(iter(g.prepared))][2]
        _, hits = g.ranking.index.search(None, 10**6, texts=[r["text"] for r in rows])
        codes = g.vocab.names["code"].to_numpy()
        pooled = [set(codes[h[h >= 0]]) for h in hits]
        out["pool_recall"] = round(float(np.mean([bool(gold & p) for gold, p in zip(g.gold, pooled)])), 4)
        out["embedded"] = ranking.index.vectors.embedded
    return out


def main(out: Path, names: list[str]) -> None:
    results = {}
    for name in names:
        results[name] = {"full": measure(name, False), "two_stage": measure(name, True)}
        print(name, json.dumps(results[name]), flush=True)
        out.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main(Path(ARGS[0]), ARGS[1].split(",") if len(ARGS) > 1 else list(sets.SETS))
