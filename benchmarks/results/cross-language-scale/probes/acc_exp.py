import numpy as np, pandas as pd
from codemap.config import EncoderConfig
from codemap.embed.encoder import Encoder
df = pd.read_csv("/work/shared/data/icd10cm-2021/icd10cm_codes_2021.csv", dtype=str)
codes = df["icd10cm"].to_numpy(); pos = {c: i for i, c in enumerate(codes)}
F = np.load("/tmp/icd_auto.npy").astype(np.float32); I = np.load("/tmp/icd_int8.npy").astype(np.float32)
ef, ei = Encoder.load(EncoderConfig()), Encoder.load(EncoderConfig(backend="int8"))
def acc(Q, N, gold, ks=(1,10,30)):
    top = np.argsort(-(Q @ N.T), axis=1)[:, :max(ks)]
    return [round(float(np.mean([g in t[:k] for g, t in zip(gold, top)])), 3) for k in ks]
for f in ("icd10gm_de","cie10_es","icd10_zh"):
    d = pd.read_csv(f"/work/main/benchmarks/data/{f}.tsv", sep="\t", dtype=str)
    gold = np.array([pos[c] for c in d["icd10_code"]]); t = d["name"].tolist()
    qf, qi = ef.encode(t), ei.encode(t)
    print(f, "ff", acc(qf, F, gold), "fi", acc(qf, I, gold), "ii", acc(qi, I, gold), flush=True)
