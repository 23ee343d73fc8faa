"""Calibrated confidence: the estimated probability that a ranked candidate is a correct mapping.

A raw fused score of 0.8 means different things for a lab term and a drug string, and a candidate
0.01 ahead of the next one is less safe than one 0.2 ahead. A `Calibrator` turns per-candidate
features of rank_hybrid's output (fused score, encoder and lexical scores, margin to the next
candidate, gap to the top one, rank, evidence for and against, evidence neither agreeing nor
contradicting) into a probability with a logistic model fitted on dev gold pairs (`codemap
calibrate`, codemap.decide.calibrate). It is stored as a small versioned JSON (never a pickle)
beside the model it was fitted for; codemap ships one per default model and domain in
codemap/data/calibration/, used by `codemap map` when model and ranking match.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import CodemapError
from ..files import atomic_path, sha256_file, sha256_text
from ..rank.candidates import FEATURES, candidate_features, capped, threshold_at

FORMAT = "codemap-calibration"
VERSION = 3  # 3: what the row states and contradicts (issue #52), contradictions capped



def logistic(features: np.ndarray, mean, scale, coef, intercept: float) -> np.ndarray:
    """The calibrator's model: standardise the features, then a logistic function."""
    x = (features - np.asarray(mean)) / np.asarray(scale)
    return 1.0 / (1.0 + np.exp(-(x @ np.asarray(coef) + intercept)))


def ranking_key(rank, scorers) -> str:
    """What a calibrator depends on besides the model: how candidates were scored."""
    evidence = ",".join(sorted(s.name for s in scorers)) or "none"
    weight = f"/w={rank.encoder_weight:g}" if rank.method == "hybrid" and rank.fusion == "weighted" else ""
    # Other query texts, other scores.
    expanded = ("/abbreviations" if rank.expand_abbreviations else "") + (
        "/completed" if rank.complete_words else "") + (
        "/hubness" if rank.hubness and rank.method != "lexical" else "") + (
        "/parts" if rank.reads_parts else "") + ("/glosses" if rank.reads_glosses else "")
    return (f"{rank.method}/{rank.fusion if rank.method == 'hybrid' else '-'}{weight}"
            f"/evidence={evidence}{expanded}")


@dataclass(frozen=True)
class Calibrator:
    """Standardised features → logistic model → probability that a candidate is correct."""

    model: str  # ModelInfo.key() of the encoder ("default@<adapter hash>", a folder, a hub id)
    domain: str  # codemap.rank.prepare.target_domain() of the dev set
    ranking: str  # ranking_key() of the dev ranking
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    # Cross-fitted top-1 precision by confidence threshold: (threshold, precision, queries at or
    # above it), thresholds descending. `--auto-accept P` reads its threshold from here.
    precision_curve: tuple[tuple[float, float, int], ...] = ()
    no_match_below: float = 0.2  # a top candidate below this confidence suggests no_match
    features: tuple[str, ...] = FEATURES
    fitted_on: dict = field(default_factory=dict)  # gold file, target, counts, seed
    metrics: dict = field(default_factory=dict)  # cross-fitted ECE, AUROC, pre-approval shares

    def predict(self, found: pd.DataFrame) -> np.ndarray:
        """Confidence (0..1) for every candidate row of rank_hybrid's frame."""
        if len(found) == 0:
            return np.zeros(0)
        return capped(logistic(candidate_features(found), self.mean, self.scale, self.coef,
                               self.intercept), found)

    def threshold_for(self, precision: float) -> float | None:
        """Lowest confidence at which the dev top-1 precision reaches `precision` (rank.candidates
        .threshold_at); None when no threshold does."""
        return threshold_at(self.precision_curve, precision)

    def matches(self, model: str, domain: str, ranking: str) -> bool:
        return (self.model, self.domain, self.ranking) == (model, domain, ranking)

    def save(self, path: str | Path) -> Path:
        data = {"format": FORMAT, "version": VERSION, **asdict(self)}
        with atomic_path(Path(path)) as tmp:
            Path(tmp).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        return Path(path)

    @staticmethod
    def load(path: str | Path) -> "Calibrator":
        """Raises CodemapError for a file that is not a codemap calibration of this version."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CodemapError(f"{path}: cannot read a calibration ({exc}); write one with "
                               f"`codemap calibrate`") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise CodemapError(f"{path}: not a codemap calibration file; write one with "
                               f"`codemap calibrate`")
        if data.get("version") != VERSION or tuple(data.get("features", ())) != FEATURES:
            raise CodemapError(f"{path}: calibration version {data.get('version')} does not fit "
                               f"this codemap ({VERSION}); fit it again with `codemap calibrate`")
        data.pop("format"), data.pop("version")
        data["precision_curve"] = tuple(tuple(p) for p in data.get("precision_curve", ()))
        for key in ("mean", "scale", "coef", "features"):
            data[key] = tuple(data[key])
        return Calibrator(**data)


def _shipped_files() -> list[Path]:
    """The calibration files shipped in codemap/data/calibration/, in name order."""
    folder = resources.files("codemap.data") / "calibration"
    if not folder.is_dir():
        return []
    return sorted(Path(str(f)) for f in folder.iterdir() if f.name.endswith(".json"))


def shipped_calibrators() -> list[Calibrator]:
    """The calibrations shipped in codemap/data/calibration/."""
    return [Calibrator.load(f) for f in _shipped_files()]


def calibration_fingerprint(path: Path | None) -> str:
    """The sha256 of the calibration a run may use (`path`, or every shipped one): a streamed
    run's parts made under another calibration are not reused."""
    if path is not None:  # a missing file fails where it is loaded, with its own message
        return sha256_file(Path(path)) if Path(path).is_file() else f"missing {path}"
    return sha256_text(*(sha256_file(f) for f in _shipped_files()))


def choose_calibrator(path: Path | None, model: str, domain: str,
                      ranking: str) -> tuple[Calibrator | None, str]:
    """The calibrator for a run and a line for the run sheet saying which one, or why none.

    An explicit `path` must match the run's model and ranking (CodemapError otherwise); without
    one, the shipped calibrator for (model, domain, ranking) is used when there is one.
    """
    if path is not None:
        chosen = Calibrator.load(path)
        # The fix first: a ranking key is long, and an error line is cut at 300 characters.
        fix = f"fit one for it with `codemap calibrate --model {model.split('@')[0]}`"
        if chosen.model != model:
            raise CodemapError(f"{path}: fitted for model {chosen.model!r}, but this run uses "
                               f"{model!r}; {fix}")
        if chosen.ranking != ranking:
            raise CodemapError(f"{path}: fitted on another ranking than this run's ({fix}); "
                               f"it has {chosen.ranking!r}, this run {ranking!r}")
        return chosen, f"{path} (fitted on {chosen.fitted_on.get('gold', '?')})"
    for chosen in shipped_calibrators():
        if chosen.matches(model, domain, ranking):
            return chosen, f"shipped {chosen.domain} calibration (fitted on {chosen.fitted_on.get('gold', '?')})"
    return None, (f"none: no calibration for model {model!r}, {domain} target, ranking {ranking}; "
                  f"fit one with `codemap calibrate` and pass --calibration")
