"""Probe: where each row's gold concept ranks in the two first stages of a large target, at any
pool size, and how a fused first-stage order would rank it (dev sets only)."""
import json, os, sys, time
from pathlib import Path
import numpy as np
sys.path.insert(0, "/work/main/benchmarks")
os.environ.setdefault("CODEMAP_MODEL_CACHE", str(Path.home() / ".cache/codemap/models"))
import sets
from codemap.config import EvalConfig, IndexConfig
from codemap.evaluate.gold import gold_queries

target, out, names = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
K = 3000
cache = Path("/tmp/scale/cache")
res = {}
for name in names:
    gold, _, gold_col, text_cols = {**sets.SETS, **sets.FRESH}[name]
    t = time.perf_counter()
    g = gold_queries(EvalConfig(gold=gold, target=target, gold_col=gold_col, text_cols=text_cols,
                                progress=False, index=IndexConfig(two_stage_above=0), cache_dir=cache))
    print(name, "loaded", round(time.perf_counter() - t), flush=True)
    idx = g.ranking.index
    texts = [r["text"] for r in g.rows]
    codes = g.vocab.names["code"].to_numpy()
    s_scores, s_hits = idx.static_index.search(idx.static.embed(texts), K)
    lex = []
    for s in range(0, len(texts), 16):
        sc = idx.lexical.similarity(texts[s:s + 16])
        top = np.argpartition(-sc, K - 1, axis=1)[:, :K]
        order = np.argsort(-np.take_along_axis(sc, top, axis=1), axis=1)
        lex.append((np.take_along_axis(top, order, 1), np.take_along_axis(np.take_along_axis(sc, top, 1), order, 1)))
    l_hits = np.concatenate([a for a, _ in lex]); l_scores = np.concatenate([b for _, b in lex])
    rows = []
    for q, gold_codes in enumerate(g.gold):
        def first(h):
            m = np.flatnonzero(np.isin(codes[h], list(gold_codes)))
            return int(m[0]) + 1 if len(m) else 0
        # fused: reciprocal-rank fusion of the two lists, ranked by name
        rr = {}
        for r, h in enumerate(s_hits[q]): rr[h] = rr.get(h, 0) + 1 / (60 + r)
        for r, h in enumerate(l_hits[q]): rr[h] = rr.get(h, 0) + 1 / (60 + r)
        fused = np.array(sorted(rr, key=lambda h: -rr[h]))
        rows.append({"text": texts[q], "static": first(s_hits[q]), "lexical": first(l_hits[q]),
                     "fused": first(fused)})
    res[name] = rows
    for k in (100, 200, 400, 800, 1600, 3000):
        both = np.mean([(0 < r["static"] <= k) or (0 < r["lexical"] <= k) for r in rows])
        fused = np.mean([0 < r["fused"] <= 2 * k for r in rows])
        print(name, k, "union", round(float(both), 3), "fused@2k", round(float(fused), 3), flush=True)
    Path(out).write_text(json.dumps(res, indent=0))
