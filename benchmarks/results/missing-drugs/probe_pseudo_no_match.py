"""What the margin on thresholds does to the pseudo-query calibrations' no_match (targets with no
dev-fitted calibration): each set's target calibrated on its pseudo-queries with the point
precision rule (before 2026-11-29) and with the Wilson lower bound (after), applied to the set's
default ranking with a quarter of the gold codes removed (as pseudo_calibration_eval.py): the
no_match threshold, the share of rows under it, and the share of rows under it whose first
candidate is right.

    python benchmarks/results/missing-drugs/probe_pseudo_no_match.py OUT.json hpo_lay_fresh,pcs_short_fresh,icd_inclusion_confirm
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: sets
from sets import FRESH, SETS as DEV  # noqa: E402
from codemap.config import EvalConfig  # noqa: E402
from codemap.decide import calibrate, pseudo_calibration  # noqa: E402,F401
from codemap.decide.learned_eval import learned_target  # noqa: E402
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods, gold_queries  # noqa: E402
from codemap.rank import candidates  # noqa: E402

SETS = {**DEV, **FRESH}


def point_rule(curve, precision):
    """rank.candidates.threshold_at before 2026-11-29."""
    best = None
    for threshold, reached, count in curve:
        if count < candidates.MIN_SUPPORT:
            continue
        if reached < precision:
            break
        best = threshold
    return best


def measure(name: str) -> dict:
    gold, target, gold_col, text_cols = SETS[name]
    g = gold_queries(EvalConfig(gold=gold, target=target, gold_col=gold_col, text_cols=text_cols,
                                progress=False, drop_gold_share=0.25))
    default = eval_methods(g.base, drugs=False)[DEFAULT_METHOD[False]]
    found = g.rank(default)
    top = found[found["rank"] == 1]
    right = np.array([c in g.gold[q] for q, c in zip(top["query"], top["target_code"])])
    module = sys.modules["codemap.decide.calibrate"]
    wilson = module.threshold_at
    out = {"rows": len(top)}
    for label, rule in (("point", point_rule), ("wilson", wilson)):
        module.threshold_at = rule
        calibrator = pseudo_calibration.fit_pseudo_calibrator(
            learned_target(g), g.ranking_for(g.base).scorers, g.base, g.ranking_for(g.base), g.kind, "-")
        conf = calibrator.predict(found)[(found["rank"] == 1).to_numpy()]
        under = conf < calibrator.no_match_below
        out[label] = {"no_match_below": calibrator.no_match_below,
                      "no_match_share": round(float(under.mean()), 4),
                      "no_match_right_share": round(float((under & right).mean()), 4)}
    module.threshold_at = wilson
    return out


if __name__ == "__main__":
    results = {name: measure(name) for name in sys.argv[2].split(",")}
    for name, row in results.items():
        print(name, row, flush=True)
    Path(sys.argv[1]).write_text(json.dumps(results, indent=1), encoding="utf-8")
