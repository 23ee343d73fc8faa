"""Before/after and leave-one-out table for the lab text-axis and usual-variant scorers.

Ranks each lab dev set once per setting in one process (the same code path as `codemap eval`:
GoldQueries.rank), default model, built-in LOINC:

    python benchmarks/quality/lab_text_ablation.py --cache-dir /tmp/labs-cache

Rows: encoder, lexical, hybrid without evidence, the old default (text and usual scorers off),
the new default, the new default without each new scorer in turn, the old default plus each new
scorer alone. Dev sets only: the *_fresh parts are not read here.
"""
from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from codemap.config import EvalConfig, RankConfig
from codemap.evaluate import gold_ranks, score_ranks
from codemap.domains.lab.text import text_scorers, usual_scorers
from codemap.evaluate.gold import gold_queries

SETS = {  # name → (gold file, gold column, text columns: () = detected, as `codemap eval`)
    "mimic (label+fluid)": ("tests/data/mimic_labs_gold.tsv", "loinc_code", ()),
    "mimic nofluid dev": ("benchmarks/data/mimic_labs_nofluid_dev.tsv", "loinc_code", ("label",)),
    "labs_de": ("tests/data/labs_de_pairs.tsv", "loinc_code", ("bezeichnung",)),
}
# LOINC short names (property part removed, plus an example unit) against a user's table of
# long names with LOINC codes (not the built-in target).
SHORT_NAMES = ("short → long names", "tests/data/loinc_short_units_dev.tsv",
               "tests/data/loinc_long_names.tsv", "loinc_code", ("label",))


def settings() -> dict[str, RankConfig]:
    new = RankConfig()
    old = replace(new, evidence_off=tuple(s.name for s in text_scorers() + usual_scorers()))
    plain = replace(old, usage_evidence=False,  # the usage scorer then only breaks ties
                    evidence_off=(*old.evidence_off, "unit", "specimen", "category"))
    rows = {"encoder": replace(plain, method="encoder"), "lexical": replace(plain, method="lexical"),
            "hybrid, no evidence": plain, "old default": old, "new default": new}
    names = [s.name for s in text_scorers() + usual_scorers()]
    for name in names:
        rows[f"new default − {name}"] = replace(new, evidence_off=(name,))
    for name in names:
        rows[f"old default + {name}"] = replace(new, evidence_off=tuple(n for n in names if n != name))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/labs-cache"))
    args = parser.parse_args()
    table = {}
    runs = [(name, gold, "LOINC", column, cols) for name, (gold, column, cols) in SETS.items()]
    for set_name, gold, target, column, text_cols in runs + [SHORT_NAMES]:
        queries = gold_queries(EvalConfig(Path(gold), target, column, text_cols,
                                          cache_dir=args.cache_dir, progress=False))
        for row, rank in settings().items():
            rank = replace(rank, encoder_weight=queries.base.encoder_weight)
            scores = score_ranks(gold_ranks(queries.rank(rank), queries.gold))
            table.setdefault(row, {})[set_name] = (scores.acc[1], scores.acc[10], scores.mrr, scores.n)
    sets = list(SETS) + [SHORT_NAMES[0]]
    print("| setting | " + " | ".join(f"{s} acc@1 / acc@10 / MRR (n={table['encoder'][s][3]})"
                                      for s in sets) + " |")
    print("|---" * (len(sets) + 1) + "|")
    for row, found in table.items():
        print(f"| {row} | " + " | ".join("{:.3f} / {:.3f} / {:.3f}".format(*found[s][:3])
                                         for s in sets) + " |")


if __name__ == "__main__":
    main()
