"""Build dev/fresh splits of two real local lists: MIMIC lab labels without their fluid column and
the OHDSI MIMIC drug strings.

- Labs: tests/data/mimic_labs_gold.tsv (MIMIC-IV demo `d_labitems` → LOINC, ODbL) reduced to the
  label text and its gold LOINC code (no itemid, fluid or category: a list that names only the
  test), keeping rows whose code is in the built-in LOINC subset (`--target LOINC`); 60 % dev,
  40 % fresh by a seeded hash of the label.
- Drugs: tests/data/ohdsi-mimic-drugs/dev_local_drug_to_concept.tsv (Apache-2.0), same columns,
  70 % dev, 30 % fresh by a seeded hash of the lower-cased drug string (strings differing only
  in case fall in the same part).

The split key of each row is hashed (sha256 of "SEED:text"); the keys are sorted by hash and the
first DEV_SHARE of them (rounded) make the dev part, so the shares are exact and the split does not
depend on row order. Rows keep their source order.

usage: python recipes/build_list_splits.py [SEED]   (default 0)
writes benchmarks/data/mimic_labs_nofluid_{dev,fresh}.tsv (label, loinc_code),
       benchmarks/data/mimic_labs_fluid_dev.tsv (every column of the gold file, its rows whose
       label is not in the fresh part: what the shipped lab calibration is fitted on),
       benchmarks/data/mimic_labs_fluid_fresh.tsv (the fresh labels' rows with every column) and
       benchmarks/data/ohdsi_mimic_drugs_{dev,fresh}.tsv (local_drug_string, target_concept_id,
       target_name)
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pandas as pd

from codemap.vocab import builtin_loinc

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "data"


def seeded_hash(text: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}:{text}".encode("utf-8")).hexdigest()


def write_split(frame: pd.DataFrame, key: pd.Series, seed: int, dev_share: float, stem: str) -> set:
    """Writes STEM_dev.tsv and STEM_fresh.tsv; returns the dev part's keys."""
    keys = sorted(set(key), key=lambda text: (seeded_hash(text, seed), text))
    dev_keys = set(keys[:round(dev_share * len(keys))])
    dev = key.isin(dev_keys)
    for name, part in (("dev", frame[dev]), ("fresh", frame[~dev])):
        part.to_csv(OUT / f"{stem}_{name}.tsv", sep="\t", index=False, lineterminator="\n")
    print(f"{stem}: {int(dev.sum())} dev + {int((~dev).sum())} fresh of {len(frame)} rows")
    return dev_keys


def main(seed: int = 0) -> None:
    OUT.mkdir(exist_ok=True)
    labs = pd.read_csv(ROOT / "tests/data/mimic_labs_gold.tsv", sep="\t", dtype=str)
    labs = labs[labs["loinc_code"].isin(set(builtin_loinc().concepts["code"]))][["label", "loinc_code"]]
    labs = labs.drop_duplicates()
    if labs["label"].duplicated().any():  # without the fluid a label must still have one answer
        raise SystemExit("a label has two gold codes without its fluid")
    dev_labels = write_split(labs, labs["label"], seed, 0.6, "mimic_labs_nofluid")
    # The whole gold file (fluid, category, codes outside the subset) less every label of the
    # fresh part: what a calibration may be fitted on without touching the fresh rows.
    gold = pd.read_csv(ROOT / "tests/data/mimic_labs_gold.tsv", sep="\t", dtype=str)
    fresh_labels = set(labs["label"]) - dev_labels
    kept = gold[~gold["label"].isin(fresh_labels)]
    kept.to_csv(OUT / "mimic_labs_fluid_dev.tsv", sep="\t", index=False, lineterminator="\n")
    print(f"mimic_labs_fluid_dev: {len(kept)} of {len(gold)} rows (fresh labels left out)")
    # The fresh labels with their fluid and category, whose code is in the subset: the fresh
    # part as a list with a specimen column has it (read first on 2026-11-29, issue #52).
    fresh = gold[gold["label"].isin(fresh_labels) & gold["loinc_code"].isin(set(labs["loinc_code"]))]
    fresh.to_csv(OUT / "mimic_labs_fluid_fresh.tsv", sep="\t", index=False, lineterminator="\n")
    print(f"mimic_labs_fluid_fresh: {len(fresh)} rows")
    drugs = pd.read_csv(ROOT / "tests/data/ohdsi-mimic-drugs/dev_local_drug_to_concept.tsv",
                        sep="\t", dtype=str, keep_default_na=False)
    write_split(drugs, drugs["local_drug_string"].str.strip().str.lower(), seed, 0.7, "ohdsi_mimic_drugs")


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:]])
