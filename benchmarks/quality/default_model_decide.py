"""Apply benchmarks/results/train-coder-long/RULE-default.md to two fusion_sweep.py --evidence
outputs: choose the candidate model's fusion weight (largest smallest acc@1 gain over its own
encoder alone across the sets, ties by the mean gain; also leave-one-set-out), then compare its
default ranking with the shipped one query by query (pooled one-sided exact sign test) and per set.

    python benchmarks/quality/default_model_decide.py CANDIDATE.json SHIPPED.json [--shipped-weight 0.7]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy.stats import binomtest

MAX_SET_LOSS = 0.05


def acc(ranks) -> float:
    return float(np.mean(np.array(ranks) == 1))


def choose(report: dict, sets: list[str]) -> str:
    """The 'default w=…' label with the largest smallest gain over the encoder alone."""
    labels = [k for k in report[sets[0]] if k.startswith("default w=")]
    gains = {k: [acc(report[s][k]) - acc(report[s]["encoder"]) for s in sets] for k in labels}
    return max(labels, key=lambda k: (round(min(gains[k]), 6), float(np.mean(gains[k]))))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("candidate", type=Path)
    parser.add_argument("shipped", type=Path)
    parser.add_argument("--shipped-weight", default="0.7")
    parser.add_argument("--weight", help="the candidate's weight, already chosen (fresh sets)")
    args = parser.parse_args(argv)
    cand, ship = json.loads(args.candidate.read_text()), json.loads(args.shipped.read_text())
    sets = [s for s in cand if s in ship]
    label = f"default w={args.weight}" if args.weight else choose(cand, sets)
    out = {"sets": sets, "candidate_label": label}
    if not args.weight:
        out["leave_one_set_out"] = {s: choose(cand, [t for t in sets if t != s]) for s in sets}
    shipped_label = f"default w={args.shipped_weight}"
    better = worse = 0
    per_set = {}
    for s in sets:
        a = np.array(cand[s][label]) == 1
        b = np.array(ship[s][shipped_label]) == 1
        better, worse = better + int((a & ~b).sum()), worse + int((b & ~a).sum())
        per_set[s] = {"n": len(a), "shipped": round(float(b.mean()), 3),
                      "candidate": round(float(a.mean()), 3),
                      "candidate_encoder": round(acc(cand[s]["encoder"]), 3),
                      "shipped_encoder": round(acc(ship[s]["encoder"]), 3)}
    out["per_set"] = per_set
    out["pooled"] = {"better": better, "worse": worse,
                     "p_candidate_wins": binomtest(better, better + worse, 0.5, "greater").pvalue,
                     "p_shipped_wins": binomtest(worse, better + worse, 0.5, "greater").pvalue}
    out["largest_set_loss"] = max(v["shipped"] - v["candidate"] for v in per_set.values())
    out["no_set_loses_more_than_0.05"] = out["largest_set_loss"] <= MAX_SET_LOSS
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
