"""Probe: the real pool of each row on the two-stage path (static + lexical names, second
readings, evidence candidates, analyte families), as rank_hybrid builds it; the model embeds
nothing (pooled vectors are zeros), so only the pool is read. First run (RULE.md): today's family
seeds against the candidate's (the nearest concepts that have a family); second run
(RULE-analytes.md, `analytes` as 4th argument): without and with the row's best analytes; third
(RULE-analyte-text.md, `analyte-text`): the analyte search without and with the analyte text.
Fourth (RULE-mixed-names.md, `current`): the code as it stands, nothing switched; the index cache
in $PROBE_CACHE (default /tmp/scale/cache). Later `current` runs: RULE-mixed-names-2.md,
RULE-component-column.md, RULE-analyte-cut.md.

    python probe_real_pool.py TARGET OUT.json SET,SET…
"""
import json, os, sys, time
from pathlib import Path
import numpy as np
sys.path.insert(0, "/work/main/benchmarks")
os.environ.setdefault("CODEMAP_MODEL_CACHE", str(Path.home() / ".cache/codemap/models"))
import sets
from codemap.config import EvalConfig, IndexConfig
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods, gold_queries
from codemap.rank import hybrid
from pool_hooks import force_two_stages, record_pools, zero_vectors

target, out, names = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
asked, pools = set(), {}
force_two_stages()
zero_vectors(asked)
record_pools(pools)
from codemap.rank import analytes as analytes_module
orig_near = hybrid._nearest_concepts
orig_best = analytes_module.AnalyteIndex.best
MODE = sys.argv[4] if len(sys.argv) > 4 else ""
ANALYTES = MODE == "analytes"
from codemap.domains.lab import text as lab_text
orig_bare = lab_text.ComponentBackoff.__dict__.get("analyte_text")  # the staticmethod itself (reverted since)
VARIANTS = {"analytes": ("seeds", "seeds+analytes"), "analyte-text": ("analytes", "analytes+text"),
            "current": ("current",)}.get(MODE, ("today", "seeds-with-family"))


def near(searches, concept_of):
    fam = next(iter(hybrid._Families._made.values())).of_concept
    found = np.concatenate([h[h >= 0] for h, _ in searches])
    concepts = concept_of[found]
    if len(concepts):
        concepts = concepts[np.array([fam[c] is not None for c in concepts], bool)]
    _, first = np.unique(concepts, return_index=True)
    return concepts[np.sort(first)[:hybrid.FAMILY_SEEDS]]


cache = Path(os.environ.get("PROBE_CACHE", "/tmp/scale/cache"))
res = {}
for name in names:
    gold, _, gold_col, text_cols = {**sets.SETS, **sets.FRESH, **sets.AMSTERDAM}[name]
    g = gold_queries(EvalConfig(gold=gold, target=target, gold_col=gold_col, text_cols=text_cols,
                                progress=False, index=IndexConfig(two_stage_above=0), cache_dir=cache))
    for variant in VARIANTS:
        if MODE == "analyte-text":
            lab_text.ComponentBackoff.analyte_text = (
                orig_bare if variant.endswith("+text") else staticmethod(lambda row: None))
        elif ANALYTES:
            analytes_module.AnalyteIndex.best = orig_best if variant == "seeds+analytes" else (
                lambda self, queries, texts, second=None: [np.zeros(0, np.int64)] * len(texts))
        elif MODE != "current":
            hybrid._nearest_concepts = near if variant != "today" else orig_near
        pools.clear(); asked.clear()
        t = time.perf_counter()
        g.rank(eval_methods(g.base, drugs=False)[DEFAULT_METHOD[False]])
        hit = [bool(gold & pools.get(q, set())) for q, gold in enumerate(g.gold)]
        key = f"{name} {variant}"
        res[key] = {"rows": len(hit), "pool_recall": round(float(np.mean(hit)), 4),
                    "mean_concepts": round(float(np.mean([len(pools.get(q, ())) for q in range(len(hit))])), 1),
                    "names_to_embed": len(asked), "rank_s": round(time.perf_counter() - t, 1),
                    "missed": [g.rows[q]["text"] for q, h in enumerate(hit) if not h]}
        print(key, {k: v for k, v in res[key].items() if k != "missed"}, flush=True)
        Path(out).write_text(json.dumps(res, indent=1))
