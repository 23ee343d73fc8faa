"""`codemap eval`'s row for the learned ranking (opt-in in `codemap map`), measured out of sample,
and the AUROC of each row's confidence.

Fitted on pseudo-queries only, the learned ranker never sees a dev pair: the plain eval is
already out of sample. With `--folds K` it is also fitted on dev pairs, K times: on the other
folds' pairs plus the pseudo-queries, scoring the held-out fold; the folds' results are pooled.

Confidence AUROC: how well the top candidate's confidence separates "right" from "wrong or no
right answer in the target"; the learned row reads its calibrated confidence, the other rows
their raw top score; the default ranking's calibrated confidence (what `codemap map` writes:
shipped calibration or the target's pseudo-query one) is reported on its own line. With `--drop-gold-share S` (codemap.evaluate.gold.dropped_codes) the removed
concepts are hidden from the pseudo-queries too.

The learned row needs the ranker's confidence, a decision: it is added here, after evaluation,
as `codemap calibrate` measures its calibrator here.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..config import EvalConfig, MapConfig
from ..evaluate.gold import GoldQueries, gold_queries, hidden_rows, rank_gold, text_key
from ..evaluate.metrics import gold_ranks, score_ranks
from ..rank.learned import FitConfig, Queries, Target, pool
from ..read.language import names_language
from .confidence import choose_calibrator, ranking_key
from .calibrate import top_auroc
from .learned import LearnedRanker, fit, load_or_fit
from .pseudo_calibration import any_calibrator
from .triage import preapproval_precision

LEARNED_METHOD = "learned (opt-in)"


def evaluate_with_learned(config: EvalConfig) -> dict:
    """codemap.evaluate.gold.evaluate_gold's report plus, for the hybrid ranking, the learned row
    and every compared row's confidence AUROC."""
    g = gold_queries(config)
    report, compared = rank_gold(g)
    if g.base.method == "hybrid":
        scorers = g.ranking_for(g.base).scorers
        add_learned(report, g, scorers, config.folds, config.seed, g.excluded, compared)
        add_default_confidence(report, g, scorers, compared[report["default_method"]])
    return report


def add_default_confidence(report: dict, g: GoldQueries, scorers, found: pd.DataFrame) -> dict:
    """The AUROC of the confidence `codemap map` writes for the default ranking: the shipped
    calibration when one matches, else the target's pseudo-query calibration."""
    target = learned_target(g)
    domain, ranking = g.kind, ranking_key(g.base, scorers)
    calibrator, line = any_calibrator(target, scorers, g.base, g.ranking_for(g.base),
                                      domain, ranking,
                                      choose_calibrator(None, g.encoder.info.key(), domain, ranking))
    if calibrator is not None:
        confidence = found.assign(confidence=calibrator.predict(found))
        top = top_confidence(confidence, len(g.gold), "confidence")
        ranks = report["ranks"][report["default_method"]]
        report["default_confidence"] = {
            "auroc": auroc(top, ranks), "calibration": line,
            **suggested_shares(calibrator, top, np.array([r == 1 for r in ranks], bool))}
    return report


def suggested_shares(calibrator, top: np.ndarray, right: np.ndarray) -> dict:
    """What `codemap map` would suggest from each row's top confidence `top`, read against
    whether its first candidate is `right`: the share of rows suggested `pre-approve` (at the
    threshold map uses, decide.triage.preapproval_precision) with their precision, and the share
    suggested `no_match` whose first candidate is right (issue #52 counts both)."""
    precision = preapproval_precision(calibrator, MapConfig.suggest_at)
    threshold = None if precision is None else calibrator.threshold_for(precision)
    picked = top >= threshold if threshold is not None else np.zeros(len(top), bool)
    no_match = top < calibrator.no_match_below
    n = max(len(top), 1)
    return {"suggest_at": MapConfig.suggest_at, "threshold": threshold,
            "preapproved_share": float(picked.sum() / n),
            "preapproved_precision": float(right[picked].mean()) if picked.any() else None,
            "no_match_share": float(no_match.sum() / n),
            "no_match_right_share": float((no_match & right).sum() / n)}


def learned_target(g: GoldQueries) -> Target:
    """The target of a GoldQueries' prepared ranking (the default ranking's texts)."""
    ranking = g.ranking_for(g.base)
    names = ranking.vocab.names
    lang = names_language(names["name"].tolist(), names["lang"].tolist())
    return Target(ranking.vocab, g.encoder, ranking.index, ranking.lexical, lang,
                  g.config.cache_dir)


def learned_rows(g: GoldQueries, scorers, folds: int, seed: int, excluded: frozenset,
                 fit_config: FitConfig = FitConfig()) -> tuple[pd.DataFrame, str, LearnedRanker]:
    """The learned ranking's candidates for every gold query (with `confidence`), a line saying how
    it was fitted, and the (last) ranker."""
    target = learned_target(g)
    _, vectors, rows = g.prepared[text_key(g.base)]
    lang = g.language.lang if g.language.method != "uncertain" else ""
    queries = Queries(rows, vectors, hidden_rows(target.vocab, excluded, len(rows)), g.gold,
                      [lang] * len(rows))
    table = pool(target, queries, scorers, g.base)
    if folds < 2:
        ranker = load_or_fit(target, scorers, g.base, fit_config, excluded)
        return (ranker.rank(table, g.base.top_k),
                f"{LEARNED_METHOD}: fitted on pseudo-queries from the target only, no dev pair: "
                f"out of sample as it stands", ranker)
    fold_of = np.random.default_rng(seed + 1).permutation(np.arange(len(rows)) % folds)
    parts = []
    for f in range(folds):
        train = np.flatnonzero(fold_of != f)
        dev = (_subset(queries, train), table[table["query"].isin(train)])
        ranker = fit(target, scorers, g.base, fit_config, dev=dev, excluded=excluded)
        held = table[table["query"].isin(np.flatnonzero(fold_of == f))]
        parts.append(ranker.rank(held, g.base.top_k))
    return (pd.concat(parts, ignore_index=True),
            f"{LEARNED_METHOD}: {folds}-fold cross-validation: fitted on pseudo-queries + the "
            f"other folds' dev pairs, scored on the held-out fold, pooled", ranker)


def _subset(queries: Queries, keep: np.ndarray) -> Queries:
    """The queries' labels for the `keep` rows only (others get no right code: never fitted on)."""
    kept = set(keep.tolist())
    gold = [queries.gold[i] if i in kept else set() for i in range(len(queries.rows))]
    return replace(queries, gold=gold)


def top_confidence(found: pd.DataFrame, n: int, column: str) -> np.ndarray:
    """Each query's top candidate's `column` (0 for a query without candidates)."""
    top = found[found["rank"] == 1]
    out = np.zeros(n)
    out[top["query"].to_numpy()] = pd.to_numeric(top[column]).to_numpy(float)
    return out


def auroc(confidence: np.ndarray, ranks: list) -> float | None:
    """AUROC of the top confidence for "top candidate right" vs "wrong or gold absent"."""
    return top_auroc(confidence, np.array([r == 1 for r in ranks], float))


def add_learned(report: dict, g: GoldQueries, scorers, folds: int, seed: int, excluded: frozenset,
                old_found: dict) -> dict:
    """Add the learned row (scores, ranks) and every compared row's confidence AUROC to an eval
    report; `old_found` holds the other rows' candidate frames by method."""
    found, how, ranker = learned_rows(g, scorers, folds, seed, excluded)
    ranks = gold_ranks(found, g.gold)
    report["scores"][LEARNED_METHOD] = score_ranks(ranks)
    report["ranks"][LEARNED_METHOD] = ranks
    n = len(g.gold)
    aurocs = {method: auroc(top_confidence(frame, n, "score"), report["ranks"][method])
              for method, frame in old_found.items()}
    aurocs[LEARNED_METHOD] = auroc(top_confidence(found, n, "confidence"), ranks)
    report["auroc"] = aurocs
    report["learned"] = how
    report["learned_fit"] = ranker.fitted_on
    return report
