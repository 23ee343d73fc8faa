"""Build the ICD-10-CM inclusion-term dev set for the trainer (README "Training a CODER model").

Queries are inclusion terms of ICD-10-CM codes (the `simple-icd-10-cm` package), drawn at random
(seed 0) among terms whose cleaned text is not the title of any code (a title match would be a
string lookup, not a test). The target is every code of the sampled terms' three-character
categories (category, subcategories, codes: the sibling codes are the hard distractors; not the
7th-character extensions "initial encounter"/"sequela", which would only repeat their parent), one
English title each. Train with `--kg icd10cm --holdout` this file so the queries never reach the
training names.

usage: python benchmarks/build_icd_inclusion_dev.py [N]   (default 400)
writes benchmarks/data/icd10cm_inclusion_dev.tsv (term, icd10cm_code) and
       benchmarks/data/icd10cm_inclusion_target.csv (code, name)
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import simple_icd_10_cm as icd

from codemap.train.kg import clean_name

OUT = Path(__file__).parent / "data"


def main(n: int = 400) -> None:
    codes = [c for c in icd.get_all_codes(True) if not icd.is_chapter_or_block(c)]
    titles = {clean_name(icd.get_description(c)) for c in codes}
    pairs = [(term, code) for code in codes for term in icd.get_inclusion_term(code)
             if clean_name(term) not in titles]
    frame = pd.DataFrame(pairs, columns=["term", "icd10cm_code"])
    # a term listed under two codes has no single answer
    frame = frame[~frame["term"].map(clean_name).duplicated(keep=False)]
    dev = frame.iloc[np.random.default_rng(0).choice(len(frame), size=n, replace=False)]
    dev = dev.sort_values("icd10cm_code")
    categories = sorted({code[:3] for code in dev["icd10cm_code"]})
    target = [(c, icd.get_description(c)) for cat in categories
              for c in [cat, *icd.get_descendants(cat)] if not icd.is_extended_subcategory(c)]
    OUT.mkdir(exist_ok=True)
    dev.to_csv(OUT / "icd10cm_inclusion_dev.tsv", sep="\t", index=False)
    pd.DataFrame(target, columns=["code", "name"]).to_csv(OUT / "icd10cm_inclusion_target.csv", index=False)
    print(f"{len(dev)} dev terms of {len(frame)} candidates, {len(target)} target codes "
          f"in {len(categories)} categories")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 400)
