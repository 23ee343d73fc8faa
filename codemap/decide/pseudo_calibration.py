"""A calibrated confidence for any target: the dev-fitted calibrator's model, fitted instead on
pseudo-queries drawn from the target itself.

codemap ships calibrations fitted on dev gold pairs for the default model on LOINC and drug
targets (codemap.decide.calibrate). A SNOMED, ICD, HPO or user table, or another model, has no
dev pairs, and before this had no `confidence` column at all. Here the same logistic model over
the same candidate features (codemap.decide.confidence.FEATURES) is fitted on pseudo-queries of
the target (codemap.rank.pseudo_queries: another name of a concept, or a noised name, that name
hidden; a quarter of them with every name of their concept hidden, so the right answer is absent,
as for local terms with no standard code), ranked exactly as `codemap map` ranks. Its precision
curve and no-match threshold are cross-fitted on the same pseudo-queries (2 folds). Pseudo-queries
are not real lists, so this confidence is a weaker guide than a dev-fitted one (measured in
docs/decision-support.md); the run sheet says which one a run used.

The fit is cached with the index, keyed by the vocabulary, the model and the ranking.
"""
from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path

from ..config import RankConfig
from ..errors import CodemapError
from ..files import build_once, sha256_text
from ..rank.hubness import embedded_hubness
from ..rank.hybrid import rank_hybrid
from ..rank.learned import Target, labelled, pseudo_batch
from ..rank.prepare import with_readings
from ..rank.pseudo_queries import GENERATION, draw, make_absent
from .calibrate import (cross_fit, fit_logistic, no_match_threshold, precision_curve, query_folds,
                        top_auroc)
from .confidence import FEATURES, Calibrator, candidate_features

log = logging.getLogger(__name__)

QUERIES = 2000  # pseudo-queries drawn (fewer for a smaller vocabulary): a fit takes seconds
ABSENT_SHARE = 0.25  # of them with their concept hidden: no right answer in the target
FOLDS = 2
SEED = 0
PSEUDO_FIT = 17  # bumped when the fitting or the lab evidence changes: cached fits are then redone
# (7: thresholds with a margin; 8: a stated specimen lowers its less usual variants; 9: "time"
# and "type" in a row's text state no property, and a stated subpart binds; 10: a written
# variant word binds, "level" reads as an amount, British spellings state their specimen;
# 11: hours after something state a challenge's hours; 12: a run-together alias, "TnT", read;
# 13: a German keyword of an analyte alone stays off a subpart's codes; 14: the total of an
# analyte is the analyte, and a German related name owned by another test's short name leaves;
# 15: a stated serum or plasma is no whole blood)
NOT_TRANSFERRED = ("encoder_score", "lexical_score", "evidence_unconfirmed")


def pseudo_calibrator(target: Target, scorers, rank: RankConfig, readings, domain: str,
                      ranking: str) -> Calibrator:
    """The target's pseudo-query calibrator for this model and ranking, from the cache or fitted
    and cached. `readings` (a codemap.rank.assembly.Ranking) prepares texts and reads them a second
    time as the run does its rows."""
    path = _cache_file(target, ranking, rank.top_k)

    def cached() -> Calibrator | None:
        if path.is_file():
            try:
                return Calibrator.load(path)
            except CodemapError:  # a stale or damaged cache file is refitted, never fatal
                log.info("refitting the pseudo-query calibration (%s unreadable)", path)
        return None

    def fit() -> Calibrator:
        calibrator = fit_pseudo_calibrator(target, scorers, rank, readings, domain, ranking)
        calibrator.save(path)
        return calibrator

    return build_once(path, cached, fit, f"fitting the confidence of {target.vocab.id}")


def fit_pseudo_calibrator(target: Target, scorers, rank: RankConfig, readings, domain: str,
                          ranking: str) -> Calibrator:
    clock = time.perf_counter()
    vocab = target.vocab
    log.info("fitting a confidence calibration on pseudo-queries of %s", vocab.id)
    drawn = make_absent(draw(vocab, QUERIES, SEED), vocab, ABSENT_SHARE, SEED + 1)
    drawn = [replace(p, text=readings.prepare(p.text)) for p in drawn]
    queries = pseudo_batch(target, drawn, None)
    # Read as a mapped list's rows are: with their abbreviations' second reading.
    queries.rows = with_readings(queries.rows, [r["text"] for r in queries.rows],
                                 readings.reader, lambda texts: target.encoder.encode(
                                     texts, progress=False, desc="embedding second readings"))
    hub = (embedded_hubness(target.index, vocab, [r["text"] for r in queries.rows], queries.vectors)
           if rank.hubness and rank.method != "lexical" else None)  # the pseudo-queries are the list
    found = rank_hybrid(target.index, target.lexical, vocab, queries.vectors, queries.rows,
                        scorers, rank, queries.hidden, hub=hub)
    labels = labelled(found, queries.gold)
    features = candidate_features(found)
    # A pseudo-query is a name of the target, lightly changed: its raw encoder and lexical scores
    # run far higher than a real local term's, so a model leaning on them misreads real lists
    # (docs/experiments/2026-11-24-learned-ranker.md). Zeroed, they get no weight; the fused
    # score, margins and evidence carry the fit. So is unconfirmed evidence: pseudo-queries are
    # drawn evenly from the target, rare tests as often as common ones, so a prior means
    # something else on them (a LOINC target's AUROC on real lists fell 0.66 -> 0.56 with it:
    # docs/experiments/2026-11-27-unconfirmed-lab-priors.md).
    features[:, [FEATURES.index(f) for f in NOT_TRANSFERRED]] = 0.0
    asked = found["query"].to_numpy()
    folds = query_folds(len(drawn), FOLDS, SEED)
    oof = cross_fit(features, labels, folds[asked], FOLDS)
    top = found["rank"].to_numpy() == 1
    absent = sum(p.absent for p in drawn)
    return Calibrator(
        model=target.encoder.info.id, domain=domain, ranking=ranking,
        precision_curve=precision_curve(oof[top], labels[top]),
        no_match_below=no_match_threshold(oof[top], labels[top]),
        fitted_on={"gold": f"{len(drawn)} pseudo-queries of the target ({absent} absent)",
                   "pseudo_queries": True,
                   "target": f"{vocab.id} {vocab.version}", "queries": len(drawn),
                   "candidates": len(found), "missing_share": ABSENT_SHARE, "folds": FOLDS,
                   "seed": SEED, "fit_seconds": round(time.perf_counter() - clock, 1)},
        metrics={"top1_correct": round(float(labels[top].mean()), 4) if top.any() else None,
                 "auroc_top1": top_auroc(oof[top], labels[top])},
        **fit_logistic(features, labels))


def _cache_file(target: Target, ranking: str, top_k: int) -> Path:
    encoder = target.encoder
    key = sha256_text(str(PSEUDO_FIT), str(GENERATION), target.vocab.typed_hash,
                      encoder.info.fingerprint(), encoder.variant, ranking,
                      str(top_k))[:24]
    return Path(target.cache_dir) / "calibration" / f"{target.vocab.id}-{key}.json"


def any_calibrator(target: Target, scorers, rank: RankConfig, readings, domain: str,
                   ranking: str, shipped: tuple) -> tuple:
    """`shipped` (codemap.decide.confidence.choose_calibrator's (calibrator, line)) when it found
    one, else the pseudo-query calibrator and its run-sheet line."""
    if shipped[0] is not None or target.cache_dir is None:
        return shipped
    calibrator = pseudo_calibrator(target, scorers, rank, readings, domain, ranking)
    auroc = calibrator.metrics.get("auroc_top1")
    return calibrator, (f"fitted on {calibrator.fitted_on['gold']}, no dev pairs (pseudo-query "
                        f"AUROC {auroc}); a dev-fitted one is better: `codemap calibrate`")
