"""Sweep the weight of the usual-variant priors (usual specimen and usual method together) over
the LOINC dev sets; the rule is benchmarks/results/usual-weight/RULE.md.

    python benchmarks/quality/usual_weight_sweep.py benchmarks/results/usual-weight/dev.json
    python benchmarks/quality/usual_weight_sweep.py benchmarks/results/usual-weight/fresh.json \
        --sets labs_nofluid_fresh,german_labs_fresh --weights 0.03,W

Writes {set: {weight: [gold rank per query]}} and prints acc@1 per set and weight.
"""
from __future__ import annotations

import argparse
from dataclasses import replace
import json
import sys
from pathlib import Path

import numpy as np

from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods
from codemap.evaluate.metrics import gold_ranks
from codemap.domains.lab import text as lab_evidence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, stats
from fusion_sweep import load  # noqa: E402  (the sets' files, one definition)

GRID = [0.03, 0.05, 0.08, 0.12, 0.16, 0.20]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sets", default="labs_fluid,labs_nofluid,loinc_short,german_labs")
    parser.add_argument("--weights", default=",".join(map(str, GRID)))
    args = parser.parse_args(argv)
    default_scorers = lab_evidence.usual_scorers
    report = {}
    for name in args.sets.split(","):
        g = load(name)
        report[name] = {}
        for w in (float(x) for x in args.weights.split(",")):
            lab_evidence.usual_scorers = lambda shares=None, w=w: [
                replace(scorer, weight=w) for scorer in default_scorers(shares)]
            try:
                ranks = gold_ranks(g.rank(eval_methods(g.base)[DEFAULT_METHOD[False]]), g.gold)
            finally:
                lab_evidence.usual_scorers = default_scorers
            report[name][str(w)] = [r if r is not None else 10**6 for r in ranks]
        print(name, {w: int(np.sum(np.array(r) == 1)) for w, r in report[name].items()},
              flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
