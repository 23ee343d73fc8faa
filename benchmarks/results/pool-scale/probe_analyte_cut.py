"""Probe (RULE-analyte-cut.md): each row's real pool with no analyte joining it, and where its
gold analytes rank in the real analyte search (codemap.rank.analytes, better of the row's two
readings, by the model and by spelling); then, exactly, the pool recall at each (BY_ENCODER,
BY_SPELLING) of the rule's grid: a row holds its gold when the rest of its pool does or a gold
analyte ranks within the cut. Two stages whatever the list's language, as probe_real_pool.py.

    python probe_analyte_cut.py TARGET OUT.json SET,SET…
"""
import json, os, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, "/work/main/benchmarks")
os.environ.setdefault("CODEMAP_MODEL_CACHE", str(Path.home() / ".cache/codemap/models"))
import sets
from codemap.config import EvalConfig, IndexConfig
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods, gold_queries
from codemap.rank import analytes, hybrid
from pool_hooks import force_two_stages, record_pools, zero_vectors

target, out, names = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
ENCODER, SPELLING = (5, 6, 8, 10, 12, 15, 20), (1, 2, 3, 5)
pools, orders = {}, []  # orders: per row in ranking order, (keys by model, keys by spelling)
force_two_stages()
zero_vectors()
record_pools(pools)

def best(self, queries, texts, second=None):
    """Records the first 50 analytes by the model and by spelling (AnalyteIndex.scores, as best
    reads them) and joins none."""
    for e, s in zip(*self.scores(queries, texts, second)):
        top_s = [k for k in np.argsort(-s, kind="stable")[:50] if s[k] > 0]
        orders.append(([self.keys[k] for k in np.argsort(-e, kind="stable")[:50]], [self.keys[k] for k in top_s]))
    return [np.zeros(0, np.int64)] * len(texts)


analytes.AnalyteIndex.best = best
cache = Path(os.environ.get("PROBE_CACHE", "/tmp/scale/cache"))
res = {}
for name in names:
    gold, _, gold_col, text_cols = {**sets.SETS, **sets.FRESH, **sets.AMSTERDAM}[name]
    g = gold_queries(EvalConfig(gold=gold, target=target, gold_col=gold_col, text_cols=text_cols,
                                progress=False, index=IndexConfig(two_stage_above=0), cache_dir=cache))
    pools.clear(); orders.clear()
    g.rank(eval_methods(g.base, drugs=False)[DEFAULT_METHOD[False]])
    fam = next(iter(hybrid._Families._made.values()))
    code_number = {c: i for i, c in enumerate(g.vocab.concepts["code"])}
    rows = []
    for q, gold_codes in enumerate(g.gold):
        families = {fam.of_concept[code_number[c]] for c in gold_codes if c in code_number} - {None}
        by_e, by_s = orders[q]
        rank = lambda order: min((order.index(f) + 1 for f in families if f in order), default=None)
        rows.append({"text": g.rows[q]["text"], "rest": bool(gold_codes & pools.get(q, set())),
                     "gold_analytes": sorted(families), "by_model": rank(by_e), "by_spelling": rank(by_s)})
    grid = {f"{e},{s}": round(float(np.mean([r["rest"] or (r["by_model"] or 99) <= e
                                             or (r["by_spelling"] or 99) <= s for r in rows])), 4)
            for e in ENCODER for s in SPELLING}
    res[name] = {"rows": len(rows), "recall_without_analytes": round(float(np.mean([r["rest"] for r in rows])), 4),
                 "grid": grid, "per_row": rows}
    print(name, res[name]["recall_without_analytes"], grid, flush=True)
    Path(out).write_text(json.dumps(res, indent=1, ensure_ascii=False))
