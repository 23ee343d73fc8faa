import pandas as pd
from tokenizers import Tokenizer
import glob
p = glob.glob("/root/.cache/codemap/models/onnx/default-0a037d632e80fb05/tokenizer.json")[0]
t = Tokenizer.from_file(p); t.no_padding()
names = pd.read_csv("/work/shared/data/icd10cm-2021/icd10cm_codes_2021.csv", dtype=str)["description"].tolist()
enc = t.encode_batch(["query: " + n for n in names])
for L in (16, 20, 24, 32):
    u = len({tuple(e.ids[:L-1]) for e in enc})
    print(L, u, sum(min(len(e.ids), L) for e in enc) / len(enc))
L = 24
keys = [tuple(e.ids[:L-1]) for e in enc]
print("within chunks", sum(len(set(keys[s:s+8192])) for s in range(0, len(keys), 8192)))
