"""The pre-registered decision for a long CODER run
(benchmarks/results/train-coder-long/PREREGISTRATION.md): the trained model against its untrained
base, encoder row of `codemap eval`, acc@1 per query, pooled over the dev sets with a one-sided
exact sign test; with --final also the pooled fresh sets, the rule, and — when it holds — the
adapter shipped as the alias it replaces.

    python benchmarks/training/train_decide.py train/runs/coder-en --alias default            # dev only (watching)
    python benchmarks/training/train_decide.py train/runs/coder-en --alias default --final    # the decision

Writes benchmarks/results/train-coder-long/<run>-step-<N>[-final].json and prints a table.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from importlib import resources
from pathlib import Path

import pandas as pd

from codemap.embed.adapters import materialise
from codemap.config import EncoderConfig, EvalConfig, default_cache_dir
from codemap.embed.models import resolve_model
from codemap.evaluate.gold import eval_methods, gold_queries
from codemap.evaluate.metrics import gold_ranks
from codemap.train.ship import ship

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, stats
from sets import english_loinc  # noqa: E402  (benchmarks/ on the path)
from stats import paired  # noqa: E402,F401  (imported from here by older scripts)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "train-coder-long"
# base alias → the untrained model it starts from (the alias itself now names the trained model)
BASES = {"default": "default-base", "multilingual": "multilingual-base"}

# (name, gold file, target, gold column, text columns) — as in the pre-registration
DEV = [
    ("labs+fluid", ROOT / "tests/data/mimic_labs_gold.tsv", "LOINC", "loinc_code", ()),
    ("labs", DATA / "mimic_labs_nofluid_dev.tsv", "LOINC", "loinc_code", ("label",)),
    ("icd-inclusion", DATA / "icd10cm_inclusion_dev.tsv", str(DATA / "icd10cm_inclusion_target.csv"),
     "icd10cm_code", ("term",)),
    ("hpo-lay", DATA / "hpo_lay_dev.tsv", str(DATA / "hpo_lay_target.csv"), "hpo_id", ("lay_phrase",)),
    ("pcs", DATA / "icd10pcs_short_dev.tsv", str(DATA / "icd10pcs_short_target.csv"), "pcs_code",
     ("short_name",)),
    ("drugs", DATA / "ohdsi_mimic_drugs_dev.tsv", str(ROOT / "codemap/data/drugs/drug_targets.tsv"),
     "target_concept_id", ("local_drug_string",)),
]
# Cross-lingual sets, multilingual model only. The LOINC one is scored against English names only:
# the built-in LOINC may carry German names, which would make German queries exact matches.
CROSSLINGUAL = [
    ("loinc-de", DATA / "loinc_de_to_en.tsv", "english-loinc", "loinc_code", ("name",)),
    ("icd-gm-de", DATA / "icd10gm_de.tsv", str(DATA / "icd10cm_en_target.csv"), "icd10_code", ("name",)),
    ("cie10-es", DATA / "cie10_es.tsv", str(DATA / "icd10cm_en_target.csv"), "icd10_code", ("name",)),
]
FRESH = [
    ("icd-inclusion-fresh", DATA / "icd10cm_inclusion_confirm.tsv",
     str(DATA / "icd10cm_inclusion_confirm_target.csv"), "icd10cm_code", ("term",)),
    ("labs-fresh", DATA / "mimic_labs_nofluid_fresh.tsv", "LOINC", "loinc_code", ("label",)),
    ("hpo-lay-fresh", DATA / "hpo_lay_fresh.tsv", str(DATA / "hpo_lay_target.csv"), "hpo_id", ("lay_phrase",)),
    ("pcs-fresh", DATA / "icd10pcs_short_fresh.tsv", str(DATA / "icd10pcs_short_target.csv"), "pcs_code",
     ("short_name",)),
    ("drugs-fresh", DATA / "ohdsi_mimic_drugs_fresh.tsv", str(ROOT / "codemap/data/drugs/drug_targets.tsv"),
     "target_concept_id", ("local_drug_string",)),
]


def dev_sets(alias: str) -> list:
    """The dev sets a model of `alias` is judged on: the multilingual one on the cross-lingual
    sets too."""
    return DEV + (CROSSLINGUAL if alias == "multilingual" else [])


def encoder_hits(model: str, sets: list, cache: Path, english: str) -> dict[str, list[bool]]:
    """Set name → acc@1 of the encoder row per scored query."""
    hits = {}
    for name, gold, target, gold_col, text_cols in sets:
        g = gold_queries(EvalConfig(
            gold=gold, target=english if target == "english-loinc" else target, gold_col=gold_col,
            text_cols=text_cols, encoder=EncoderConfig(model=model, device="cpu"), cache_dir=cache,
            progress=False))
        # The encoder row of `codemap eval` alone: the other rows cost time and decide nothing.
        ranks = gold_ranks(g.rank(eval_methods(g.base)["encoder"]), g.gold)
        hits[name] = [rank == 1 for rank in ranks]
        print(f"  {model if len(model) < 30 else '…' + model[-28:]} {name}: "
              f"{sum(hits[name])}/{len(hits[name])}", flush=True)
    return hits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--alias", choices=sorted(BASES), required=True)
    parser.add_argument("--final", action="store_true", help="also the fresh sets, and decide")
    args = parser.parse_args(argv)
    sets = dev_sets(args.alias)
    name = "coder-en" if args.alias == "default" else "coder-multilingual"
    with tempfile.TemporaryDirectory(prefix="codemap-decide-") as tmp:
        tmp = Path(tmp)
        english = english_loinc(tmp)
        shipped = ship(args.run, name, out_root=tmp / "shipped")
        base = resolve_model(BASES[args.alias])
        trained = str(materialise(shipped, base.path, tmp))
        cache = default_cache_dir()  # the base's index caches are reused across runs
        report = {"run": str(args.run), "alias": args.alias,
                  "checkpoint": json.loads((shipped / "codemap.json").read_text())["trained"]}
        report["dev"] = paired(encoder_hits(BASES[args.alias], sets, cache, english),
                               encoder_hits(trained, sets, cache, english))
        if args.final:
            report["fresh"] = paired(encoder_hits(BASES[args.alias], FRESH, cache, english),
                                     encoder_hits(trained, FRESH, cache, english))
            dev, fresh = report["dev"], report["fresh"]
            report["rule_holds"] = bool(dev["trained"] > dev["base"] and dev["p_one_sided"] < 0.05
                                        and fresh["trained"] >= fresh["base"])
            if report["rule_holds"]:
                ship(args.run, name, replaces=args.alias, evaluation=report)
    step = report["checkpoint"]["steps"]
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"{args.run.name}-step-{step}{'-final' if args.final else ''}.json"
    out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    for part in ("dev", "fresh"):
        if part in report:
            r = report[part]
            print(f"{part}: base {r['base']}/{r['queries']}, trained {r['trained']}/{r['queries']} "
                  f"(+{r['better']} −{r['worse']}, p = {r['p_one_sided']:.3g})")
    if args.final:
        print("rule holds: shipped as --model " + args.alias if report["rule_holds"] else "rule does not hold")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
