"""Does a confidence feature (`evidence_unconfirmed` unless --feature names another) separate right
from wrong top candidates better? Rules and outcomes: benchmarks/results/confidence/RULE-unconfirmed.md,
RULE-unconfirmed-labs.md, RULE-settled-share.md.

    python benchmarks/quality/unconfirmed_evidence.py -o benchmarks/results/confidence/unconfirmed-2026-11-26.json
    python benchmarks/quality/unconfirmed_evidence.py --labs -o benchmarks/results/confidence/unconfirmed-labs-2026-11-27.json
    python benchmarks/quality/unconfirmed_evidence.py --labs --feature top_x_log_settled -o benchmarks/results/confidence/settled-share-2026-11-29.json  (with settled-share.diff applied)

--labs (RULE-unconfirmed-labs.md, once the lab priors were marked): the two lab dev lists pooled
and cross-fitted, per list, seeds 0, 1, 2, and the two fresh lab lists scored by the calibrator
fitted on both whole dev lists, and each dev list scored by the calibrator fitted on the other.

Before = the same calibration without that feature (its column left out), after = with it; the
same rankings on both sides (decide.calibrate.dev_list, a quarter of the gold hidden before
ranking). Drugs: the dev list cross-fitted (2 folds), and the fresh list scored by the calibrator
fitted on the whole dev list, seeds 0, 1, 2. Labs: the two lab dev lists pooled as `codemap
calibrate` pools them, cross-fitted, seed 0.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, stats

from pooled_calibration import lists  # noqa: E402
from codemap.decide.calibrate import (cross_fit, dev_top_auroc, fit_logistic,  # noqa: E402
                                      per_list_auroc, pooled, query_folds)
from codemap.decide.confidence import FEATURES, candidate_features, logistic  # noqa: E402

SEEDS = (0, 1, 2)
FOLDS = 2
def sides_for(feature: str) -> dict[str, list[int]]:
    """Before: every feature but `feature`; after: every feature. Features that came after it in
    FEATURES are on both sides."""
    new = FEATURES.index(feature)
    return {"before": [i for i in range(len(FEATURES)) if i != new], "after": list(range(len(FEATURES)))}


SIDES = sides_for("evidence_unconfirmed")  # side -> feature columns; main() sets --feature's


def drugs(seed: int) -> dict:
    dev, fresh = lists(("drugs", "drugs_fresh"), seed)
    x, labels = candidate_features(dev.dev.found), dev.dev.labels
    folds = query_folds(dev.dev.n_queries, FOLDS, seed)[dev.dev.found["query"].to_numpy()]
    x_fresh = candidate_features(fresh.dev.found)
    out = {}
    for side, cols in SIDES.items():
        oof = cross_fit(x[:, cols], labels, folds, FOLDS)
        fitted = fit_logistic(x[:, cols], labels)
        out[side] = {"drugs dev, cross-fitted": dev_top_auroc(dev.dev, oof),
                     "drugs fresh, fitted on dev": dev_top_auroc(fresh.dev, logistic(x_fresh[:, cols], **fitted))}
    return out


def pooled_labs(seed: int):
    """The two lab dev lists pooled as `codemap calibrate` pools them: the lists, the pooled set,
    its weights and features, and each side's cross-fitted confidence."""
    dev_lists = lists(("labs_fluid", "german_labs"), seed)
    dev, weights, fold_of = pooled(dev_lists, FOLDS, seed)
    x = candidate_features(dev.found)
    folds = fold_of[dev.found["query"].to_numpy()]
    oof = {side: cross_fit(x[:, cols], dev.labels, folds, FOLDS, weights) for side, cols in SIDES.items()}
    return dev_lists, dev, weights, x, oof


def labs(seed: int) -> dict:
    _, dev, _, _, oof = pooled_labs(seed)
    return {side: {"labs pooled dev, cross-fitted": dev_top_auroc(dev, oof[side])} for side in SIDES}


def labs_fresh(seed: int) -> dict:
    dev_lists, dev, weights, x, oof = pooled_labs(seed)
    fresh = lists(("german_labs_fresh", "labs_nofluid_fresh"), seed)
    out = {}
    for side, cols in SIDES.items():
        got = {f"{name} dev, pooled cross-fitted": auroc
               for name, auroc in per_list_auroc(dev_lists, oof[side]).items()}
        got["labs pooled dev, cross-fitted"] = dev_top_auroc(dev, oof[side])
        fitted = fit_logistic(x[:, cols], dev.labels, weights)
        for d in fresh:
            got[f"{d.name}, fitted on both dev lists"] = dev_top_auroc(
                d.dev, logistic(candidate_features(d.dev.found)[:, cols], **fitted))
        for scored, other in (dev_lists, dev_lists[::-1]):
            fitted = fit_logistic(candidate_features(other.dev.found)[:, cols], other.dev.labels)
            got[f"{scored.name}, fitted on {other.name} alone"] = dev_top_auroc(
                scored.dev, logistic(candidate_features(scored.dev.found)[:, cols], **fitted))
        out[side] = got
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--labs", action="store_true", help="the lab lists, dev and fresh")
    parser.add_argument("--feature", default="evidence_unconfirmed", choices=FEATURES,
                        help="the feature measured: left out before, in after")
    args = parser.parse_args()
    SIDES.update(sides_for(args.feature))
    if args.labs:
        runs = {f"seed {s}": labs_fresh(s) for s in SEEDS}
        runs["seed 0 drugs"] = drugs(0)
    else:
        runs = {f"seed {s}": drugs(s) for s in SEEDS}
        runs["seed 0 labs"] = labs(0)
    summary = {}
    for run in runs.values():
        for side, got in run.items():
            for name, value in got.items():
                summary.setdefault(name, {}).setdefault(side, []).append(value)
    summary = {name: {side: round(float(np.mean(v)), 4) for side, v in sides.items()}
               for name, sides in summary.items()}
    args.output.write_text(json.dumps({"summary": summary, "runs": runs}, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
