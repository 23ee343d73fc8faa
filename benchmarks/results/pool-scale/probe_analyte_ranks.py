"""Probe: where each row's gold analyte (its code's family) ranks in the analyte search, by the
model and by n-grams, against a large LOINC-like table; the 5 analytes the model ranks first.
Made `analyte-ranks-1m.json` (2026-11-29, RULE-mixed-names.md). Cache under /work/scale/cache.

    python probe_analyte_ranks.py TARGET SET,SET… OUT.json
"""
import json, os, sys, time
from pathlib import Path
import numpy as np
sys.path.insert(0, "/work/main/benchmarks")
os.environ.setdefault("CODEMAP_MODEL_CACHE", str(Path.home() / ".cache/codemap/models"))
import sets
from codemap.config import EvalConfig, IndexConfig
from codemap.evaluate.gold import gold_queries
from codemap.domains.lab.text import ComponentBackoff
from codemap.rank.hybrid import _ConceptRecords
from codemap.rank.analytes import AnalyteIndex
from codemap.rank.lexical import normalize_text

target = sys.argv[1]; names = sys.argv[2].split(",")
cache = Path("/work/scale/cache")
fam = ComponentBackoff()
res = {}
g0 = None
for name in names:
    gold, _, gold_col, text_cols = {**sets.SETS, **sets.FRESH}[name]
    g = gold_queries(EvalConfig(gold=gold, target=target, gold_col=gold_col, text_cols=text_cols,
                                progress=False, index=IndexConfig(two_stage_above=0), cache_dir=cache))
    if g0 is None:
        vocab = g.vocab
        recs = _ConceptRecords(vocab.concepts)
        t = time.time()
        of = [fam.family(recs[c]) for c in range(len(vocab.concepts))]
        code_fam = dict(zip(vocab.concepts["code"], of))
        keys = sorted({k for k in of if k is not None})
        print("keys", len(keys), round(time.time() - t), "s", flush=True)
        enc = g.encoder
        idx = AnalyteIndex.load(keys, enc, cache / "analytes-probe", progress=False)
        g0 = 1
    texts = [r["text"] for r in g.rows]
    q = enc.encode(texts)
    e = q @ idx.vectors.T
    s = idx.lexical.similarity(texts)
    out = []
    for i, (row, gc) in enumerate(zip(g.rows, g.gold)):
        gf = {code_fam.get(c) for c in gc} - {None}
        ranks_e = [int((e[i] > e[i][keys.index(f)]).sum()) + 1 for f in gf if f in keys]
        ranks_s = [int((s[i] > s[i][keys.index(f)]).sum()) + 1 for f in gf if f in keys]
        top = [keys[k] for k in np.argsort(-e[i])[:5]]
        out.append({"text": row["text"], "gold": sorted(gc), "gold_family": sorted(gf),
                    "enc_rank": min(ranks_e, default=None), "lex_rank": min(ranks_s, default=None),
                    "top_enc": top, "top_lex": [keys[k] for k in np.argsort(-s[i])[:2]]})
    hit = [r for r in out if (r["enc_rank"] or 99) <= 5 or (r["lex_rank"] or 99) <= 1]
    print(name, len(out), "analyte found", len(hit), flush=True)
    res[name] = out
    Path(sys.argv[3]).write_text(json.dumps(res, indent=1, ensure_ascii=False))
