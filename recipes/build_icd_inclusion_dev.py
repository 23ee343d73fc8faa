"""Build the ICD-10-CM inclusion-term dev set for the trainer (README "Training a CODER model").

Queries are inclusion terms of ICD-10-CM codes (the `simple-icd-10-cm` package), drawn at random
(seed 0) among terms whose cleaned text is not the title of any code (a title match would be a
string lookup, not a test). The target is every code of the sampled terms' three-character
categories (category, subcategories, codes: the sibling codes are the hard distractors; not the
7th-character extensions "initial encounter"/"sequela", which would only repeat their parent), one
English title each. Train with `--kg icd10cm --holdout` this file so the queries never reach the
training names.

usage: python recipes/build_icd_inclusion_dev.py [N [SEED NAME]]   (default 400 0 dev)
writes benchmarks/data/icd10cm_inclusion_NAME.tsv (term, icd10cm_code) and
       benchmarks/data/icd10cm_inclusion_NAME_target.csv (code, name) — for the default NAME "dev"
       the target keeps its first name, icd10cm_inclusion_target.csv.
A NAME other than "dev" is a fresh confirmation set: its terms are drawn (with SEED) among the
candidates not already in the dev set, so a configuration tuned on the dev set can be confirmed
on queries nobody has looked at.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import simple_icd_10_cm as icd

from codemap.train.kg import clean_name

OUT = Path(__file__).resolve().parents[1] / "benchmarks" / "data"


def main(n: int = 400, seed: int = 0, name: str = "dev") -> None:
    codes = [c for c in icd.get_all_codes(True) if not icd.is_chapter_or_block(c)]
    titles = {clean_name(icd.get_description(c)) for c in codes}
    pairs = [(term, code) for code in codes for term in icd.get_inclusion_term(code)
             if clean_name(term) not in titles]
    frame = pd.DataFrame(pairs, columns=["term", "icd10cm_code"])
    # a term listed under two codes has no single answer
    frame = frame[~frame["term"].map(clean_name).duplicated(keep=False)]
    if name != "dev":  # a confirmation set never repeats a dev query
        seen = pd.read_csv(OUT / "icd10cm_inclusion_dev.tsv", sep="\t")["term"].map(clean_name)
        frame = frame[~frame["term"].map(clean_name).isin(set(seen))]
    dev = frame.iloc[np.random.default_rng(seed).choice(len(frame), size=n, replace=False)]
    dev = dev.sort_values("icd10cm_code", kind="stable")  # ties keep the sampled order: rebuilds match
    categories = sorted({code[:3] for code in dev["icd10cm_code"]})
    target = [(c, icd.get_description(c)) for cat in categories
              for c in [cat, *icd.get_descendants(cat)] if not icd.is_extended_subcategory(c)]
    OUT.mkdir(exist_ok=True)
    target_file = "icd10cm_inclusion_target.csv" if name == "dev" else f"icd10cm_inclusion_{name}_target.csv"
    dev.to_csv(OUT / f"icd10cm_inclusion_{name}.tsv", sep="\t", index=False)
    pd.DataFrame(target, columns=["code", "name"]).to_csv(OUT / target_file, index=False)
    print(f"{len(dev)} dev terms of {len(frame)} candidates, {len(target)} target codes "
          f"in {len(categories)} categories")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(int(args[0]) if args else 400, *([int(args[1]), args[2]] if len(args) > 2 else []))
