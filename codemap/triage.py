"""Review triage: from calibrated confidence to what a reviewer should look at first.

Every source gets a `suggestion` (on all of its candidate rows, so one filter shows them):
- `pre-approve`: its top candidate reaches the precision asked with `map --auto-accept P` on the
  calibration's dev curve; the row is written `approved` by `codemap --auto-accept P` (still
  reviewable: change the decision, and `apply` then treats it as a person's);
- `no_match`: its top candidate's confidence is below the no-match threshold, so most likely no
  candidate is right (a local panel, an admin item, a concept missing from the target);
- `review`: everything else.
The workbook is sorted by need of review: `review` first, then `no_match`, then `pre-approve`,
each by ascending top confidence.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

AUTO_ACCEPT_BY = "codemap --auto-accept"
SUGGESTIONS = ("review", "no_match", "pre-approve")  # also the sort order of the workbook


def triage(candidates: pd.DataFrame, no_match_below: float,
           auto_threshold: float | None, auto_accept: float | None) -> tuple[pd.DataFrame, dict]:
    """Add `suggestion`, pre-approve rows at or above `auto_threshold` (found for precision
    `auto_accept`), sort by need of review; returns the frame and the count of sources per
    suggestion. `candidates` needs `source_row`, `rank` and `confidence`."""
    out = candidates.copy()
    is_top = out["rank"].eq(1).fillna(False).to_numpy(dtype=bool)
    top_conf = pd.Series(np.where(is_top, out["confidence"], np.nan), index=out.index)
    per_source = top_conf.groupby(out["source_row"]).transform("max")
    suggestion = np.where(per_source < no_match_below, "no_match", "review")
    if auto_threshold is not None:
        suggestion = np.where(per_source >= auto_threshold, "pre-approve", suggestion)
    out["suggestion"] = np.where(per_source.isna(), "", suggestion)
    if auto_threshold is not None:
        _pre_approve(out, is_top, auto_accept)
    order = out["suggestion"].map({s: i for i, s in enumerate(SUGGESTIONS)}).fillna(-1)
    out = (out.assign(_tier=order, _conf=per_source.fillna(-1.0))
              .sort_values(["_tier", "_conf", "source_row", "rank"], kind="stable",
                           na_position="last")
              .drop(columns=["_tier", "_conf"]).reset_index(drop=True))
    sources = out.drop_duplicates("source_row")["suggestion"].replace("", "no candidates")
    return out, {name: int(n) for name, n in sources.value_counts().items()}


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
