"""RULE-analytes.md, run 2: acc@1 / acc@10 of the two stages on the real 50k LOINC table
(`vocab_scale.py table real`), without and with the row's best analytes in its pool, in one
process and one cache (the second variant embeds only the names the first did not). Two stages
whatever the list's language, as on 2026-11-28 (the German labels meet the table's German names).

    python parity_real50k.py TARGET OUT.json SET,SET… [cut]
"""
import json, os, sys, tempfile, time
from pathlib import Path
import numpy as np
sys.path.insert(0, "/work/main/benchmarks")
os.environ.setdefault("CODEMAP_MODEL_CACHE", str(Path.home() / ".cache/codemap/models"))
import sets
from codemap.config import EvalConfig, IndexConfig
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods, gold_queries
from codemap.evaluate.metrics import gold_ranks, score_ranks
from codemap.rank import analytes
from pool_hooks import force_two_stages

target, out, names = sys.argv[1], Path(sys.argv[2]), sys.argv[3].split(",")
force_two_stages()
best = analytes.AnalyteIndex.best
cache = Path(tempfile.mkdtemp(prefix="parity-50k-"))
res = {}
# `cut` as 4th argument (RULE-analyte-cut.md): the analyte cut before (5 by the model, 1 by
# spelling) and after (8, 5) instead.
CUT = len(sys.argv) > 4 and sys.argv[4] == "cut"
for variant in (("5,1", "8,5") if CUT else ("seeds", "seeds+analytes")):
    if CUT:
        analytes.BY_ENCODER, analytes.BY_SPELLING = map(int, variant.split(","))
    else:
        analytes.AnalyteIndex.best = best if variant == "seeds+analytes" else (
            lambda self, queries, texts, second=None: [np.zeros(0, np.int64)] * len(texts))
    for name in names:
        gold, _, gold_col, text_cols = {**sets.SETS, **sets.FRESH, **sets.AMSTERDAM}[name]
        clock = time.perf_counter()
        g = gold_queries(EvalConfig(gold=gold, target=target, gold_col=gold_col, text_cols=text_cols,
                                    progress=False, index=IndexConfig(two_stage_above=0), cache_dir=cache))
        scores = score_ranks(gold_ranks(g.rank(eval_methods(g.base, drugs=False)[DEFAULT_METHOD[False]]), g.gold))
        res[f"{name} {variant}"] = {"rows": len(g.gold), "acc1": round(scores.acc[1], 4),
                                    "acc10": round(scores.acc[10], 4),
                                    "embedded_total": g.ranking.index.vectors.embedded,
                                    "seconds": round(time.perf_counter() - clock, 1)}
        print(name, variant, res[f"{name} {variant}"], flush=True)
        out.write_text(json.dumps(res, indent=1))
