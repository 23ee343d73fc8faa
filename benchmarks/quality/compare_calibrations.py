"""Two lab (or drug) calibrations on the same ranked candidates: per list the AUROC of the first
candidate's confidence (right vs wrong) and the rows each would suggest `pre-approve`, the mean
AUROC over the lists with a paired bootstrap of its change (rows resampled within each list).

The candidates come from a `stated_axes.py` output (the ranking does not depend on the
calibration), so both calibrations are read against identical rows.

    python benchmarks/quality/compare_calibrations.py RANKED.json OLD.json NEW.json OUT.json \
        --sets clinosim_aliases,taiwan_aliases --unseen clinosim_aliases
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from codemap.decide.confidence import Calibrator
from codemap.decide.learned_eval import suggested_shares
from stated_axes import candidate_frame  # benchmarks/quality/, this script's folder

RESAMPLES = 2000  # fixed by the rule (lab-calibration-lists/RULE.md)


def top_confidences(result: dict, calibrator: Calibrator) -> tuple[np.ndarray, np.ndarray]:
    """Each row's first-candidate confidence under `calibrator`, and whether that candidate is right."""
    frame = candidate_frame(result)
    top = frame["rank"].to_numpy() == 1
    confidence = calibrator.predict(frame)[top]
    right = frame["right"].to_numpy(bool)[top]
    # A row with no candidate is wrong, at no confidence.
    missing = len(result["rows"]) - int(top.sum())
    return (np.concatenate([confidence, np.zeros(missing)]),
            np.concatenate([right, np.zeros(missing, bool)]))


def _auroc(confidence: np.ndarray, right: np.ndarray) -> float:
    return float(roc_auc_score(right, confidence)) if 0 < right.sum() < len(right) else float("nan")


def paired_bootstrap(lists: list[tuple], seed: int = 0) -> np.ndarray:
    """Per resample, the mean over lists of AUROC(new) − AUROC(old), rows drawn with replacement
    within each list (the same draw for both calibrations)."""
    rng = np.random.default_rng(seed)
    rises = np.empty(RESAMPLES)
    for i in range(RESAMPLES):
        changes = []
        for old, new, right in lists:
            pick = rng.integers(0, len(right), len(right))
            changes.append(_auroc(new[pick], right[pick]) - _auroc(old[pick], right[pick]))
        rises[i] = np.nanmean(changes)
    return rises


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ranked", type=Path)
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--sets", required=True, help="the judge lists, comma-separated")
    parser.add_argument("--unseen", default="", help="those of a kind neither calibration saw")
    args = parser.parse_args(argv)
    results = {r["set"]: r for r in json.loads(args.ranked.read_text(encoding="utf-8"))}
    old, new = Calibrator.load(args.old), Calibrator.load(args.new)
    names, unseen = args.sets.split(","), set(filter(None, args.unseen.split(",")))
    rows, lists, picked = [], [], {"old": [0, 0], "new": [0, 0]}
    for name in names:
        report = {"set": name, "unseen": name in unseen}
        confidences = {}
        for label, calibrator in (("old", old), ("new", new)):
            confidence, right = top_confidences(results[name], calibrator)
            confidences[label] = confidence
            shares = suggested_shares(calibrator, confidence, right)
            chosen = (confidence >= shares["threshold"] if shares["threshold"] is not None
                      else np.zeros(len(confidence), bool))
            picked[label][0] += int(chosen.sum())
            picked[label][1] += int(right[chosen].sum())
            report[label] = {"auroc": round(_auroc(confidence, right), 4),
                             "threshold_95": shares["threshold"],
                             "preapproved": int(chosen.sum()), "preapproved_right": int(right[chosen].sum())}
        report["n"], report["top1"] = len(right), round(float(right.mean()), 4)
        rows.append(report)
        lists.append((confidences["old"], confidences["new"], right))
        print(f"{name:20} n={len(right):4} AUROC {report['old']['auroc']:.3f} -> {report['new']['auroc']:.3f}"
              f"  pre-approved {report['old']['preapproved']} -> {report['new']['preapproved']}"
              f" (right {report['new']['preapproved_right']})", flush=True)
    mean = {label: float(np.nanmean([r[label]["auroc"] for r in rows])) for label in ("old", "new")}
    mean_unseen = {label: float(np.nanmean([r[label]["auroc"] for r in rows if r["unseen"]]))
                   for label in ("old", "new")} if unseen else {}
    rises = paired_bootstrap(lists)
    summary = {"mean_auroc": mean, "mean_auroc_unseen": mean_unseen,
               "rise": mean["new"] - mean["old"], "bootstrap_share_above_0": float((rises > 0).mean()),
               "bootstrap_5_95": [float(np.percentile(rises, 5)), float(np.percentile(rises, 95))],
               "preapproved": {label: {"rows": n, "right": k, "precision": (k / n if n else None)}
                               for label, (n, k) in picked.items()},
               "lists": rows}
    print(json.dumps({k: v for k, v in summary.items() if k != "lists"}, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
