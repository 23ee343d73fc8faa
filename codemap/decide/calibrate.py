"""`codemap calibrate`: fit a Calibrator on dev gold pairs and measure it honestly.

Real code lists hold terms with no right target (local panels, admin items, retired tests), so
the dev set is made to hold some too: for a random share of the queries (default 30%) every gold
concept is hidden from that query's ranking, as if the target lacked it (only the lexical
index's IDF weights, fitted on the whole vocabulary, still count it); with it, every concept
the target's domain says a vocabulary carries or lacks together (a drug's other levels and
brands: a drug list's unmappable row is a drug the target lacks, not one level of a drug it has;
benchmarks/results/missing-drugs/RULE.md). Hidden before ranking, not
removed from the ranked candidates after: a sibling that the row does not tell apart from the
gold concept would otherwise keep the gold's name score (codemap.rank.hybrid), and with it a
confidence it never has when the code is really absent. Hiding a concept from every query would
also hide it from other queries sharing that gold code, and the share of missing queries would
no longer be the one asked for.

Every figure is cross-fitted: the queries are split into folds, a calibrator is fitted on all
folds but one and scores the held-out one. With several lists, each list is a fold (leave one
list out): every figure, the pre-approval threshold included, is then measured on a kind of
list the calibrator was not fitted on. ECE (expected calibration error, 10 equal-width bins)
is measured on every candidate and on the top candidates; AUROC says how well the top candidate's
confidence separates right from wrong or missing; the precision-coverage curve gives the share
of queries whose top candidate can be pre-approved at a precision (the threshold chosen on the
fitting folds, the precision and coverage measured on the held-out fold).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .. import __version__
from ..config import EvalConfig
from ..errors import CodemapError
from ..files import atomic_path
from ..rank.candidates import candidate_features, capped, threshold_at
from .confidence import Calibrator, logistic, ranking_key

log = logging.getLogger(__name__)

PRECISIONS = (0.9, 0.95, 0.98, 0.99)
NO_MATCH_PRECISION = 0.9  # share of no_match suggestions whose top candidate is indeed not right
BINS = 10


@dataclass(frozen=True)
class CalibrateConfig:
    """One `codemap calibrate` run: one or more dev lists against the same target and model."""

    golds: tuple[EvalConfig, ...]
    output: Path
    missing_share: float = 0.3  # queries whose gold concepts are removed from the dictionary
    folds: int = 2
    seed: int = 0
    plot: Path | None = None  # reliability diagram and precision-coverage curve (PNG)


@dataclass
class DevSet:
    """Candidates of the dev queries (gold hidden for the `missing` ones) and their labels."""

    found: pd.DataFrame  # rank_hybrid's frame, top_k per query
    labels: np.ndarray  # 1 where the candidate is a gold code
    missing: np.ndarray  # per query: its gold was hidden
    n_queries: int


@dataclass
class DevList:
    """One dev list, ranked and labelled, with what its calibrator would be keyed by."""

    name: str
    dev: DevSet
    model: str
    domain: str
    ranking: str
    target: str


def calibrate(config: CalibrateConfig) -> tuple[Calibrator, dict]:
    """Fit, cross-fit and save a calibrator; returns it and its report (also in its metrics).

    Several dev lists are pooled, each weighing the same in the fit whatever its length: one
    list teaches the weight of whatever evidence its columns happen to carry, and a lab
    calibration fitted on the MIMIC labels and the German lab labels together separates right
    from wrong better on lists it never saw (benchmarks/results/confidence/RULE-pooled-lab.md).
    """
    lists = [dev_list(gold, config) for gold in config.golds]
    first = lists[0]
    for other in lists[1:]:
        if (other.model, other.domain, other.ranking) != (first.model, first.domain, first.ranking):
            raise CodemapError(f"{other.name}: ranked as {other.domain} target with {other.ranking!r}, "
                               f"but {first.name} as {first.domain} with {first.ranking!r}; "
                               f"calibrate lists that are ranked alike together")
    dev, weights, folds, features, oof = cross_fitted(lists, config.folds, config.seed)
    report = measure(dev, oof, folds)
    report["per_list_auroc_top1"] = per_list_auroc(lists, oof)
    fitted = fit_logistic(features, dev.labels, weights)
    top = dev.found["rank"].to_numpy() == 1
    calibrator = Calibrator(
        model=first.model, domain=first.domain, ranking=first.ranking,
        precision_curve=precision_curve(oof[top], dev.labels[top]),
        fitted_on={"gold": " + ".join(d.name for d in lists), "gold_col": config.golds[0].gold_col,
                   "target": first.target, "queries": dev.n_queries,
                   "candidates": len(dev.found), "missing_share": config.missing_share,
                   "folds": "one per list" if len(lists) > 1 else config.folds,
                   "seed": config.seed, "codemap_version": __version__},
        no_match_below=report["no_match_below"],
        metrics={k: v for k, v in report.items() if k not in ("curve", "bins")},
        **fitted)
    report["coefficients"] = dict(zip(calibrator.features, calibrator.coef))
    calibrator.save(config.output)
    if config.plot is not None:
        plot_reliability(report, config.plot, f"{calibrator.fitted_on['gold']} → {first.target}, "
                                              f"model {config.golds[0].encoder.model}")
    return calibrator, report


def dev_list(gold: EvalConfig, config: CalibrateConfig) -> DevList:
    """One gold file ranked as `codemap eval` ranks it, the missing queries' gold codes hidden."""
    from ..evaluate.gold import gold_queries  # fitting only: `codemap map` never loads it

    g = gold_queries(gold)
    rank = g.base  # gold.rank with the fusion weight for the languages, as `eval` ranks
    missing = missing_queries(len(g.gold), config.missing_share, config.seed)
    lacked = hidden_together(g.ranking.target, [g.gold[q] if missing[q] else set()
                                                for q in range(len(g.gold))])
    found = g.rank(rank, lacked)
    return DevList(Path(gold.gold).name, dev_set(found, g.gold, missing),
                   g.encoder.info.key(), g.kind,
                   ranking_key(rank, g.ranking_for(rank).scorers),
                   f"{g.vocab.id} {g.vocab.version}")


def hidden_together(target, codes: list[set[str]]) -> list[set[str]]:
    """Each query's hidden codes with every concept its target's domain carries or lacks
    together with them (Domain.carried_with: a drug's other levels and brands), so a missing
    row's target lacks the drug, not one level of it."""
    key_of = target.domain.carried_with(target.vocab)
    if key_of is None:
        return codes
    together: dict = {}
    for code in target.vocab.concepts["code"]:
        if (key := key_of(code)) is not None:
            together.setdefault(key, set()).add(code)
    return [hidden.union(*(together.get(key_of(c), ()) for c in hidden)) for hidden in codes]


def pooled(lists: list[DevList], folds: int, seed: int) -> tuple[DevSet, np.ndarray, np.ndarray]:
    """The lists as one DevSet (query numbers offset), a weight per candidate (each list's
    candidates weigh 1/its queries, scaled to mean 1) and a fold per query: its list's number
    when there are several (leave one list out), else `folds` random folds."""
    frames, offset = [], 0
    for d in lists:
        frames.append(d.dev.found.assign(query=d.dev.found["query"] + offset))
        offset += d.dev.n_queries
    dev = DevSet(pd.concat(frames, ignore_index=True),
                 np.concatenate([d.dev.labels for d in lists]),
                 np.concatenate([d.dev.missing for d in lists]), offset)
    weights = np.concatenate([np.full(len(d.dev.labels), 1.0 / d.dev.n_queries) for d in lists])
    fold_of = (np.concatenate([np.full(d.dev.n_queries, n) for n, d in enumerate(lists)])
               if len(lists) > 1 else query_folds(lists[0].dev.n_queries, folds, seed))
    return dev, weights / weights.mean(), fold_of


def cross_fitted(lists: list[DevList], folds: int, seed: int, columns=None):
    """The lists pooled (`pooled`), their candidates' features (only `columns` when given) and
    each candidate's out-of-fold confidence, capped as `map` caps it: (dev, weights, fold per
    query, features, oof)."""
    dev, weights, fold_of = pooled(lists, folds, seed)
    features = candidate_features(dev.found)
    if columns is not None:
        features = features[:, columns]
    queries = dev.found["query"].to_numpy()
    oof = capped(cross_fit(features, dev.labels, fold_of[queries], int(fold_of.max()) + 1, weights),
                 dev.found)
    return dev, weights, fold_of, features, oof


def per_list_auroc(lists: list[DevList], oof: np.ndarray) -> dict:
    """Cross-fitted AUROC of the top candidate on each list, when there are several."""
    if len(lists) < 2:
        return {}
    out, start = {}, 0
    for d in lists:
        out[d.name] = dev_top_auroc(d.dev, oof[start:start + len(d.dev.labels)])
        start += len(d.dev.labels)
    return out


def missing_queries(n: int, share: float, seed: int) -> np.ndarray:
    """A random `share` of `n` queries, as a mask: those whose gold concepts the target lacks."""
    missing = np.zeros(n, dtype=bool)
    missing[np.random.default_rng(seed).choice(n, size=int(round(share * n)), replace=False)] = True
    return missing


def dev_set(found: pd.DataFrame, gold: list[set[str]], missing: np.ndarray) -> DevSet:
    """Label every candidate of `found`, ranked with the `missing` queries' gold concepts hidden."""
    labels = np.array([code in gold[q] for q, code in zip(found["query"], found["target_code"])],
                      dtype=float)
    return DevSet(found.reset_index(drop=True), labels, missing, len(gold))


def query_folds(n: int, folds: int, seed: int) -> np.ndarray:
    """A random fold number per query, balanced."""
    rng = np.random.default_rng(seed + 1)
    return rng.permutation(np.arange(n) % folds)


def fit_logistic(features: np.ndarray, labels: np.ndarray,
                 weights: np.ndarray | None = None) -> dict:
    """Standardise and fit a logistic model (`weights` per row: several dev lists weigh the
    same whatever their lengths); returns the Calibrator's numeric fields."""
    from sklearn.linear_model import LogisticRegression

    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale[scale < 1e-9] = 1.0  # constant (up to float noise): rounded below, it would be 0
    model = LogisticRegression(C=1.0, max_iter=1000).fit((features - mean) / scale, labels,
                                                         sample_weight=weights)
    return {"mean": tuple(np.round(mean, 6).tolist()), "scale": tuple(np.round(scale, 6).tolist()),
            "coef": tuple(np.round(model.coef_[0], 6).tolist()),
            "intercept": round(float(model.intercept_[0]), 6)}


def cross_fit(features: np.ndarray, labels: np.ndarray, fold_of_row: np.ndarray,
              folds: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Out-of-fold confidence for every candidate row."""
    out = np.zeros(len(labels))
    for f in range(folds):
        test = fold_of_row == f
        fit_on = None if weights is None else weights[~test]
        out[test] = logistic(features[test], **fit_logistic(features[~test], labels[~test], fit_on))
    return out


def expected_calibration_error(confidence: np.ndarray, labels: np.ndarray, bins: int = BINS) -> float:
    """Σ over equal-width confidence bins of (share of rows) × |mean confidence − accuracy|."""
    which = np.minimum((confidence * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            total += inside.mean() * abs(confidence[inside].mean() - labels[inside].mean())
    return float(total)


def reliability_bins(confidence: np.ndarray, labels: np.ndarray, bins: int = BINS) -> list[dict]:
    which = np.minimum((confidence * bins).astype(int), bins - 1)
    return [{"bin": b, "n": int((which == b).sum()), "confidence": float(confidence[which == b].mean()),
             "accuracy": float(labels[which == b].mean())} for b in range(bins) if (which == b).any()]


def top_auroc(conf: np.ndarray, right: np.ndarray) -> float | None:
    """AUROC of the top candidates' confidence for right (1) vs wrong (0); None when all are one."""
    from sklearn.metrics import roc_auc_score

    if not 0 < right.sum() < len(right):
        return None
    return round(float(roc_auc_score(right, conf)), 4)


def dev_top_auroc(dev: DevSet, conf: np.ndarray) -> float | None:
    """top_auroc of a DevSet's rank-1 candidates, `conf` holding every candidate's confidence."""
    top = dev.found["rank"].to_numpy() == 1
    return top_auroc(conf[top], dev.labels[top])


def precision_curve(confidence: np.ndarray, labels: np.ndarray) -> tuple:
    """(threshold, precision, count) at each distinct confidence, thresholds descending:
    precision of the top candidates at or above the threshold, and how many they are."""
    order = np.argsort(-confidence, kind="stable")
    conf, right = confidence[order], labels[order]
    hits = np.cumsum(right)
    counts = np.arange(1, len(conf) + 1)
    last = np.r_[conf[1:] != conf[:-1], True]  # a threshold takes every tie
    return tuple((round(float(c), 6), round(float(h / k), 6), int(k))
                 for c, h, k, keep in zip(conf, hits, counts, last) if keep)


def measure(dev: DevSet, oof: np.ndarray, folds: np.ndarray) -> dict:
    """Cross-fitted ECE, AUROC of the top candidate, precision-coverage and pre-approval shares."""
    top = dev.found["rank"].to_numpy() == 1
    top_query = dev.found["query"].to_numpy()[top]
    top_conf, top_right = oof[top], dev.labels[top]
    report = {
        "queries": dev.n_queries, "missing_queries": int(dev.missing.sum()),
        "candidates": len(oof), "top1_accuracy": round(float(top_right.mean()), 4),
        "ece_all": round(expected_calibration_error(oof, dev.labels), 4),
        "ece_top1": round(expected_calibration_error(top_conf, top_right), 4),
        "auroc_top1": top_auroc(top_conf, top_right),
        "bins": reliability_bins(oof, dev.labels),
        "curve": precision_curve(top_conf, top_right),
    }
    fold = folds[top_query]
    report["preapproval"] = {f"{p:g}": _held_out(top_conf, top_right, fold, p)
                             for p in PRECISIONS}
    # no_match is pre-approval of "the top candidate is wrong", read from the other end.
    flagged = _held_out(-top_conf, 1 - top_right, fold, NO_MATCH_PRECISION)
    missing = dev.missing[top_query]
    picked = flagged.pop("picked")
    flagged["missing_flagged"] = round(float(np.mean(picked[missing])), 4) if missing.any() else None
    report["no_match"] = flagged
    report["no_match_below"] = no_match_threshold(top_conf, top_right)
    for got in report["preapproval"].values():
        got.pop("picked")
    return report


def no_match_threshold(conf: np.ndarray, right: np.ndarray) -> float:
    """Top confidence under which at least NO_MATCH_PRECISION of the dev tops are wrong (0 when
    no threshold reaches it: nothing is flagged)."""
    flag_at = threshold_at(precision_curve(-conf, 1 - right), NO_MATCH_PRECISION)
    return 0.0 if flag_at is None else round(-flag_at + 1e-6, 6)


def _held_out(conf: np.ndarray, right: np.ndarray, fold: np.ndarray, precision: float) -> dict:
    """Threshold for `precision` chosen on the other folds' queries, coverage and precision
    measured on each held-out fold, summed over folds."""
    picked = np.zeros(len(conf), dtype=bool)
    for f in np.unique(fold):
        held = fold == f
        threshold = threshold_at(precision_curve(conf[~held], right[~held]), precision)
        if threshold is not None:
            picked |= held & (conf >= threshold)
    approved, correct = int(picked.sum()), int(right[picked].sum())
    return {"share": round(approved / len(conf), 4),
            "precision": round(correct / approved, 4) if approved else None,
            "approved": approved, "queries": len(conf), "picked": picked}




def plot_reliability(report: dict, path: Path, title: str) -> Path:
    """Reliability diagram (cross-fitted, all candidates) beside the top-1 precision-coverage
    curve, as a PNG (needs matplotlib: the `plots` extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.4))
    bins = report["bins"]
    left.plot([0, 1], [0, 1], color="#999999", linestyle="--", linewidth=1)
    left.plot([b["confidence"] for b in bins], [b["accuracy"] for b in bins], marker="o",
              color="#1f5fa8")
    for b in bins:
        left.annotate(str(b["n"]), (b["confidence"], b["accuracy"]), fontsize=7,
                      textcoords="offset points", xytext=(3, -10))
    left.set(xlabel="confidence (cross-fitted)", ylabel="share correct", xlim=(0, 1), ylim=(0, 1),
             title=f"reliability: ECE {report['ece_all']:.3f} (all), {report['ece_top1']:.3f} (top-1)")
    curve = np.array(report["curve"])
    right.plot(curve[:, 2] / report["queries"], curve[:, 1], color="#1f5fa8")
    right.set(xlabel="coverage (share of queries, top candidate)", ylabel="precision",
              xlim=(0, 1), ylim=(0, 1.02),
              title=f"precision-coverage: AUROC {report['auroc_top1']}")
    fig.suptitle(f"{title}; {report['missing_queries']} of {report['queries']} queries without "
                 f"their gold concept", fontsize=9)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)
    return path
