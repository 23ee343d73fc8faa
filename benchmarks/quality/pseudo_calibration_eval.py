"""AUROC of the pseudo-query calibration (codemap.decide.pseudo_calibration) on real dev/fresh
sets with a quarter of the gold codes removed from the target: the raw top score, the calibration
with every feature, and the shipped one (raw encoder and lexical scores zeroed); for a target
with a dev-fitted calibration shipped (LOINC, drugs), that one too.

    python benchmarks/quality/pseudo_calibration_eval.py hpo_lay,pcs_short,icd_inclusion
    python benchmarks/quality/pseudo_calibration_eval.py hpo_lay_fresh,pcs_short_fresh,icd_inclusion_confirm

Set names: benchmarks/quality/fusion_sweep.py (SETS, FRESH). Results: docs/decision-support.md.
"""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, stats

import fusion_sweep  # noqa: E402  (the set list)
from sets import eval_config  # noqa: E402
from codemap.decide import pseudo_calibration  # noqa: E402
from codemap.decide.confidence import choose_calibrator, ranking_key  # noqa: E402
from codemap.decide.learned_eval import auroc, learned_target, top_confidence  # noqa: E402
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods, gold_queries  # noqa: E402
from codemap.evaluate.metrics import gold_ranks  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: usage
from usage import positional  # noqa: E402

ARGS = positional(__doc__, 1)


SETS = {**fusion_sweep.SETS, **fusion_sweep.FRESH}


def measure(name: str) -> dict:
    g = gold_queries(replace(eval_config(name), drop_gold_share=0.25))
    drugs = g.kind == "drug"
    default = eval_methods(g.base, drugs=drugs)[DEFAULT_METHOD[drugs]]
    found = g.rank(default)
    ranks = gold_ranks(found, g.gold)
    tgt = learned_target(g)
    scorers = g.ranking_for(g.base).scorers
    out = {"raw top score": auroc(top_confidence(found, len(g.gold), "score"), ranks)}
    shipped = pseudo_calibration.NOT_TRANSFERRED
    for label, zeroed in (("all features", ()), ("shipped", shipped)):
        pseudo_calibration.NOT_TRANSFERRED = zeroed
        calibrator = pseudo_calibration.fit_pseudo_calibrator(
            tgt, scorers, g.base, g.ranking_for(g.base), g.kind, "-")
        scored = found.assign(confidence=calibrator.predict(found))
        out[label] = auroc(top_confidence(scored, len(g.gold), "confidence"), ranks)
        out[f"{label} (on pseudo-queries)"] = calibrator.metrics["auroc_top1"]
    pseudo_calibration.NOT_TRANSFERRED = shipped
    dev_fitted, _ = choose_calibrator(None, g.encoder.info.key(), g.kind,
                                      ranking_key(g.base, scorers))
    if dev_fitted is not None:
        scored = found.assign(confidence=dev_fitted.predict(found))
        out["dev-fitted"] = auroc(top_confidence(scored, len(g.gold), "confidence"), ranks)
    return out


if __name__ == "__main__":
    for set_name in ARGS[0].split(","):
        print(set_name, {k: v if v is None else round(v, 3) for k, v in measure(set_name).items()},
              flush=True)
