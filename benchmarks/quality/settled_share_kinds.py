"""A lab confidence feature judged by leaving one kind of lab list out, and scored on lab lists
nobody had read (issue #52). Written for the settled-share feature
(benchmarks/results/confidence/RULE-settled-share-2.md); `--feature` names another
(RULE-borrowed.md: top_x_borrowed).

    git apply benchmarks/results/confidence/settled-share.diff  (the feature; pseudo_calibration.py by hand)
    python benchmarks/quality/settled_share_kinds.py dev -o OUT.json
    python benchmarks/quality/settled_share_kinds.py fresh --sets A,B -o OUT.json
    python benchmarks/quality/settled_share_kinds.py dev --feature top_x_borrowed -o OUT.json

Before = the lab calibration without the feature (its column left out), after = with it;
the same rankings on both sides. Each list is ranked and labelled as `codemap calibrate` does
(decide.calibrate.dev_list): a quarter of its queries' gold hidden before ranking, seeds 0/1/2.

dev: three kinds of LOINC list (MIMIC labels with their fluid, German lab labels, LOINC short
names with units); each scored by the calibrator fitted on the other two, pooled as `codemap
calibrate` pools them.
fresh: the calibrator fitted on the two lists the shipped one is fitted on (MIMIC labels with
fluid, German lab labels), its pre-approval threshold read from their leave-one-list-out curve
as `codemap calibrate` reads it; each fresh list scored with a quarter of its gold hidden (AUROC)
and with every gold in the target (AUROC, share pre-approved at 95 % and its precision).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets

from sets import eval_config  # noqa: E402
from codemap.decide.calibrate import (CalibrateConfig, DevList, cross_fitted, dev_list,  # noqa: E402
                                      dev_top_auroc, fit_logistic, precision_curve)
from codemap.decide.confidence import FEATURES, candidate_features, logistic  # noqa: E402
from codemap.rank.candidates import capped, threshold_at  # noqa: E402
from unconfirmed_evidence import sides_for  # noqa: E402  (benchmarks/quality: this script's folder)

FEATURE = "top_x_log_settled"
KINDS = ("labs_fluid", "german_labs", "loinc_short")
SHIPPED = ("labs_fluid", "german_labs")  # the lists the shipped lab calibration is fitted on
SEEDS = (0, 1, 2)
MISSING = 0.25
PRECISION = 0.95


def ranked(name: str, seed: int, missing: float = MISSING) -> DevList:
    config = eval_config(name)
    d = dev_list(config, CalibrateConfig((config,), Path(), missing, 2, seed))
    d.name = name
    return d


def fitted(lists: list[DevList], cols: list[int], seed: int) -> tuple[dict, float | None]:
    """The pooled fit and its pre-approval threshold (leave-one-list-out curve, as calibrate)."""
    dev, weights, _, x, oof = cross_fitted(lists, 2, seed, cols)
    top = dev.found["rank"].to_numpy() == 1
    return (fit_logistic(x, dev.labels, weights),
            threshold_at(precision_curve(oof[top], dev.labels[top]), PRECISION))


def confidences(d: DevList, fit: dict, cols: list[int]) -> np.ndarray:
    """Each candidate's confidence under `fit`, capped as `map` caps it."""
    return capped(logistic(candidate_features(d.dev.found)[:, cols], **fit), d.dev.found)


def scored(d: DevList, fit: dict, cols: list[int], threshold: float | None) -> dict:
    conf = confidences(d, fit, cols)
    top = d.dev.found["rank"].to_numpy() == 1
    right = d.dev.labels[top]
    approved = conf[top] >= threshold if threshold is not None else np.zeros(top.sum(), bool)
    return {"auroc": dev_top_auroc(d.dev, conf), "top1": round(float(right.mean()), 4),
            "preapproved_share": round(float(approved.mean()), 4),
            "preapproved_precision": round(float(right[approved].mean()), 4) if approved.any() else None}


def dev_run(sides: dict[str, list[int]]) -> dict:
    """`sides`: side → feature columns (unconfirmed_evidence.sides_for)."""
    out: dict = {}
    for seed in SEEDS:
        lists = [ranked(name, seed) for name in KINDS]
        for i, held in enumerate(lists):
            others = lists[:i] + lists[i + 1:]
            for side, cols in sides.items():
                fit, threshold = fitted(others, cols, seed)
                out.setdefault(held.name, {}).setdefault(side, []).append(
                    scored(held, fit, cols, threshold))
        print(f"seed {seed} done", file=sys.stderr, flush=True)
    return _means(out)


def fresh_run(names: list[str], sides: dict[str, list[int]]) -> dict:
    out: dict = {}
    for seed in SEEDS:
        fits = {side: fitted([ranked(n, seed) for n in SHIPPED], cols, seed)
                for side, cols in sides.items()}
        for name in names:
            for label, missing in (("quarter hidden", MISSING), ("every gold in the target", 0.0)):
                if label.startswith("every") and seed != SEEDS[0]:
                    continue  # nothing hidden: every seed ranks the same
                d = ranked(name, seed, missing)
                for side, cols in sides.items():
                    fit, threshold = fits[side]
                    got = scored(d, fit, cols, threshold)
                    got["threshold"] = threshold
                    out.setdefault(f"{name}, {label}", {}).setdefault(side, []).append(got)
        print(f"seed {seed} done", file=sys.stderr, flush=True)
    return _means(out)


def _means(out: dict) -> dict:
    """Per list and side: the mean of each figure over the seeds, and the seeds' own."""
    summary = {}
    for name, sides in out.items():
        summary[name] = {}
        for side, runs in sides.items():
            keys = [k for k in runs[0] if k != "threshold"]
            summary[name][side] = {k: (round(float(np.mean([r[k] for r in runs])), 4)
                                       if all(r[k] is not None for r in runs) else None)
                                   for k in keys}
            summary[name][side]["seeds"] = runs
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("part", choices=("dev", "fresh"))
    parser.add_argument("--sets", default="", help="fresh: comma-separated lab sets of benchmarks/sets.py")
    parser.add_argument("--feature", default=FEATURE, choices=FEATURES,
                        help="the feature judged (before: its column left out)")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    if args.feature not in FEATURES:  # the default, before its diff is applied
        parser.error(f"{args.feature} is not a feature of this codemap: apply its diff first")
    sides = sides_for(args.feature)
    result = (dev_run(sides) if args.part == "dev"
              else fresh_run([s for s in args.sets.split(",") if s], sides))
    Path(args.output).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    for name, sides in result.items():
        print(name, {side: {k: v for k, v in got.items() if k != "seeds"} for side, got in sides.items()})


if __name__ == "__main__":
    main()
