"""What the second stage's combiner reads of each (row, candidate): the cross-encoder's logit
and where it stands among the row's candidates, the first stage's scores and evidence, how
common the candidate is, and what the row itself looks like. One function builds them for
training (train/second_stage.py) and at run time, so the two cannot differ.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..rank.candidates import candidate_features, FEATURES as FIRST_STAGE

# The first stage's per-candidate features (rank.candidates.candidate_features) the combiner
# keeps: its scores, place and evidence sums.
KEPT = ("score", "encoder_score", "lexical_score", "margin_next", "gap_top", "log_rank",
        "evidence_for", "evidence_against", "evidence_unconfirmed")
FEATURES = ("ce", "ce_rank", "ce_gap", "ce_top_margin", *KEPT, "usage_rank", "usage_known",
            "row_chars", "row_words", "row_digits", "has_unit", "has_specimen", "crosslingual",
            "domain_lab", "domain_drug")


def usage_of(codes, rank_of) -> tuple[np.ndarray, np.ndarray]:
    """log(rank) of each code in a usage list (LOINC's Top 2000 for lab targets) and whether it
    has one; `rank_of(code)` gives 0 for an unranked code."""
    ranks = np.array([rank_of(c) for c in codes], dtype=float)
    return np.where(ranks > 0, np.log(np.maximum(ranks, 1)), 0.0), (ranks > 0).astype(float)


def combiner_features(frame: pd.DataFrame, logits: np.ndarray, rows: pd.DataFrame, domain: str,
                      crosslingual: bool, rank_of=lambda code: 0) -> np.ndarray:
    """One feature row per candidate of `frame` (rank_hybrid's columns: query, rank, score…,
    explanation) in FEATURES order. `logits`: the cross-encoder's, per candidate; `rows`: each
    query's text, unit and specimen (indexed by query)."""
    first = pd.DataFrame(candidate_features(frame), columns=FIRST_STAGE, index=frame.index)
    by_query = pd.Series(logits, index=frame.index).groupby(frame["query"])
    best = by_query.transform("max")
    second = by_query.transform(lambda s: s.nlargest(2).iloc[-1] if len(s) > 1 else s.max())
    usage, known = usage_of(frame["target_code"], rank_of)
    row = rows.reindex(frame["query"].to_numpy())
    texts = row["text"].fillna("").astype(str)
    columns = {
        "ce": logits, "ce_rank": by_query.rank(ascending=False, method="first").to_numpy(),
        "ce_gap": (best - logits).to_numpy(), "ce_top_margin": (best - second).to_numpy(),
        **{name: first[name].to_numpy() for name in KEPT},
        "usage_rank": usage, "usage_known": known,
        "row_chars": texts.str.len().to_numpy(), "row_words": texts.str.split().str.len().to_numpy(),
        "row_digits": texts.str.count(r"\d").to_numpy(),
        "has_unit": (row["unit"].fillna("") != "").to_numpy(),
        "has_specimen": (row["specimen"].fillna("") != "").to_numpy(),
        "crosslingual": np.full(len(frame), float(crosslingual)),
        "domain_lab": np.full(len(frame), float(domain == "lab")),
        "domain_drug": np.full(len(frame), float(domain == "drug")),
    }
    return np.column_stack([np.asarray(columns[name], dtype=float) for name in FEATURES])


def log_rank(rank: int) -> float:
    return math.log(rank) if rank > 0 else 0.0
