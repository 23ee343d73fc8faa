#!/usr/bin/env bash
# Issue #53's done-when, through the real CLI: 300 German ICD-10-GM titles (a dev or fresh set of
# benchmarks/data) mapped onto the whole ICD-10-CM 2021 (72,616 codes, from ../shared/data) with a
# fresh index cache, as `map` runs now (--backend auto: a large target's names by the int8 export
# at 24 tokens) and with every name embedded by the fp32 model (--backend onnx, the reference);
# the model exports are made first and kept, so only the index is cold. Wall time, peak memory,
# the run summary's index line and the first candidates' acc@1. Needs the venv active.
#   bash benchmarks/speed/cross_language_first_map.sh [SET] [BACKENDS]   (default icd10gm_de "auto onnx")
set -euo pipefail
cd "$(dirname "$0")/../.."  # the repository root
export HF_HUB_OFFLINE=1
set_name=${1:-icd10gm_de}
backends=${2:-auto onnx}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# the model exports, made once (below, if missing) and shared by every run
export CODEMAP_MODEL_CACHE=${CODEMAP_MODEL_CACHE:-$HOME/.cache/codemap/models}
python - "$work" "$set_name" <<'PY'
import sys, pandas as pd
work, name = sys.argv[1], sys.argv[2]
cm = pd.read_csv("../shared/data/icd10cm-2021/icd10cm_codes_2021.csv", dtype=str, keep_default_na=False)
cm.set_axis(["code", "name"], axis=1).to_csv(f"{work}/icd10cm.csv", index=False)
rows = pd.read_csv(f"benchmarks/data/{name}.tsv", sep="\t", dtype=str, keep_default_na=False)
rows.assign(local_code=[f"R{i:03d}" for i in range(len(rows))])[["local_code", "name"]].to_csv(
    f"{work}/list.csv", index=False)
rows.assign(local_code=[f"R{i:03d}" for i in range(len(rows))]).to_csv(f"{work}/gold.tsv", sep="\t", index=False)
PY
# the exports, once, outside the timed runs (a tiny target: no large index is built)
for backend in auto int8; do
  codemap map "$work/list.csv" --target tests/data/loinc_en_small.csv -o "$work/warm.csv" \
    --backend "$backend" --cache-dir "$work/warm" -q > /dev/null 2>&1
done
uptime
for backend in $backends; do
  /usr/bin/time -v codemap map "$work/list.csv" --target "$work/icd10cm.csv" -o "$work/$backend.csv" \
    --backend "$backend" --cache-dir "$work/cache-$backend" > "$work/log" 2> "$work/time" || { cat "$work/log" "$work/time"; exit 1; }
  echo "== --backend $backend"
  grep -E "large target|^time |model " "$work/log" || true
  grep -E "Elapsed|Maximum resident" "$work/time"
  python - "$work/$backend.csv" "$work/gold.tsv" <<'PY'
import sys, pandas as pd
out = pd.read_csv(sys.argv[1], dtype=str, keep_default_na=False)
gold = pd.read_csv(sys.argv[2], sep="\t", dtype=str, keep_default_na=False)
first = out[out["rank"] == "1"].set_index("source_code")["target_code"]
hit = gold.apply(lambda r: first.get(r["local_code"], "") == r["icd10_code"], axis=1)
print(f"acc@1 {hit.mean():.3f} of {len(gold)} rows")
PY
done
uptime
