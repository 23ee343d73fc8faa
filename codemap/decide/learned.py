"""The learned ranker of a target (codemap.rank.learned) with its calibrated confidence, cached:
what `codemap map --learned-ranking` orders candidates by and writes as `confidence`, for any
target.

A held-out part of the pseudo-queries, a quarter of them with their concept hidden, fits the
confidence: a logistic model over the learned scores (the candidate's, the top's, the margin),
the probability that a candidate is right, and the held-out precision curve `--auto-accept` and
the no-match suggestion read, as codemap.decide.confidence.Calibrator's. The fitted ranker is
cached with the index, keyed by the vocabulary, the model, the features and FORMAT_VERSION, as
LightGBM's text model and JSON (never a pickle).
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import RankConfig
from ..errors import CodemapError
from ..files import atomic_path, build_once, sha256_text
from ..rank.learned import (FitConfig, Queries, Target, feature_matrix, feature_names,
                            fit_ranking, labelled, reorder)
from ..rank.pseudo_queries import GENERATION
from .calibrate import no_match_threshold, precision_curve, top_auroc
from .confidence import Calibrator

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
CONFIDENCE_FEATURES = ("score", "gap_top", "margin_next", "is_top", "top_margin", "top_score")


@dataclass
class LearnedRanker:
    """A fitted ranking model and its confidence calibration, for one target, model and scorer set."""

    booster: object  # lightgbm.Booster
    features: list[str]
    confidence_coef: list[float]  # logistic over CONFIDENCE_FEATURES, standardised
    confidence_mean: list[float]
    confidence_scale: list[float]
    confidence_intercept: float
    # Held-out top-1 precision by confidence threshold (threshold, precision, count), descending:
    # what `--auto-accept` and the no-match suggestion read, as codemap.decide.confidence.Calibrator's.
    precision_curve: tuple = ()
    no_match_below: float = 0.0
    fitted_on: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)

    def score(self, table: pd.DataFrame) -> np.ndarray:
        """The model's score of every candidate row of a `pool` frame."""
        if len(table) == 0:
            return np.zeros(0)
        return self.booster.predict(feature_matrix(table, self.features), num_threads=1)

    def confidence(self, table: pd.DataFrame) -> np.ndarray:
        """Calibrated probability that each candidate is right; `table` holds the learned
        `score` and `rank` (1 = top) of its rows' candidates."""
        if len(table) == 0:
            return np.zeros(0)
        x = (confidence_features(table) - np.asarray(self.confidence_mean)) / np.asarray(self.confidence_scale)
        return 1.0 / (1.0 + np.exp(-(x @ np.asarray(self.confidence_coef) + self.confidence_intercept)))

    def rank(self, table: pd.DataFrame, top_k: int) -> pd.DataFrame:
        """The top_k candidates per row by (evidence tier, learned score), renumbered, with the
        learned score as `score`, the calibrated `confidence`, and the learned score first in
        the explanation (the scorers' reasons kept)."""
        ordered = reorder(table, self.score(table), top_k)
        ordered.insert(ordered.columns.get_loc("score") + 1, "confidence",
                       self.confidence(ordered).round(4))
        return ordered

    def threshold_for(self, precision: float) -> float | None:
        """Lowest confidence whose held-out top-1 precision, and every stricter one's, reaches
        `precision` (codemap.decide.confidence.Calibrator.threshold_for)."""
        return Calibrator("", "", "", (), (), (), 0.0,
                          precision_curve=self.precision_curve).threshold_for(precision)

    def describe(self) -> str:
        fitted = self.fitted_on
        return (f"learned ranker (LightGBM LambdaRank, {len(self.features)} features), fitted on "
                f"{fitted.get('pseudo_queries', 0)} pseudo-queries from the target"
                + (f" + {fitted['dev_pairs']} dev pairs" if fitted.get("dev_pairs") else "")
                + f"; confidence calibrated on {fitted.get('held_out', 0)} held-out pseudo-queries")

    def save(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        with atomic_path(folder / "model.txt") as tmp:
            tmp.write_text(self.booster.model_to_string(), encoding="utf-8")
        data = {"format": "codemap-learned-ranker", "version": FORMAT_VERSION,
                **{k: v for k, v in asdict_shallow(self).items() if k != "booster"}}
        # Written last: its presence says the model beside it is complete.
        with atomic_path(folder / "ranker.json") as tmp:
            tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        return folder

    @staticmethod
    def load(folder: Path) -> "LearnedRanker | None":
        """The ranker saved in `folder`, or None when there is none of this version."""
        import lightgbm

        try:
            data = json.loads((folder / "ranker.json").read_text(encoding="utf-8"))
            booster = lightgbm.Booster(model_str=(folder / "model.txt").read_text(encoding="utf-8"))
        except (OSError, ValueError, lightgbm.basic.LightGBMError):
            return None
        if data.pop("format", None) != "codemap-learned-ranker" or data.pop("version", None) != FORMAT_VERSION:
            return None
        data["precision_curve"] = tuple(tuple(p) for p in data.get("precision_curve", ()))
        return LearnedRanker(booster=booster, **data)


def asdict_shallow(ranker: LearnedRanker) -> dict:
    return {k: getattr(ranker, k) for k in ranker.__dataclass_fields__}


def confidence_features(table: pd.DataFrame) -> np.ndarray:
    """Per candidate: its learned score, gap to the row's top, margin to the next, whether it is
    the top, and the row's top score and top margin (how sure the row is as a whole)."""
    ordered = table.sort_values(["query", "rank"], kind="stable")
    score = ordered["score"].astype(float)
    by_query = score.groupby(ordered["query"], sort=False)
    top = by_query.transform("max")
    margin = (score - by_query.shift(-1)).fillna(0.0)
    top_margin = margin.groupby(ordered["query"], sort=False).transform("first")
    frame = pd.DataFrame({"score": score, "gap_top": top - score, "margin_next": margin,
                          "is_top": (ordered["rank"] == 1).astype(float), "top_margin": top_margin,
                          "top_score": top}).reindex(table.index)
    return frame[list(CONFIDENCE_FEATURES)].to_numpy(float)


def fit(target: Target, scorers, rank: RankConfig, config: FitConfig = FitConfig(),
        dev: tuple[Queries, pd.DataFrame] | None = None, excluded: frozenset = frozenset()) -> LearnedRanker:
    """Fit a ranker on pseudo-queries drawn from `target` (plus `dev`: labelled rows and their
    pooled table, when given), and its confidence on held-out pseudo-queries.

    `excluded` codes are concepts removed from the target: never drawn, hidden from every query.
    """
    clock = time.perf_counter()
    fitted = fit_ranking(target, scorers, rank, config, dev, excluded)
    ranker = LearnedRanker(fitted.booster, fitted.features, [], [], [], 0.0)
    held_q, held = fitted.held_out
    _fit_confidence(ranker, held, held_q, rank.top_k)
    ranker.fitted_on = {**fitted.fitted_on, "fit_seconds": round(time.perf_counter() - clock, 1)}
    return ranker


def _fit_confidence(ranker: LearnedRanker, table: pd.DataFrame, queries: Queries, top_k: int) -> None:
    """Logistic calibration of the learned scores on held-out rows' top_k candidates, and the
    held-out precision curve and no-match threshold read from it."""
    from sklearn.linear_model import LogisticRegression

    ordered = reorder(table, ranker.score(table), top_k)
    labels = labelled(ordered, queries.gold)
    x = confidence_features(ordered)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=1.0, max_iter=1000).fit((x - mean) / scale, labels)
    ranker.confidence_coef = np.round(model.coef_[0], 6).tolist()
    ranker.confidence_mean = np.round(mean, 6).tolist()
    ranker.confidence_scale = np.round(scale, 6).tolist()
    ranker.confidence_intercept = round(float(model.intercept_[0]), 6)
    top = ordered["rank"].to_numpy() == 1
    conf = ranker.confidence(ordered)[top]
    right = labels[top]
    ranker.precision_curve = precision_curve(conf, right)
    ranker.no_match_below = no_match_threshold(conf, right)
    ranker.metrics = {"held_out_top1": round(float(right.mean()), 4),
                      "held_out_auroc": top_auroc(conf, right)}


# --- cache ------------------------------------------------------------------------------------

def ranker_folder(target: Target, scorers, rank: RankConfig, config: FitConfig,
                  excluded: frozenset = frozenset()) -> Path:
    """Where the ranker of (vocabulary, model, features, settings) is cached."""
    encoder = target.encoder
    key = sha256_text(str(FORMAT_VERSION), str(GENERATION), target.vocab.typed_hash, encoder.info.fingerprint(),
                      encoder.variant, ",".join(feature_names(scorers)), repr(config),
                      str(rank.pool), target.target_lang, ",".join(sorted(excluded)))[:24]
    return Path(target.cache_dir) / "ranker" / f"{target.vocab.id}-{key}"


def load_or_fit(target: Target, scorers, rank: RankConfig, config: FitConfig = FitConfig(),
                excluded: frozenset = frozenset()) -> LearnedRanker:
    """The cached ranker for this target, model and scorer set, or a new one fitted and cached."""
    if target.cache_dir is None:
        raise CodemapError("a learned ranker needs a cache folder (--cache-dir)")
    folder = ranker_folder(target, scorers, rank, config, excluded)

    def cached() -> LearnedRanker | None:
        found = LearnedRanker.load(folder)
        return found if found is not None and found.features == feature_names(scorers) else None

    def build() -> LearnedRanker:
        log.info("fitting the learned ranker for %s (%d names)", target.vocab.id,
                 len(target.vocab.names))
        ranker = fit(target, scorers, rank, config, excluded=excluded)
        ranker.save(folder)
        return ranker

    return build_once(folder, cached, build, f"fitting the learned ranker of {target.vocab.id}")
