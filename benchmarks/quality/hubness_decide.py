"""Apply benchmarks/results/hubness/RULE.md to `fusion_sweep.py --evidence --toggle hubness`
outputs: per set acc@1 off/on beside the encoder alone, the pooled sign test (train_decide.paired)
and each condition of the rule for the files given.

    python benchmarks/quality/hubness_decide.py dev DEV.json [--lists LISTS30.json] [--fresh FRESH.json] -o OUT.json
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, stats
from stats import paired  # benchmarks/ is on sys.path when run as a script

OFF, ON = "default hubness=False", "default hubness=True"
MAX_DEV_LOSS, MAX_FRESH_LOSS = 0.02, 0.03


def hits(report: dict, label: str) -> dict[str, list[bool]]:
    return {name: [r == 1 for r in ranks[label]] for name, ranks in report.items()}


def judge(report: dict) -> dict:
    """Pooled counts and per-set acc@1 (encoder alone, off, on) of one toggle file."""
    out = paired(hits(report, OFF), hits(report, ON))
    out["per_set"] = {name: {"n": len(r[OFF]),
                             **{k: round(float(np.mean(np.array(r[label]) == 1)), 3)
                                for k, label in (("encoder", "encoder"), ("off", OFF), ("on", ON))}}
                      for name, r in report.items()}
    out["largest_set_loss"] = round(max(v["off"] - v["on"] for v in out["per_set"].values()), 3)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dev", type=Path)
    parser.add_argument("--lists", type=Path, help="the dev sets ranked as 30-row lists")
    parser.add_argument("--fresh", type=Path)
    parser.add_argument("-o", "--out", type=Path, required=True)
    args = parser.parse_args(argv)
    dev = judge(json.loads(args.dev.read_text()))
    out = {"dev": dev, "conditions": {
        "dev_pooled_p<0.05": bool(dev["p_one_sided"] < 0.05),
        f"dev_no_set_loses_more_than_{MAX_DEV_LOSS}": bool(dev["largest_set_loss"] <= MAX_DEV_LOSS)}}
    if args.lists:
        lists = judge(json.loads(args.lists.read_text()))
        out["lists30"] = lists
        out["conditions"]["lists30_pooled_not_worse"] = bool(lists["trained"] >= lists["base"])
    if args.fresh:
        fresh = judge(json.loads(args.fresh.read_text()))
        out["fresh"] = fresh
        out["conditions"]["fresh_pooled_not_worse"] = bool(fresh["trained"] >= fresh["base"])
        out["conditions"][f"fresh_no_set_loses_more_than_{MAX_FRESH_LOSS}"] = (
            bool(fresh["largest_set_loss"] <= MAX_FRESH_LOSS))
    out["holds_so_far"] = all(out["conditions"].values())
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps({k: out[k] for k in ("conditions", "holds_so_far")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
