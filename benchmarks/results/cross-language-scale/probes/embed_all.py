import time, numpy as np, pandas as pd, sys
from codemap.config import EncoderConfig
from codemap.embed.encoder import Encoder
df = pd.read_csv("/work/shared/data/icd10cm-2021/icd10cm_codes_2021.csv", dtype=str)
names = df["description"].tolist()
for backend in sys.argv[1:]:
    enc = Encoder.load(EncoderConfig(backend=backend))
    t=time.perf_counter(); v=enc.encode(names); dt=time.perf_counter()-t
    np.save(f"/tmp/icd_{backend}.npy", v.astype(np.float16)); print(backend, dt, flush=True)
