"""Is the lab calibration better fitted on several LOINC dev lists than on one?
Rule and outcome: benchmarks/results/confidence/RULE-pooled-lab.md.

    python benchmarks/pooled_calibration.py -o benchmarks/results/confidence/pooled-lab-dev.json
    python benchmarks/pooled_calibration.py --fresh -o benchmarks/results/confidence/pooled-lab-fresh.json

Each list is ranked and labelled as `codemap calibrate` does it (decide.calibrate.dev_list), with
a quarter of its queries' gold concepts removed per seed, and lists are pooled as it pools them
(each list weighing the same). AUROC: the top candidate's confidence, right vs wrong or absent.
Dev: each list's queries in 2 folds, the calibrator fitted on the other fold alone, or on it plus
the whole other list (pooled); and across lists, fitted on the whole other list alone, or pooled.
Fresh: the fresh lists scored by the calibrator fitted on MIMIC alone and by the pooled one.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fusion_sweep  # noqa: E402  (the set list)
from codemap.config import EvalConfig  # noqa: E402
from codemap.decide.calibrate import (CalibrateConfig, DevList, dev_list,  # noqa: E402
                                      fit_logistic, pooled, query_folds)
from codemap.decide.confidence import candidate_features, logistic  # noqa: E402

DEV = ("labs_fluid", "german_labs")
FRESH = ("german_labs_fresh", "labs_nofluid_fresh")
SEEDS = (0, 1, 2)
MISSING = 0.25
FOLDS = 2


def lists(names, seed: int) -> list[DevList]:
    out = []
    for name in names:
        gold, target, gold_col, text_cols = {**fusion_sweep.SETS, **fusion_sweep.FRESH}[name]
        config = EvalConfig(gold=gold, target=target, gold_col=gold_col, text_cols=text_cols,
                            progress=False)
        d = dev_list(config, CalibrateConfig((config,), Path(), MISSING, FOLDS, seed))
        d.name = name  # the set's name keys the results, as in fusion_sweep
        out.append(d)
    return out


def fit_on(lists_: list[DevList], seed: int, keep=None) -> dict:
    """The calibrator fitted on the pooled lists (`keep`: the candidate rows to fit on)."""
    dev, weights, _ = pooled(lists_, FOLDS, seed)
    keep = np.ones(len(dev.labels), dtype=bool) if keep is None else keep
    return fit_logistic(candidate_features(dev.found)[keep], dev.labels[keep], weights[keep])


def top1_auroc(d: DevList, conf: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    top = d.dev.found["rank"].to_numpy() == 1
    return float(roc_auc_score(d.dev.labels[top], conf[top]))


def dev_run() -> dict:
    out = {}
    for seed in SEEDS:
        both = lists(DEV, seed)
        for d, other in ((both[0], both[1]), (both[1], both[0])):
            x = candidate_features(d.dev.found)
            fold = query_folds(d.dev.n_queries, FOLDS, seed)[d.dev.found["query"].to_numpy()]
            alone, together = np.zeros(len(x)), np.zeros(len(x))
            for f in range(FOLDS):
                test = fold == f
                alone[test] = logistic(x[test], **fit_on([d], seed, ~test))
                # pooled order is [d, other]: d's rows first, then every row of the other list
                keep = np.concatenate([~test, np.ones(len(other.dev.labels), dtype=bool)])
                together[test] = logistic(x[test], **fit_on([d, other], seed, keep))
            row = out.setdefault(d.name, {})
            row.setdefault("own other fold alone (today)", []).append(top1_auroc(d, alone))
            row.setdefault("pooled (other fold + other list)", []).append(top1_auroc(d, together))
            row.setdefault("other list alone", []).append(
                top1_auroc(d, logistic(x, **fit_on([other], seed))))
    return out


def fresh_run() -> dict:
    out = {}
    for seed in SEEDS:
        dev = lists(DEV, seed)
        alone, together = fit_on(dev[:1], seed), fit_on(dev, seed)
        for d in lists(FRESH, seed):
            x = candidate_features(d.dev.found)
            row = out.setdefault(d.name, {})
            row.setdefault("MIMIC alone (today)", []).append(top1_auroc(d, logistic(x, **alone)))
            row.setdefault("pooled", []).append(top1_auroc(d, logistic(x, **together)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--fresh", action="store_true")
    args = parser.parse_args()
    result = fresh_run() if args.fresh else dev_run()
    summary = {name: {k: {"per_seed": [round(v, 4) for v in vals],
                          "mean": round(float(np.mean(vals)), 4)} for k, vals in row.items()}
               for name, row in result.items()}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(summary, indent=1) + "\n")
    for name, row in summary.items():
        print(name, {k: v["mean"] for k, v in row.items()})


if __name__ == "__main__":
    main()
