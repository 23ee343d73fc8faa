"""Is the lab calibration better fitted on several LOINC dev lists than on one?
Rules and outcomes: benchmarks/results/confidence/RULE-pooled-lab.md, RULE-short-names.md.

    python benchmarks/quality/pooled_calibration.py -o benchmarks/results/confidence/pooled-lab-dev.json
    python benchmarks/quality/pooled_calibration.py --fresh -o benchmarks/results/confidence/pooled-lab-fresh.json
    python benchmarks/quality/pooled_calibration.py --short-names -o benchmarks/results/confidence/short-names-2026-11-27.json

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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, stats

from sets import eval_config  # noqa: E402
from codemap.decide.calibrate import (CalibrateConfig, DevList, dev_list,  # noqa: E402
                                      dev_top_auroc, fit_logistic, pooled, query_folds)
from codemap.decide.confidence import candidate_features, logistic  # noqa: E402

DEV = ("labs_fluid", "german_labs")
FRESH = ("german_labs_fresh", "labs_nofluid_fresh")
SEEDS = (0, 1, 2)
MISSING = 0.25
FOLDS = 2


def lists(names, seed: int) -> list[DevList]:
    out = []
    for name in names:
        config = eval_config(name)
        d = dev_list(config, CalibrateConfig((config,), Path(), MISSING, FOLDS, seed))
        d.name = name  # the set's name keys the results, as in fusion_sweep
        out.append(d)
    return out


def fit_on(lists_: list[DevList], seed: int, keep=None) -> dict:
    """The calibrator fitted on the pooled lists (`keep`: the candidate rows to fit on)."""
    dev, weights, _ = pooled(lists_, FOLDS, seed)
    keep = np.ones(len(dev.labels), dtype=bool) if keep is None else keep
    return fit_logistic(candidate_features(dev.found)[keep], dev.labels[keep], weights[keep])


def in_pool(d: DevList, others: list[DevList], seed: int) -> np.ndarray:
    """`d`'s confidences, each fold's from the pool of d's other folds and the whole `others`."""
    x = candidate_features(d.dev.found)
    fold = query_folds(d.dev.n_queries, FOLDS, seed)[d.dev.found["query"].to_numpy()]
    conf = np.zeros(len(x))
    for f in range(FOLDS):
        test = fold == f
        # pooled order is [d, *others]: d's rows first, then every row of the others
        keep = np.concatenate([~test, *(np.ones(len(o.dev.labels), dtype=bool) for o in others)])
        conf[test] = logistic(x[test], **fit_on([d, *others], seed, keep))
    return conf


def dev_run() -> dict:
    out = {}
    for seed in SEEDS:
        both = lists(DEV, seed)
        for d, other in ((both[0], both[1]), (both[1], both[0])):
            record(out, d, {"own other fold alone (today)": in_pool(d, [], seed),
                            "pooled (other fold + other list)": in_pool(d, [other], seed),
                            "other list alone": logistic(candidate_features(d.dev.found),
                                                         **fit_on([other], seed))})
    return out


def record(out: dict, d: DevList, confidences: dict[str, np.ndarray]) -> None:
    """Append d's top-1 AUROC under each named way of fitting."""
    row = out.setdefault(d.name, {})
    for way, conf in confidences.items():
        row.setdefault(way, []).append(dev_top_auroc(d.dev, conf))


def score_fresh(out: dict, seed: int, fits: dict[str, dict]) -> None:
    """The fresh lists scored by each named fitted calibrator."""
    for d in lists(FRESH, seed):
        x = candidate_features(d.dev.found)
        record(out, d, {way: logistic(x, **fitted) for way, fitted in fits.items()})


def short_names_run() -> dict:
    """RULE-short-names.md: today's two-list pool vs the pool with the short-name list."""
    out = {}
    for seed in SEEDS:
        labels, (short,) = lists(DEV, seed), lists(("loinc_short",), seed)
        for d in labels:
            others = [o for o in labels if o is not d]
            record(out, d, {"two lists (today)": in_pool(d, others, seed),
                            "three lists": in_pool(d, [*others, short], seed)})
        two = fit_on(labels, seed)
        record(out, short, {"two lists (today)": logistic(candidate_features(short.dev.found), **two),
                            "three lists": in_pool(short, labels, seed)})
        score_fresh(out, seed, {"two lists (today)": two, "three lists": fit_on([*labels, short], seed)})
    return out


def fresh_run() -> dict:
    out = {}
    for seed in SEEDS:
        dev = lists(DEV, seed)
        score_fresh(out, seed, {"MIMIC alone (today)": fit_on(dev[:1], seed), "pooled": fit_on(dev, seed)})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--short-names", action="store_true", help="RULE-short-names.md")
    args = parser.parse_args()
    result = short_names_run() if args.short_names else fresh_run() if args.fresh else dev_run()
    summary = {name: {k: {"per_seed": [round(v, 4) for v in vals],
                          "mean": round(float(np.mean(vals)), 4)} for k, vals in row.items()}
               for name, row in result.items()}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(summary, indent=1) + "\n")
    for name, row in summary.items():
        print(name, {k: v["mean"] for k, v in row.items()})


if __name__ == "__main__":
    main()
