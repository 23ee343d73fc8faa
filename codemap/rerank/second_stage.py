"""The second stage: a trained model reads each row against each of its first-stage candidates,
re-orders them, and gives each the probability that it is the row's concept.

Two parts, both shipped (codemap/data/second_stage/):
- the cross-encoder (rerank.pair_model): the row's text, unit and specimen read together with
  the candidate's name, one logit;
- the combiner: gradient-boosted trees (LightGBM) over that logit, where it stands among the
  row's candidates, the first stage's scores and evidence, how common the candidate is and what
  the row looks like (rerank.features), fitted on real mapped lists of other kinds, then an
  isotonic map from its output to the share of candidates that were right (fitted on its
  predictions for lists it had not been fitted on). That share is the `confidence`.

It reads the first stage's `candidates` best candidates per row and keeps `top_k` of them.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import CodemapError
from ..rank.candidates import threshold_at
from .features import FEATURES, combiner_features
from .pair_model import PairModel, row_side

log = logging.getLogger(__name__)

FOLDER = "second_stage"  # in codemap/data
COMBINER = "combiner.txt"  # LightGBM's text format (never a pickle)
MANIFEST = "second_stage.json"
CROSS_ENCODER = "cross_encoder"  # sub-folder


@dataclass(frozen=True)
class Combiner:
    """LightGBM trees over FEATURES, then an isotonic map to a calibrated probability."""

    booster: object  # lightgbm.Booster
    calibration_x: tuple[float, ...]  # raw tree output (probability), increasing
    calibration_y: tuple[float, ...]  # share right at each x (non-decreasing)
    manifest: dict = field(default_factory=dict)

    # What the decision support reads of a confidence model (as of decide.confidence.Calibrator):
    # the held-out top-1 precision curve, the no-match threshold, what it was fitted on.
    precision_curve = property(lambda self: tuple(tuple(p) for p in
                                                  self.manifest.get("precision_curve", ())))
    no_match_below = property(lambda self: float(self.manifest.get("no_match_below", 0.0)))
    fitted_on = property(lambda self: {"dev_sets": self.manifest.get("fitted_on", [])})

    def threshold_for(self, precision: float) -> float | None:
        return threshold_at(self.precision_curve, precision)

    def describe(self) -> str:
        return (f"second stage (cross-encoder + LightGBM combiner, isotonic calibration), fitted "
                f"on {len(self.manifest.get('fitted_on', []))} dev lists of other kinds than "
                f"yours; pre-approve at ≥ {self.manifest.get('pre_approve_at')} (95 % top-1 "
                f"precision held out)")

    @staticmethod
    def load(folder: Path) -> "Combiner":
        import lightgbm

        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if tuple(manifest["features"]) != FEATURES:
            raise CodemapError(f"{folder}: fitted on other features than this codemap computes; "
                               f"refit it (benchmarks/quality/second_stage.py)")
        booster = lightgbm.Booster(model_str=(folder / COMBINER).read_text(encoding="utf-8"))
        return Combiner(booster, tuple(manifest["calibration"]["x"]),
                        tuple(manifest["calibration"]["y"]), manifest)

    def raw(self, features: np.ndarray) -> np.ndarray:
        return self.booster.predict(features) if len(features) else np.zeros(0)

    def predict(self, features: np.ndarray) -> np.ndarray:
        """The calibrated probability that each candidate is right."""
        return calibrated(self.raw(features), self.calibration_x, self.calibration_y)


def calibrated(raw: np.ndarray, x, y) -> np.ndarray:
    """Piecewise-linear isotonic map (np.interp: flat beyond the ends)."""
    return np.interp(raw, np.asarray(x, dtype=float), np.asarray(y, dtype=float))


@dataclass
class SecondStage:
    pair_model: PairModel
    combiner: Combiner | None
    candidates: int = 20

    @staticmethod
    def shipped_folder() -> Path:
        return Path(str(resources.files("codemap.data") / FOLDER))

    @staticmethod
    def fits(folder: Path, model_key: str, kind: str) -> bool:
        """Whether the second stage in `folder` was fitted over this first stage (the encoder
        whose scores its features read, ModelInfo.key()) and adopted for this kind of target
        (benchmarks/results/second-stage/RULE.md), read from its manifest alone."""
        manifest = Path(folder) / MANIFEST
        if not manifest.is_file() or not (Path(folder) / COMBINER).is_file():
            return False
        data = json.loads(manifest.read_text(encoding="utf-8"))
        return data.get("first_stage_model") == model_key and kind in data.get("kinds", ())

    @classmethod
    def load(cls, folder: Path | None = None, cache_dir: Path | None = None) -> "SecondStage":
        """The shipped second stage (or the one in `folder`); without a fitted combiner (while
        its training data is collected) the cross-encoder alone."""
        folder = Path(folder) if folder else cls.shipped_folder()
        combiner = Combiner.load(folder) if (folder / COMBINER).exists() else None
        candidates = combiner.manifest.get("candidates", 20) if combiner else 20
        return cls(PairModel.load(folder / CROSS_ENCODER, cache_dir), combiner, candidates)

    @classmethod
    def shipped_for(cls, model_key: str, kind: str,
                    cache_dir: Path | None = None) -> "SecondStage | None":
        """The shipped second stage where it fits this first-stage model and kind of target
        (`fits`), loaded; None elsewhere."""
        folder = cls.shipped_folder()
        return cls.load(folder, cache_dir) if cls.fits(folder, model_key, kind) else None

    def reorder(self, found: pd.DataFrame, rows: list[dict], ranking, top_k: int) -> pd.DataFrame:
        """`rerank` of a rank.assembly.Ranking's candidates for `rows` (rank.prepare.row_fields:
        text, unit, specimen…): the target's kind, the list's language and usage from it."""
        return self.rerank(found, pd.DataFrame(rows, columns=["text", "unit", "specimen"]),
                           ranking.target.kind, bool(ranking.settings.crosslingual_from),
                           ranking.target.domain.usage_rank, top_k)

    def logits(self, found: pd.DataFrame, rows: pd.DataFrame) -> np.ndarray:
        """The cross-encoder's logit of every candidate row of `found` (rank_hybrid's frame);
        `rows`: each query's text, unit and specimen, indexed by query."""
        sides = {q: row_side(r.text, r.unit, r.specimen) for q, r in rows.iterrows()}
        return self.pair_model.score([sides[q] for q in found["query"]],
                                     found["target_name"].astype(str).tolist())

    def features(self, found: pd.DataFrame, rows: pd.DataFrame, domain: str,
                 crosslingual: bool, rank_of) -> tuple[np.ndarray, np.ndarray]:
        logits = self.logits(found, rows)
        return combiner_features(found, logits, rows, domain, crosslingual, rank_of), logits

    def rerank(self, found: pd.DataFrame, rows: pd.DataFrame, domain: str, crosslingual: bool,
               rank_of, top_k: int) -> pd.DataFrame:
        """`found` re-ordered by the combiner's probability, `top_k` per query, ranks renumbered,
        with `confidence` and the second stage's reading first in `explanation`."""
        if found.empty or self.combiner is None:
            return found
        features, logits = self.features(found, rows, domain, crosslingual, rank_of)
        probability = self.combiner.predict(features)
        out = found.assign(confidence=probability.round(4), _logit=logits)
        out = out.sort_values(["query", "confidence", "rank"], ascending=[True, False, True],
                              kind="stable")
        out["rank"] = out.groupby("query").cumcount() + 1
        out = out[out["rank"] <= top_k].copy()
        note = "second stage: p " + out["confidence"].map("{:.2f}".format) + \
            " (reads the row with the name: " + out["_logit"].map("{:+.1f}".format) + ")"
        out["explanation"] = note + "; " + out["explanation"].fillna("")
        return out.drop(columns="_logit").reset_index(drop=True)
