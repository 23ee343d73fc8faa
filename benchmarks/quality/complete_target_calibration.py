"""Would the lab calibration pre-approve rows if its missing rows were drawn as a complete target
(a LOINC release) lacks a test: with their analyte hidden whole, not the gold code alone? Decides
nothing; the finding is in docs/experiments/2026-11-30-package-lab-lists.md.

    python benchmarks/quality/complete_target_calibration.py OUT.json

The two lists the shipped lab calibration is fitted on (MIMIC labels with fluid, German lab
labels), each ranked as `codemap calibrate` ranks it with a quarter of its rows missing, seeds
0/1/2. A missing row's gold is hidden (a) alone, as shipped, (b) with every code of its analyte
(the component before subparts, as the lab domain reads a name) for 43 % of the missing rows (the
share of MIMIC's real rows outside the built-in LOINC whose analyte is outside it too), and
(c) for all of them. Per form: the pooled leave-one-list-out AUROC, whether a 95 % threshold is
certified (rank.candidates.threshold_at), the best one-sided lower bound any threshold reaches,
and what the fitted calibration pre-approves on each list with every gold in the target.
"""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/quality: settled_share_kinds
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets

import settled_share_kinds as kinds  # noqa: E402  (ranked, scored: a list as calibrate ranks and scores it)
from codemap.decide.calibrate import (cross_fitted, dev_top_auroc, fit_logistic,  # noqa: E402
                                      precision_curve)
from codemap.domains.lab import component_from_name  # noqa: E402
from codemap.rank.candidates import precision_lower_bound, threshold_at  # noqa: E402

CALIBRATE = importlib.import_module("codemap.decide.calibrate")  # the package exports a function of that name
FORMS = {"gold alone (shipped)": 0.0, "analyte whole for 43 %": 0.43, "analyte whole": 1.0}
SEEDS = (0, 1, 2)


def analyte_hiding(share: float, seed: int):
    """A stand-in for calibrate.hidden_together: `share` of the missing rows lose every code of
    their gold's analyte."""
    def hide(target, codes: list[set[str]]) -> list[set[str]]:
        names = target.vocab.names.drop_duplicates("code").set_index("code")["name"]
        analyte = {code: (component_from_name(name) or "").lower() for code, name in names.items()}
        codes_of: dict[str, set[str]] = {}
        for code, key in analyte.items():
            if key:
                codes_of.setdefault(key, set()).add(code)
        draw = np.random.default_rng(seed + 7)
        return [set(hidden).union(*(codes_of.get(analyte.get(c, ""), set()) for c in hidden))
                if hidden and draw.random() < share else set(hidden) for hidden in codes]
    return hide


def measured(lists, every_gold) -> dict:
    dev, weights, _, x, oof = cross_fitted(lists, 2, 0)
    top = dev.found["rank"].to_numpy() == 1
    curve = precision_curve(oof[top], dev.labels[top])
    threshold = threshold_at(curve, 0.95)
    bound, count = max((precision_lower_bound(p, k), k) for _, p, k in curve if k >= 10)
    fit, every = fit_logistic(x, dev.labels, weights), list(range(x.shape[1]))
    approved = {d.name: kinds.scored(d, fit, every, threshold)["preapproved_share"] for d in every_gold}
    return {"pooled_auroc": dev_top_auroc(dev, oof), "threshold_95": threshold,
            "best_lower_bound": round(bound, 3), "at_rows": count, "preapproved_every_gold": approved}


def main(out: str) -> None:
    every_gold = [kinds.ranked(name, 0, 0.0) for name in kinds.SHIPPED]
    result: dict = {}
    for form, share in FORMS.items():
        for seed in SEEDS:
            CALIBRATE.hidden_together = analyte_hiding(share, seed)
            lists = [kinds.ranked(name, seed) for name in kinds.SHIPPED]
            result.setdefault(form, []).append({"seed": seed, **measured(lists, every_gold)})
            print(form, result[form][-1], flush=True)
    Path(out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
