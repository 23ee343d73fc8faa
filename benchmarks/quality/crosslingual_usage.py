"""The LOINC usage prior across languages (benchmarks/results/crosslingual-usage/RULE.md): each
list in another language than its LOINC target ranked by the default ranking with the prior at
each share of its same-language weight, the encoder and lexical index alone beside it.

    python benchmarks/quality/crosslingual_usage.py OUT.json              # the dev lists, then the rule's dev part
    python benchmarks/quality/crosslingual_usage.py OUT.json --fresh S    # the fresh check at share S against 0

--open-rows-only: the prior only for rows that state no axis (RULE-2.md).
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from codemap.domains.lab.part_translation import held_out
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods
from codemap.evaluate.metrics import gold_ranks

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets
from sets import load  # noqa: E402

SHARES = (0.0, 0.25, 0.5, 1.0)
DEV = ("amsterdam_dev", "amsterdam_dev_16k", "german_labs_16k", "loinc_de_en", "loinc_de_16k")
FRESH = ("amsterdam_fresh", "amsterdam_fresh_16k", "german_labs_fresh_16k", "loinc_de_16k_fresh",
         "loinc_de_16k_fresh2", "taiwan_zh")


def measure(name: str, shares, open_rows_only: bool = False) -> dict:
    """Rows right at rank 1 and within 10: the default ranking at each share, the encoder and the
    lexical index alone (which the prior does not touch)."""
    g = load(name)
    held_out(set().union(*g.gold))  # German sets: the part lexicon learns without their codes
    methods = eval_methods(g.base, drugs=False)
    out = {"rows": len(g.gold), "language": g.base.crosslingual_from or None, "default": {}}
    for label in ("encoder", "lexical"):
        out[label] = _counts(gold_ranks(g.rank(methods[label]), g.gold))
    assert g.base.crosslingual_from, f"{name} is not ranked across languages"
    for share in shares:
        # What ranking_for gives a list across languages at this share (the set's settings were
        # made when it was loaded, at the shipped share).
        ranking = replace(methods[DEFAULT_METHOD[False]], crosslingual_usage_share=share,
                          usage_evidence=share > 0, usage_share=share,
                          usage_open_rows_only=open_rows_only)
        out["default"][str(share)] = _counts(gold_ranks(g.rank(ranking), g.gold))
    print(name, json.dumps(out), flush=True)
    return out


def _counts(ranks) -> dict:
    return {"at1": sum(r == 1 for r in ranks), "at10": sum(bool(r) and r <= 10 for r in ranks),
            "ranks": ranks}


def best_share(results: dict, names) -> float:
    """The share with the most rows right at rank 1 over `names`; a tie goes to the smaller."""
    return max(SHARES, key=lambda s: (sum(results[n]["default"][str(s)]["at1"] for n in names), -s))


def decide_dev(results: dict) -> dict:
    """RULE.md steps 1–3: s* on the pooled dev lists, and leave one list out."""
    chosen = best_share(results, DEV)
    held = {}
    for name in DEV:
        share = best_share(results, [n for n in DEV if n != name])
        gain = results[name]["default"][str(share)]["at1"] - results[name]["default"]["0.0"]["at1"]
        held[name] = {"share_from_others": share, "gain_rows": gain}
    gains = [h["gain_rows"] for h in held.values()]
    adopt = chosen > 0 and sum(gains) > 0 and min(gains) >= -2
    return {"chosen_share": chosen, "leave_one_out": held, "sum_gain_rows": sum(gains),
            "dev_rule_holds": adopt}


def decide_fresh(results: dict, share: float) -> dict:
    """RULE.md step 4: pooled rows right not fewer, no list down by more than max(1 point, 1 row)."""
    per = {}
    for name in FRESH:
        rows = results[name]["rows"]
        before = results[name]["default"]["0.0"]["at1"]
        after = results[name]["default"][str(share)]["at1"]
        per[name] = {"before": before, "after": after,
                     "too_low": before - after > max(0.01 * rows, 1)}
    pooled = sum(p["after"] - p["before"] for p in per.values())
    return {"share": share, "per_list": per, "pooled_gain_rows": pooled,
            "fresh_rule_holds": pooled >= 0 and not any(p["too_low"] for p in per.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--fresh", type=float, help="the fresh check at this share against 0")
    parser.add_argument("--open-rows-only", action="store_true")
    args = parser.parse_args()
    if args.fresh is None:
        results = {name: measure(name, SHARES, args.open_rows_only) for name in DEV}
        decision = decide_dev(results)
    else:
        results = {name: measure(name, (0.0, args.fresh), args.open_rows_only) for name in FRESH}
        decision = decide_fresh(results, args.fresh)
    print(json.dumps(decision, indent=1))
    args.out.write_text(json.dumps({"results": results, "decision": decision}, indent=1) + "\n")


if __name__ == "__main__":
    main()
