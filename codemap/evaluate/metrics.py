"""Ranking quality against gold mappings: pure functions over ranked candidate lists."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

KS = (1, 5, 10)


@dataclass(frozen=True)
class Scores:
    """acc@k (share of queries whose gold code is in the top k) and mean reciprocal rank."""

    n: int
    acc: dict[int, float]
    mrr: float

    def as_row(self) -> dict:
        return {"n": self.n, **{f"acc@{k}": round(v, 4) for k, v in self.acc.items()},
                "mrr": round(self.mrr, 4)}


def gold_ranks(candidates: pd.DataFrame, gold: list[set[str]]) -> list[int | None]:
    """1-based rank of the first gold code among each query's candidates, None when absent.

    `candidates` has columns `query`, `rank`, `target_code`; `gold[q]` holds query q's right codes
    (one source term may have several acceptable targets).
    """
    best: list[int | None] = [None] * len(gold)
    ordered = candidates.sort_values(["query", "rank"], kind="stable")
    for query, rank, code in ordered[["query", "rank", "target_code"]].itertuples(index=False):
        if best[query] is None and code in gold[query]:
            best[query] = int(rank)
    return best


def score_ranks(ranks: list[int | None], ks: tuple[int, ...] = KS) -> Scores:
    """acc@k and MRR from gold ranks (None counts as a miss)."""
    n = len(ranks)
    if n == 0:
        return Scores(0, {k: 0.0 for k in ks}, 0.0)
    acc = {k: sum(1 for r in ranks if r is not None and r <= k) / n for k in ks}
    mrr = sum(1.0 / r for r in ranks if r is not None) / n
    return Scores(n, acc, mrr)
