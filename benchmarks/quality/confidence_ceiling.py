"""How high can a LOINC confidence go when a quarter of the gold codes is removed?

    python benchmarks/quality/confidence_ceiling.py -o benchmarks/results/confidence/ceiling-2026-11-27.json

Each LOINC dev list is ranked and labelled as `codemap calibrate` does it (decide.calibrate.dev_list,
a quarter of the gold hidden before ranking), seeds 0, 1, 2, and its calibration cross-fitted on
the list itself (2 folds). The wrong top candidates are sorted by kind: a variant of the right
component (another property, specimen or method) while the right code is there; a variant of the
right component while the right code is hidden; another component. Then an oracle that knows,
from the gold, whether the top candidate names the right component is added to the confidence
(1 or 0, the confidence ordering within): the AUROC a calibrator would reach if it told right
components from wrong ones perfectly but variants no better than today. Decides nothing.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, stats

from pooled_calibration import FOLDS, SEEDS, lists  # noqa: E402
from sets import eval_config  # noqa: E402
from codemap.decide.calibrate import cross_fit, query_folds, top_auroc  # noqa: E402
from codemap.decide.confidence import candidate_features  # noqa: E402
from codemap.evaluate.gold import gold_queries  # noqa: E402
from codemap.domains.lab.loinc import concept_axes  # noqa: E402

LOINC_LISTS = ("labs_fluid", "german_labs", "labs_nofluid", "loinc_short")


def components(name: str) -> tuple[list[set[str]], dict[str, str]]:
    """Each query's gold codes and every target code's component, as the ranking reads it."""
    g = gold_queries(eval_config(name))
    return g.gold, {concept["code"]: concept_axes(concept).component
                    for concept in g.vocab.concepts.to_dict("records")}


def one_run(name: str, seed: int, gold: list[set[str]], component: dict[str, str]) -> dict:
    d = lists((name,), seed)[0]
    found, labels = d.dev.found, d.dev.labels
    folds = query_folds(d.dev.n_queries, FOLDS, seed)[found["query"].to_numpy()]
    conf = cross_fit(candidate_features(found), labels, folds, FOLDS)
    top = found["rank"].to_numpy() == 1
    right, conf_top = labels[top], conf[top]
    queries, codes = found["query"].to_numpy()[top], found["target_code"].to_numpy()[top]
    hidden = d.dev.missing[queries]
    same_component = np.array([component.get(c) in {component.get(g) for g in gold[q]}
                               for q, c in zip(queries, codes)])
    wrong = right == 0
    return {
        "queries": int(top.sum()),
        "top-1 right": int(right.sum()),
        "wrong: variant, right code there": int((wrong & same_component & ~hidden).sum()),
        "wrong: variant, right code hidden": int((wrong & same_component & hidden).sum()),
        "wrong: other component": int((wrong & ~same_component).sum()),
        "AUROC, calibrated (cross-fitted)": top_auroc(conf_top, right),
        "AUROC, + component oracle": top_auroc(conf_top + same_component, right),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    runs, summary = {}, {}
    for name in LOINC_LISTS:
        gold, component = components(name)
        runs[name] = [one_run(name, seed, gold, component) for seed in SEEDS]
        summary[name] = {key: round(float(np.mean([r[key] for r in runs[name]])), 3)
                         for key in runs[name][0]}
        print(name, json.dumps(summary[name]), flush=True)
    args.output.write_text(json.dumps({"summary": summary, "runs": runs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
