"""Would a lab calibration fitted on every kind of label list at hand pre-approve rows of a kind
it never saw? Decides nothing (issue #52's lab pre-approval; the finding is in
docs/experiments/2026-11-30-spellings-and-analytes.md).

    python benchmarks/quality/pooled_lab_kinds.py OUT.json

Each lab list of KINDS is ranked as `codemap calibrate` ranks it (decide.calibrate.dev_list: a
quarter of its gold hidden, seed 0) and, for scoring, with every gold in the target. Each list in
turn is held out: the calibration is fitted on the others pooled, its 95 % threshold read from
their leave-one-list-out curve as `codemap calibrate` reads it (a one-sided 95 % lower bound over
at least 10 queries), and the held-out list scored: AUROC of the first candidate, share
pre-approved and its precision. Beside it, the same for the two lists the shipped calibration is
fitted on alone ("shipped pool": in sample for those two). For the pooled fit also its most
confident first candidates on the held-out list (every gold in the target), and for the wrong
ones whether the right code names the same analyte. Every list here has been read
before; the figures are out of sample only for the held-out list, and not wholly for the MIMIC and
German labels, which name the same codes in two languages.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/quality: settled_share_kinds
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: usage

import numpy as np  # noqa: E402

import settled_share_kinds as kinds  # noqa: E402  (ranked, fitted, scored: as calibrate does)
from usage import positional  # noqa: E402
from codemap.decide.confidence import FEATURES  # noqa: E402
from codemap.domains.lab import component_from_name  # noqa: E402

ARGS = positional(__doc__, 1)
KINDS = ("labs_fluid", "german_labs", "loinc_short", "amsterdam_dev", "clinosim_aliases",
         "labunits", "taiwan_aliases", "hospital_labels_de", "stated_specimen_en")
SEED = 0
COLS = list(range(len(FEATURES)))
MOST_SURE = 15  # first candidates read per held-out list, the most confident first


def most_sure(d, fit: dict) -> list[dict]:
    """The held-out list's MOST_SURE most confident first candidates: right or not, and for a
    wrong one whether its right code (among the row's candidates) names the same analyte, a
    variant the row did not tell apart (mass or moles, another system or method), or another."""
    found = d.dev.found.reset_index(drop=True)
    conf = kinds.confidences(d, fit, COLS)
    labels = d.dev.labels
    rows = []
    for i in np.flatnonzero(found["rank"].to_numpy() == 1):
        query = found.at[i, "query"]
        mine = np.flatnonzero((found["query"] == query).to_numpy() & (labels == 1))
        right = str(found.at[mine[0], "target_name"]) if len(mine) else ""
        top = str(found.at[i, "target_name"])
        rows.append({"confidence": round(float(conf[i]), 4), "right": bool(labels[i]),
                     "first": top, "gold": right,
                     "same_analyte": bool(right) and component_from_name(right).lower()
                     == component_from_name(top).lower()})
    rows.sort(key=lambda r: -r["confidence"])
    return rows[:MOST_SURE]


def main(out: Path) -> None:
    hidden = {name: kinds.ranked(name, SEED) for name in KINDS}
    whole = {name: kinds.ranked(name, SEED, 0.0) for name in KINDS}
    shipped_fit, shipped_threshold = kinds.fitted([hidden[n] for n in kinds.SHIPPED], COLS, SEED)
    result = {}
    for name in KINDS:
        others = [hidden[n] for n in KINDS if n != name]
        fit, threshold = kinds.fitted(others, COLS, SEED)
        result[name] = {
            "pooled": {"threshold_95": threshold,
                       "quarter hidden": kinds.scored(hidden[name], fit, COLS, threshold),
                       "every gold": kinds.scored(whole[name], fit, COLS, threshold),
                       "most sure, every gold": most_sure(whole[name], fit)},
            "shipped pool": {"threshold_95": shipped_threshold,
                             "every gold": kinds.scored(whole[name], shipped_fit, COLS,
                                                        shipped_threshold)}}
        print(name, json.dumps(result[name]), flush=True)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(ARGS[0]))
