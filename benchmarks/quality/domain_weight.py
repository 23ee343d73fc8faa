"""A trained model's fusion weight for one target domain, chosen on dev sets and judged on fresh
ones (issue #21; the rule: benchmarks/results/target-weight/RULE-domain-weight.md).

Reads `fusion_sweep.py --evidence` files (per-query gold ranks of the default ranking at each
weight, and of the encoder alone).

    python benchmarks/quality/domain_weight.py choose DEV.json --sets loinc_short,hpo_lay,pcs_short,icd_inclusion
    python benchmarks/quality/domain_weight.py judge FRESH.json --weight 1.0 --sets hpo_lay_fresh,...
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, stats
from stats import paired  # benchmarks/ is on sys.path when run as a script

FIXED = 0.7
MAX_SET_LOSS = 0.02


def acc(ranks: list) -> float:
    return sum(r == 1 for r in ranks) / len(ranks)


def weights_of(sweep: dict, name: str) -> list[str]:
    return [k.split("=", 1)[1] for k in sweep[name] if k.startswith("default w=")]


def choose(sweep: dict, names: list[str]) -> tuple[str, float, float]:
    """The weight with the largest smallest acc@1 gain over the encoder alone, ties by the mean
    gain (benchmarks/results/fusion/RULE.md): (weight, smallest gain, mean gain)."""
    best = None
    for w in weights_of(sweep, names[0]):
        gains = [acc(sweep[n][f"default w={w}"]) - acc(sweep[n]["encoder"]) for n in names]
        key = (round(min(gains), 6), round(sum(gains) / len(gains), 6))
        if best is None or key > best[0]:
            best = (key, w)
    return best[1], *best[0]


def judge(sweep: dict, names: list[str], weight: float) -> dict:
    """The chosen weight vs the fixed one, per set and pooled, and whether the rule holds."""
    right = lambda label: {n: [r == 1 for r in sweep[n][label]] for n in names}
    new, old = right(f"default w={float(weight)}"), right(f"default w={FIXED}")
    per_set = {}
    for n in names:
        one = paired({n: old[n]}, {n: new[n]})
        per_set[n] = {"queries": len(new[n]), "encoder": round(acc(sweep[n]["encoder"]), 4),
                      "lexical": round(acc(sweep[n]["lexical"]), 4),
                      f"w={FIXED}": round(sum(old[n]) / len(old[n]), 4),
                      f"w={weight:g}": round(sum(new[n]) / len(new[n]), 4),
                      "gained": one["better"], "lost": one["worse"]}
    pooled = paired(new, old)  # "better": right only at the fixed weight
    gained, lost, p_fixed = pooled["worse"], pooled["better"], pooled["p_one_sided"]
    worst = min(v[f"w={weight:g}"] - v[f"w={FIXED}"] for v in per_set.values())
    return {"sets": per_set, "gained": gained, "lost": lost, "p_fixed_better": p_fixed,
            "largest_set_loss": round(-worst, 4) if worst < 0 else 0.0,
            "holds": p_fixed >= 0.05 and worst >= -MAX_SET_LOSS}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["choose", "judge"])
    parser.add_argument("sweep", type=Path)
    parser.add_argument("--sets", required=True)
    parser.add_argument("--weight", type=float, help="judge: the chosen weight")
    parser.add_argument("-o", "--out", type=Path)
    args = parser.parse_args(argv)
    sweep, names = json.loads(args.sweep.read_text()), args.sets.split(",")
    if args.step == "choose":
        w, smallest, mean = choose(sweep, names)
        result = {"weight": w, "smallest_gain": smallest, "mean_gain": mean,
                  "leave_one_out": {n: choose(sweep, [m for m in names if m != n])[0]
                                    for n in names} if len(names) > 1 else {}}
    else:
        result = judge(sweep, names, args.weight)
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
