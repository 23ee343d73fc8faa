"""Replay the lab calibration's fit with the missing rows hidden by tiers (gold alone / its
component / its analyte) and print the top of the cross-fitted curve and the 0.95 threshold."""
import sys
from pathlib import Path
import numpy as np
import importlib; cal = importlib.import_module("codemap.decide.calibrate")
from codemap.config import EvalConfig, EncoderConfig, default_cache_dir
from codemap.cli.options import target_settings
from codemap.rank.candidates import candidate_features, capped, threshold_at
from codemap.domains.lab.loinc import component_parts, concept_axes

TIERS = [float(x) for x in sys.argv[1:3]] if len(sys.argv) > 2 else None  # p(alone), p(component)
MISSING = float(sys.argv[3]) if len(sys.argv) > 3 else 0.3  # the missing share

orig = cal.hidden_together
def tiered(target, codes):
    if TIERS is None:
        return orig(target, codes)
    concepts = target.vocab.concepts
    comp = {c: str(concept_axes(r).component).lower() for c, r in zip(concepts["code"], concepts.to_dict("records"))}
    by_comp, by_an = {}, {}
    for c, k in comp.items():
        by_comp.setdefault(k, set()).add(c)
        by_an.setdefault(component_parts(k)[0], set()).add(c)
    draws = np.random.default_rng(2).random(len(codes))
    out = []
    for hidden, u in zip(codes, draws):
        if not hidden or u < TIERS[0]:
            out.append(set(hidden)); continue
        grow = set(hidden)
        for c in hidden:
            k = comp.get(c, "")
            grow |= by_comp.get(k, set()) if u < TIERS[0] + TIERS[1] else by_an.get(component_parts(k)[0], set())
        out.append(grow)
    return out
cal.hidden_together = tiered

settings = target_settings("LOINC", None, False, None, None)
golds = tuple(EvalConfig(gold=Path(p), gold_col="loinc_code", text_cols=(), **settings,
                         encoder=EncoderConfig(), cache_dir=default_cache_dir(), progress=False)
              for p in ("benchmarks/data/mimic_labs_fluid_dev.tsv", "benchmarks/data/german_lab_labels_dev.tsv"))
cfg = cal.CalibrateConfig(golds=golds, output=Path("/tmp/x.json"), missing_share=MISSING)
lists = [cal.dev_list(g, cfg) for g in golds]
dev, weights, folds = cal.pooled(lists, 2, 0)
features = candidate_features(dev.found)
q = dev.found["query"].to_numpy()
oof = capped(cal.cross_fit(features, dev.labels, folds[q], int(folds.max()) + 1, weights), dev.found)
top = dev.found["rank"].to_numpy() == 1
curve = cal.precision_curve(oof[top], dev.labels[top])
print("tiers", TIERS, "missing", MISSING, "AUROC", cal.dev_top_auroc(dev, oof), "threshold 0.95:", threshold_at(curve, 0.95),
      "0.9:", threshold_at(curve, 0.9))
print([(round(t, 3), round(p, 3), n) for t, p, n in curve[:60:5]])
