"""Reading a ranking's candidates: the per-candidate features both confidence models use (the
first stage's calibrator, codemap.decide.confidence, and the second stage's combiner,
codemap.rerank), and the confidence threshold a precision curve gives.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

FEATURES = ("score", "encoder_score", "lexical_score", "margin_next", "gap_top", "log_rank",
            "is_top", "evidence_for", "evidence_against", "top_margin", "top_x_score",
            "top_x_margin", "evidence_unconfirmed", "agreeing", "contradicting",
            "top_contradicted", "margin_consistent", "log_usage", "first_alone")
# A candidate that contradicts what its row states (a ✘ reason: another specimen, strength,
# unit) is never more likely right than this, whatever its other features say (issue #52).
CONTRADICTED_CAP = 0.5
USAGE_UNRANKED = 10_000  # the usage rank of a code the common-test lists do not rank
_USAGE = re.compile(r"common test rank (\d+)")
MIN_SUPPORT = 10  # dev queries a pre-approval threshold must cover
WILSON_Z = 1.645  # a one-sided 95 % lower bound
# "(+0.05)" as evidence.weigh writes it, with the reason's mark before it when it has one.
_ADJUSTMENT = re.compile(r"(?:([✔✘~])\s*)?\(([+-]\d+(?:\.\d+)?)\)")
def candidate_features(found: pd.DataFrame) -> np.ndarray:
    """One feature row per candidate of rank_hybrid's frame (columns `query`, `rank`, `score`,
    `encoder_score`, `lexical_score`, `explanation`), in FEATURES order."""
    frame = found[["query", "rank", "score"]].copy()
    frame["score"] = frame["score"].astype(float)
    ordered = frame.sort_values(["query", "rank"], kind="stable")
    by_query = ordered.groupby("query", sort=False)["score"]
    margin = (ordered["score"] - by_query.shift(-1)).fillna(0.0)
    gap = by_query.transform("max") - ordered["score"]
    # Top score minus the second (0 with one candidate): the rank-1 row's margin, for every row.
    top_margin = margin.groupby(ordered["query"], sort=False).transform("first")
    is_top = (frame["rank"] == 1).astype(float)
    explanations = found["explanation"].fillna("")
    adjust = explanations.map(_adjustments)
    contradicting = explanations.str.count("✘").astype(float)
    consistent = _margin_consistent(ordered, contradicting.reindex(ordered.index))
    columns = {
        "score": frame["score"],
        "encoder_score": _numeric(found, "encoder_score"),
        "lexical_score": _numeric(found, "lexical_score"),
        "margin_next": margin.reindex(frame.index),
        "gap_top": gap.reindex(frame.index),
        "log_rank": np.log(frame["rank"].astype(float)),
        "is_top": is_top,
        "evidence_for": adjust.map(lambda a: sum(x for _, x in a if x > 0)),
        "evidence_against": adjust.map(lambda a: sum(x for _, x in a if x < 0)),
        # The query's own certainty, and the top candidate's features apart from the rest's:
        # a logistic model over all ranks otherwise spends them on rank-vs-rank differences.
        "top_margin": top_margin.reindex(frame.index),
        "top_x_score": is_top * frame["score"],
        "top_x_margin": is_top * margin.reindex(frame.index),
        # Evidence marked neither agreeing nor contradicting: the candidate states what the row
        # does not (a strength, a brand), matches it in part, or is a prior where the row says
        # nothing (a common test). With a row's right concept absent, its more or less specific
        # sibling comes first with just such evidence
        # (benchmarks/results/confidence/RULE-unconfirmed.md, RULE-unconfirmed-labs.md).
        "evidence_unconfirmed": adjust.map(lambda a: sum(x for mark, x in a if mark == "~")),
        # What the row states and the candidate agrees with or contradicts, by count of reasons;
        # whether the row's first candidate contradicts it; the margin to the best candidate that
        # does not contradict the row (the rival that a reviewer would take instead).
        "agreeing": explanations.str.count("✔").astype(float),
        "contradicting": contradicting,
        "top_contradicted": (contradicting.where(frame["rank"] == 1, 0.0) > 0).groupby(
            frame["query"]).transform("max").astype(float),
        "margin_consistent": consistent.reindex(frame.index),
        # How commonly the code is ordered (labs): the commonest test of an analyte is the
        # likelier mapping of a row that names only the analyte.
        "log_usage": explanations.map(_log_usage),
        # First by the encoder alone and by spelling alone too (0, 1 or 2 of them): the signals
        # agreeing is the strongest sign a first candidate is right (codemap.rank.hybrid).
        "first_alone": explanations.str.extract(r"first by (encoder)?(?: and by )?(spelling)? alone")
        .notna().sum(axis=1).astype(float),
    }
    return np.column_stack([np.asarray(columns[name], dtype=float) for name in FEATURES])


def _margin_consistent(ordered: pd.DataFrame, contradicting: pd.Series) -> pd.Series:
    """Per candidate (rows of `ordered`, sorted by query and rank): its score minus the best
    score among its query's other candidates that contradict nothing the row states (its own
    score minus 0 when it has no such rival)."""
    query = ordered["query"]
    clean = ordered["score"].where(contradicting == 0)
    place = clean.groupby(query, sort=False).rank(method="first", ascending=False)
    first = clean.where(place == 1).groupby(query, sort=False).transform("max")
    second = clean.where(place == 2).groupby(query, sort=False).transform("max")
    rival = second.where(place == 1, first)  # the best clean one's rival is the second
    return (ordered["score"] - rival.fillna(0.0)).astype(float)


def _log_usage(explanation: str) -> float:
    found = _USAGE.search(explanation)
    return float(np.log(min(int(found.group(1)), USAGE_UNRANKED) if found else USAGE_UNRANKED))


def capped(confidence: np.ndarray, found: pd.DataFrame) -> np.ndarray:
    """`confidence` with every candidate that contradicts its row held at CONTRADICTED_CAP."""
    contradicted = found["explanation"].fillna("").str.contains("✘").to_numpy()
    return np.where(contradicted, np.minimum(confidence, CONTRADICTED_CAP), confidence)


def _numeric(frame: pd.DataFrame, column: str) -> pd.Series:
    if column not in frame:
        return pd.Series(0.0, index=frame.index)
    return pd.to_numeric(frame[column], errors="coerce").fillna(0.0)


def _adjustments(explanation: str) -> list[tuple[str, float]]:
    """(mark, adjustment) of each weighed reason; mark "" when the reason has none."""
    return [(mark, float(x)) for mark, x in _ADJUSTMENT.findall(explanation)]



def threshold_at(curve, precision: float) -> float | None:
    """Lowest confidence at which the top-1 precision of a curve of (threshold, precision,
    queries at or above it), thresholds descending, reaches `precision` with its margin: the
    one-sided 95 % lower bound of that precision (Wilson score) does. A point precision on the
    few queries at the top of a curve is noise (one early wrong row would block every threshold
    below it; ten right rows are no proof of 95 %); None when no threshold reaches it.
    benchmarks/results/missing-drugs/RULE-2.md"""
    best = None
    for threshold, reached, count in curve:
        if count >= MIN_SUPPORT and precision_lower_bound(reached, count) >= precision:
            best = threshold
    return best


def precision_lower_bound(precision: float, count: int, z: float = WILSON_Z) -> float:
    """The Wilson score interval's lower end for `precision` measured on `count` queries."""
    z2 = z * z / count
    centre = precision + z2 / 2
    margin = z * math.sqrt(precision * (1 - precision) / count + z2 / (4 * count))
    return (centre - margin) / (1 + z2)
