import numpy as np, pandas as pd, torch, time
from transformers import AutoModel, AutoTokenizer
P = "/root/.cache/codemap/models/coder-multilingual-ab4ebd530a95"
tok = AutoTokenizer.from_pretrained(P); model = AutoModel.from_pretrained(P).eval()
torch.set_num_threads(2)
df = pd.read_csv("/work/shared/data/icd10cm-2021/icd10cm_codes_2021.csv", dtype=str)
codes = df["icd10cm"].to_numpy(); names = df["description"].tolist()
pos = {c: i for i, c in enumerate(codes)}
sets = {f: pd.read_csv(f"/work/main/benchmarks/data/{f}.tsv", sep="\t", dtype=str) for f in ("icd10gm_de","cie10_es","icd10_zh")}
gold_idx = sorted({pos[c] for d in sets.values() for c in d["icd10_code"]})
rng = np.random.default_rng(1)
others = rng.choice(np.setdiff1d(np.arange(len(names)), gold_idx), 8000, replace=False)
sub = np.concatenate([gold_idx, others]); subpos = {int(i): j for j, i in enumerate(sub)}
LAYERS = (3, 4, 6, 8, 12)
def embed(texts, maxlen=32):
    out = {L: [] for L in LAYERS}
    order = np.argsort([-len(t) for t in texts])
    for s in range(0, len(texts), 64):
        idx = order[s:s+64]
        b = tok(["query: " + texts[i] for i in idx], padding=True, truncation=True, max_length=maxlen, return_tensors="pt")
        with torch.inference_mode():
            hs = model(**b, output_hidden_states=True).hidden_states
        m = b["attention_mask"].unsqueeze(-1).float()
        for L in LAYERS:
            v = (hs[L] * m).sum(1) / m.sum(1)
            out[L].append((idx, torch.nn.functional.normalize(v, dim=-1).numpy()))
    res = {}
    for L in LAYERS:
        M = np.zeros((len(texts), 384), np.float32)
        for idx, v in out[L]: M[idx] = v
        res[L] = M
    return res
t = time.perf_counter(); N = embed([names[i] for i in sub]); print("names", time.perf_counter() - t, flush=True)
for f, d in sets.items():
    Q = embed(d["name"].tolist())
    gold = np.array([subpos[pos[c]] for c in d["icd10_code"]])
    line = {}
    for L in LAYERS:
        s = Q[L] @ N[L].T
        top = np.argsort(-s, axis=1)[:, :50]
        line[L] = [round(float(np.mean([g in t[:k] for g, t in zip(gold, top)])), 3) for k in (1, 10, 30, 50)]
    # cross: query full layer vs names layer L (asymmetric)
    print(f, line, flush=True)
