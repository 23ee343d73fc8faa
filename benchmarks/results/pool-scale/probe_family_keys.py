"""Probe: how well a row finds its gold code's analyte among a large target's analytes (the
family keys: LOINC components before subpart/divisor), by the encoder, by the static stage and by
n-grams; and the pool recall that the row's best N analytes' codes would add to today's pool
(REAL_POOL.json from probe_real_pool.py). Pooled vectors are zeros: only pools are read.

    python probe_family_keys.py TARGET OUT.json SET,SET… REAL_POOL.json
"""
import json, os, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, "/work/main/benchmarks")
os.environ.setdefault("CODEMAP_MODEL_CACHE", str(Path.home() / ".cache/codemap/models"))
import sets
from codemap.config import EvalConfig, IndexConfig
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods, gold_queries
from codemap.rank import hybrid
from codemap.terms import binary_matrix, smooth_idf, tfidf
from codemap.rank.lexical import _ngrams, normalize_text
from pool_hooks import force_two_stages, zero_vectors

target, out, names = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
real = json.loads(Path(sys.argv[4]).read_text())
force_two_stages()
zero_vectors()
seen = {}
_pooled = hybrid._rank_pooled
def pooled(index, scored_names, layout, attributes, names_, queries, rows, offset, *a, **k):
    for q, r in enumerate(rows):
        seen[offset + q] = (queries[q], r)
    return _pooled(index, scored_names, layout, attributes, names_, queries, rows, offset, *a, **k)
hybrid._rank_pooled = pooled
cache = Path("/tmp/scale/cache")
res, keyvec = {}, None
for name in names:
    gold, _, gold_col, text_cols = {**sets.SETS, **sets.FRESH}[name]
    g = gold_queries(EvalConfig(gold=gold, target=target, gold_col=gold_col, text_cols=text_cols,
                                progress=False, index=IndexConfig(two_stage_above=0), cache_dir=cache))
    seen.clear()
    g.rank(eval_methods(g.base, drugs=False)[DEFAULT_METHOD[False]])
    fam = next(iter(hybrid._Families._made.values()))
    keys = sorted(fam.by_key)
    if keyvec is None:
        keyvec = g.ranking.encoder.encode(keys)
        counts, vocab_ = binary_matrix([normalize_text(k) for k in keys], _ngrams)
        idf = smooth_idf(counts); keylex = tfidf(counts, idf)
        static = g.ranking.index.static.embed(keys)
        static /= np.linalg.norm(static, axis=1, keepdims=True) + 1e-9
    number = {c: i for i, c in enumerate(g.vocab.concepts["code"])}
    key_no = {k: i for i, k in enumerate(keys)}
    ranks = {"encoder": [], "static": [], "lexical": [], "enc+lex": []}
    for q, golds in enumerate(g.gold):
        vec, row = seen[q]
        texts = [row["text"]] + ([row["reading"][0]] if "reading" in row else [])
        gk = {key_no[fam.of_concept[number[c]]] for c in golds if c in number and fam.of_concept[number[c]] is not None}
        enc = keyvec @ vec
        if "reading" in row:
            enc = np.maximum(enc, keyvec @ row["reading"][1])
        lx = (tfidf(binary_matrix([normalize_text(t) for t in texts], _ngrams, vocab_)[0], idf) @ keylex.T).toarray().max(0)
        st = static @ (lambda s: s / (np.linalg.norm(s, axis=1, keepdims=True) + 1e-9))(g.ranking.index.static.embed(texts)).T
        st = st.max(1)
        for kind, s in (("encoder", enc), ("static", st), ("lexical", lx), ("enc+lex", enc + lx)):
            order = np.argsort(-s)
            pos = [int(np.flatnonzero(order == k)[0]) + 1 for k in gk]
            ranks[kind].append(min(pos) if pos else 0)
    missed = set(real[f"{name} seeds-with-family"]["missed"])
    texts = [seen[q][1]["text"] for q in range(len(g.gold))]
    out_ = {"keys": len(keys), "rows": len(g.gold), "gold_without_family": sum(r == 0 for r in ranks["encoder"])}
    for kind, r in ranks.items():
        for n in (1, 2, 3, 5):
            hit = [0 < x <= n for x in r]
            out_[f"{kind}@{n}"] = round(float(np.mean(hit)), 4)
            out_[f"pool+{kind}@{n}"] = round(float(np.mean([h or t not in missed for h, t in zip(hit, texts)])), 4)
    out_["missed_ranks"] = {t: {k: ranks[k][i] for k in ranks} for i, t in enumerate(texts) if t in missed}
    res[name] = out_
    print(name, json.dumps(out_), flush=True)
    Path(out).write_text(json.dumps(res, indent=1))
