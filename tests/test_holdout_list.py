"""benchmarks/data/holdout_queries.txt names every evaluation query file with readable text
columns, and the dev and fresh parts of each new set share no query."""
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).parents[1]
LISTED = [line.split("\t") for line in
          (REPO / "benchmarks/data/holdout_queries.txt").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("path,cols", LISTED, ids=[p for p, _ in LISTED])
def test_listed_file_has_its_text_columns(path, cols):
    frame = pd.read_csv(REPO / path, sep=None, engine="python", dtype=str)
    assert set(cols.split(",")) <= set(frame.columns)
    assert len(frame) > 0


@pytest.mark.parametrize("stem,col", [("hpo_lay", "lay_phrase"), ("icd10pcs_short", "short_name"),
                                      ("mimic_labs_nofluid", "label"),
                                      ("ohdsi_mimic_drugs", "local_drug_string"),
                                      ("german_lab_labels", "label"), ("icd10_ja", "name")])
def test_dev_and_fresh_are_disjoint_and_listed(stem, col):
    parts = {}
    for name in ("dev", "fresh"):
        path = f"benchmarks/data/{stem}_{name}.tsv"
        assert [path, col] in LISTED
        parts[name] = set(pd.read_csv(REPO / path, sep="\t", dtype=str)[col].str.casefold())
    assert parts["dev"] and parts["fresh"] and not parts["dev"] & parts["fresh"]
