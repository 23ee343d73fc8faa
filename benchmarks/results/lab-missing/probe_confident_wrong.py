"""Which dev rows does the shipped lab calibration's cross-fit find most confident, and why are
they wrong? Replays `codemap calibrate` (the two lab dev lists, seed 0) and prints the top rows."""
import sys
from pathlib import Path
import numpy as np
from codemap.config import default_cache_dir
from codemap.config import EvalConfig, EncoderConfig
from codemap.decide.calibrate import CalibrateConfig, dev_list, pooled, cross_fit
from codemap.rank.candidates import candidate_features, capped
from codemap.cli.options import target_settings
settings = target_settings("LOINC", None, False, None, None)
golds = tuple(EvalConfig(gold=Path(p), gold_col="loinc_code", text_cols=(), **settings,
                         encoder=EncoderConfig(), cache_dir=default_cache_dir(), progress=False)
              for p in ("benchmarks/data/mimic_labs_fluid_dev.tsv", "benchmarks/data/german_lab_labels_dev.tsv"))
cfg = CalibrateConfig(golds=golds, output=Path("/tmp/x.json"))
lists = [dev_list(g, cfg) for g in golds]
dev, weights, folds = pooled(lists, 2, 0)
features = candidate_features(dev.found)
q = dev.found["query"].to_numpy()
oof = capped(cross_fit(features, dev.labels, folds[q], int(folds.max()) + 1, weights), dev.found)
top = dev.found.assign(conf=oof, right=dev.labels)[dev.found["rank"].to_numpy() == 1]
top = top.assign(missing=dev.missing[top["query"].to_numpy()]).sort_values("conf", ascending=False)
for _, r in top.head(int(sys.argv[1]) if len(sys.argv) > 1 else 40).iterrows():
    print(f"{r.conf:.3f} right={int(r.right)} hidden={int(r.missing)} {r.get('source_text', r.get('text',''))!s:35.35} -> {r.target_code} {str(r.target_name)[:60]}")
