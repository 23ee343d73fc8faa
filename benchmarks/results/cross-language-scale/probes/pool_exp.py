import time, numpy as np, pandas as pd, sys, tempfile
from pathlib import Path
from codemap.config import EncoderConfig
from codemap.embed.encoder import Encoder
from codemap.embed.static import StaticEmbedder
df = pd.read_csv("/work/shared/data/icd10cm-2021/icd10cm_codes_2021.csv", dtype=str)
names = df["description"].tolist(); codes = df["icd10cm"].to_numpy()
pos = {c: i for i, c in enumerate(codes)}
enc = Encoder.load(EncoderConfig())
full = np.load("/tmp/icd_auto.npy").astype(np.float32) if Path("/tmp/icd_auto.npy").exists() else None
i8 = np.load("/tmp/icd_int8.npy").astype(np.float32)
t = time.perf_counter()
static = StaticEmbedder.distill(enc, names, Path("/tmp/static-cache"), False)
S = static.embed(names); print("static", time.perf_counter() - t, S.shape)
rng = np.random.default_rng(0)
ref = full if full is not None else i8
def fit(sample_n, lam=1e-2):
    idx = rng.choice(len(names), sample_n, replace=False)
    X, Y = S[idx], ref[idx]
    A = np.linalg.solve(X.T @ X + lam * np.eye(X.shape[1]), X.T @ Y)  # static -> full
    return A
maps = {n: fit(n) for n in (1000, 3000, 10000)}
def recall(scores, gold, ks=(10, 30, 50, 100)):
    top = np.argsort(-scores, axis=1)[:, :max(ks)]
    return {k: round(float(np.mean([g in t[:k] for g, t in zip(gold, top)])), 3) for k in ks}
for f in ("icd10gm_de", "cie10_es", "icd10_zh"):
    d = pd.read_csv(f"/work/main/benchmarks/data/{f}.tsv", sep="\t", dtype=str)
    gold = np.array([pos[c] for c in d["icd10_code"]])
    q = enc.encode(d["name"].tolist())
    out = {}
    if full is not None: out["fp32"] = recall(q @ full.T, gold)
    out["int8names"] = recall(q @ i8.T, gold)
    out["static_static"] = recall(static.embed(d["name"].tolist()) @ S.T, gold)
    for n, A in maps.items():
        out[f"asym{n}"] = recall((q @ A.T) @ S.T, gold)
    print(f, out, flush=True)
