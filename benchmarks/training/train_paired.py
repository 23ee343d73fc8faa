"""Paired comparison of trained models with the untrained base on a dev set: the same queries,
so a gain is judged by the queries that flip (sign test on discordant pairs at acc@1), not by two
independent accuracies. Run after benchmarks/training/train_ablation.sh (it reuses that run's index
caches, so only the queries are encoded again).

usage: python benchmarks/training/train_paired.py OUT_DIR [SET ...]   (the folder train_ablation.sh wrote;
       SET: labs, icd, icd-confirm — default all)
"""
from __future__ import annotations

import sys
from math import comb
from pathlib import Path

from codemap.config import EncoderConfig, EvalConfig
from codemap.evaluate import evaluate_gold
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: usage
from usage import positional  # noqa: E402

ARGS = positional(__doc__, 1)


DEV_SETS = {
    "labs": dict(gold=Path("tests/data/mimic_labs_gold.tsv"), target="LOINC", gold_col="loinc_code",
                 text_cols=()),
    "icd": dict(gold=Path("benchmarks/data/icd10cm_inclusion_dev.tsv"),
                target="benchmarks/data/icd10cm_inclusion_target.csv", gold_col="icd10cm_code",
                text_cols=("term",)),
    "icd-confirm": dict(gold=Path("benchmarks/data/icd10cm_inclusion_confirm.tsv"),
                        target="benchmarks/data/icd10cm_inclusion_confirm_target.csv",
                        gold_col="icd10cm_code", text_cols=("term",)),
}


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact binomial p-value of wins vs losses under p = 1/2."""
    n, low = wins + losses, min(wins, losses)
    if n == 0:
        return 1.0
    return min(1.0, 2 * sum(comb(n, i) for i in range(low + 1)) / 2 ** n)


def main(out: Path, only: list[str]) -> None:
    models = {"base": "default", "cosine": str(out / "cosine" / "model"), "none": str(out / "none" / "model")}
    for dev, spec in DEV_SETS.items():
        if only and dev not in only:
            continue
        top1 = {}
        for name, model in models.items():
            result = evaluate_gold(EvalConfig(**spec, encoder=EncoderConfig(model=model),
                                              cache_dir=out / f"cache-{name}", progress=False))
            for method in ("encoder", "hybrid (all evidence)"):
                top1[name, method] = [r == 1 for r in result["ranks"][method]]
        for method in ("encoder", "hybrid (all evidence)"):
            base = top1["base", method]
            for name in ("cosine", "none"):
                hits = top1[name, method]
                wins = sum(h and not b for h, b in zip(hits, base))
                losses = sum(b and not h for h, b in zip(hits, base))
                print(f"{dev}\t{method}\t{name} vs base\tn={len(base)}\tacc@1 {sum(base)/len(base):.3f} -> "
                      f"{sum(hits)/len(hits):.3f}\tgained {wins}\tlost {losses}\tsign test p={sign_test(wins, losses):.3g}")
            cos, none = top1["cosine", method], top1["none", method]
            wins = sum(a and not b for a, b in zip(cos, none))
            losses = sum(b and not a for a, b in zip(cos, none))
            print(f"{dev}\t{method}\tcosine vs none\tgained {wins}\tlost {losses}\tsign test p={sign_test(wins, losses):.3g}")


if __name__ == "__main__":
    main(Path(ARGS[0]), ARGS[1:])
