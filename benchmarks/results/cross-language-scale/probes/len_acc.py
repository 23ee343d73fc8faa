import numpy as np, pandas as pd
from codemap.config import EncoderConfig
from codemap.embed.encoder import Encoder
df = pd.read_csv("/work/shared/data/icd10cm-2021/icd10cm_codes_2021.csv", dtype=str)
codes = df["icd10cm"].to_numpy(); names = df["description"].tolist(); pos = {c: i for i, c in enumerate(codes)}
F = np.load("/tmp/icd_auto.npy").astype(np.float32); I = np.load("/tmp/icd_int8.npy").astype(np.float32)
sets = {f: pd.read_csv(f"/work/main/benchmarks/data/{f}.tsv", sep="\t", dtype=str) for f in ("icd10gm_de","cie10_es","icd10_zh")}
gold_idx = sorted({pos[c] for d in sets.values() for c in d["icd10_code"]})
rng = np.random.default_rng(1)
sub = np.concatenate([gold_idx, rng.choice(np.setdiff1d(np.arange(len(names)), gold_idx), 15000, replace=False)])
ef, ei = Encoder.load(EncoderConfig()), Encoder.load(EncoderConfig(backend="int8"))
N = {"f32": F[sub], "i8_32": I[sub]}
for L in (24, 20, 16):
    ei._backend.tokenizer.enable_truncation(max_length=L)
    N[f"i8_{L}"] = ei.encode([names[i] for i in sub])
subpos = {int(i): j for j, i in enumerate(sub)}
for f, d in sets.items():
    gold = np.array([subpos[pos[c]] for c in d["icd10_code"]]); q = ef.encode(d["name"].tolist())
    out = {}
    for k, M in N.items():
        top = np.argsort(-(q @ M.T), axis=1)[:, :30]
        out[k] = [round(float(np.mean([g in t[:n] for g, t in zip(gold, top)])), 3) for n in (1, 10, 30)]
    print(f, out, flush=True)
