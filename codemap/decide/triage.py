"""Review triage: from calibrated confidence to what a reviewer should look at first.

Every source gets a `suggestion` (on all of its candidate rows, so one filter shows them):
- `pre-approve`: its top candidate reaches the held-out precision of the confidence's curve that
  `map` suggests at (0.95; a confidence fitted on real lists only) or asked with `--auto-accept
  P`; only the latter writes the row `approved` (still reviewable: change the decision, and
  `apply` then treats it as a person's);
- `no_match`: its top candidate's confidence is below the no-match threshold, so most likely no
  candidate is right (a local panel, an admin item, a concept missing from the target);
- `review`: everything else.

A suggestion needs only the source's own candidates, so `suggest` runs per block
(`Mapper.map_block`) and is stored in the block parts. The whole-list steps run where the output
is assembled: `tally` counts sources per suggestion one part at a time, and the review workbook
(which holds every row anyway) is put in `review_order`: `review` first, then `no_match`, then
`pre-approve`, each by ascending top confidence. CSV/TSV/Parquet outputs keep the source order.
"""
from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from ..read.readers import SOURCE_FILE_COLUMN

AUTO_ACCEPT_BY = "codemap --auto-accept"
SUGGESTIONS = ("review", "no_match", "pre-approve")  # also the sort order of the workbook
NO_CANDIDATES = "no candidates"  # tally's name for sources without a ranked candidate


def preapproval_precision(calibrator, suggest_at: float,
                          auto_accept: float | None = None) -> float | None:
    """The top-1 precision a run suggests `pre-approve` at: `auto_accept` when asked; else
    `suggest_at` for a confidence fitted on real lists, and none for one fitted on the target's
    own names (its precision curve is measured on no real list). `map` and `eval` both ask here."""
    if auto_accept is not None:
        return auto_accept
    return None if calibrator.fitted_on.get("pseudo_queries") else suggest_at


def suggest(candidates: pd.DataFrame, no_match_below: float, auto_threshold: float | None,
            auto_accept: float | None) -> pd.DataFrame:
    """Add `suggestion` (`pre-approve` at or above `auto_threshold`) and, with `auto_accept` (the
    precision the threshold was found for), approve those sources' top rows. `candidates` needs
    `source_row`, `rank` and `confidence`, and holds every candidate of each of its sources."""
    out = candidates.copy()
    is_top = out["rank"].eq(1).fillna(False).to_numpy(dtype=bool)
    per_source = _top_confidence(out, is_top)
    suggestion = np.where(per_source < no_match_below, "no_match", "review")
    if auto_threshold is not None:
        suggestion = np.where(per_source >= auto_threshold, "pre-approve", suggestion)
    out["suggestion"] = np.where(per_source.isna(), "", suggestion)
    if auto_threshold is not None and auto_accept is not None:
        _pre_approve(out, is_top, auto_accept)
    return out


def review_order(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` sorted by need of review (see the module docstring), each source's rows together;
    unchanged without a `suggestion` column."""
    if "suggestion" not in frame.columns or "confidence" not in frame.columns:
        return frame
    is_top = pd.to_numeric(frame["rank"], errors="coerce").eq(1).fillna(False).to_numpy(dtype=bool)
    tier = frame["suggestion"].map({s: i for i, s in enumerate(SUGGESTIONS)}).fillna(-1)
    keys = _source_keys(frame)
    return (frame.assign(_tier=tier, _conf=_top_confidence(frame, is_top).fillna(-1.0),
                         _rank=pd.to_numeric(frame["rank"], errors="coerce"))
                 .sort_values(["_tier", "_conf", *keys, "_rank"], kind="stable", na_position="last")
                 .drop(columns=["_tier", "_conf", "_rank"]).reset_index(drop=True))


def tally(frame: pd.DataFrame) -> Counter:
    """Sources per suggestion in one block's candidates (add the Counters of every block);
    empty without a `suggestion` column."""
    if "suggestion" not in frame.columns:
        return Counter()
    sources = frame.drop_duplicates(_source_keys(frame))["suggestion"].replace("", NO_CANDIDATES)
    return Counter({str(name): int(n) for name, n in sources.value_counts().items()})


def _source_keys(frame: pd.DataFrame) -> list[str]:
    """The columns naming one source: its row, and its list when several are mapped together."""
    return [c for c in (SOURCE_FILE_COLUMN, "source_row") if c in frame.columns]


def _top_confidence(frame: pd.DataFrame, is_top: np.ndarray) -> pd.Series:
    """Each row's source's top-candidate confidence (NaN for a source without candidates)."""
    confidence = pd.to_numeric(frame["confidence"], errors="coerce")
    top = pd.Series(np.where(is_top, confidence, np.nan), index=frame.index)
    return top.groupby([frame[k] for k in _source_keys(frame)]).transform("max")


def _pre_approve(out: pd.DataFrame, is_top: np.ndarray, auto_accept: float) -> None:
    """Approve the top row of pre-approve sources nobody decided on (the memory may have)."""
    for column in ("decision", "reviewer"):
        if column not in out.columns:
            out[column] = ""
    undecided = out.groupby("source_row")["decision"].transform(
        lambda d: d.fillna("").isin(["", "unchecked"]).all())
    pick = is_top & (out["suggestion"] == "pre-approve").to_numpy() & undecided.to_numpy()
    out.loc[pick, "decision"] = "approved"
    out.loc[pick, "reviewer"] = f"{AUTO_ACCEPT_BY} {auto_accept:g}"
