import numpy as np, pandas as pd, time
from codemap.config import EncoderConfig
from codemap.embed.encoder import Encoder
df = pd.read_csv("/work/shared/data/icd10cm-2021/icd10cm_codes_2021.csv", dtype=str)
names = df["description"].tolist()
rng = np.random.default_rng(0); sample = [names[i] for i in rng.choice(len(names), 3000, replace=False)]
ei = Encoder.load(EncoderConfig(backend="int8"))
for L in (32, 24, 20, 16):
    ei._backend.tokenizer.enable_truncation(max_length=L)
    for bs in (32, 64, 256):
        t = time.perf_counter(); ei.encode(sample, batch_size=bs); dt = time.perf_counter() - t
        print(L, bs, f"{len(sample)/dt:.0f}/s -> {72616/(len(sample)/dt):.0f}s", flush=True)
