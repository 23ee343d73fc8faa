"""Search hits → candidates: the top-k distinct concepts per source row, each scored by its best
name."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .config import RankConfig
from .index import NameIndex
from .vocab import Vocabulary

CANDIDATE_COLUMNS = ["query", "rank", "target_code", "target_name", "matched_name", "score"]


def rank_candidates(index: NameIndex, vocab: Vocabulary, queries: np.ndarray,
                    config: RankConfig = RankConfig()) -> pd.DataFrame:
    """Rank concepts for each query vector.

    Returns one row per (query, candidate): `query` (the query's position), `rank` (1-based),
    `target_code`, `target_name` (preferred name), `matched_name` (the name that scored) and
    `score` (cosine similarity of the best name).
    """
    codes = vocab.names["code"].to_numpy()
    names = vocab.names["name"].to_numpy()
    preferred = dict(zip(vocab.concepts["code"], vocab.concepts["name"]))
    fetch = config.top_k * config.names_per_candidate
    scores, hits = index.search(queries, fetch)
    rows: list[tuple] = []
    for q in range(len(queries)):
        picked = _distinct(codes, scores[q], hits[q], config.top_k)
        if len(picked) < config.top_k and hits.shape[1] < index.faiss_index.ntotal:
            # Many names of the same few concepts filled the fetch: search this query deeper.
            more_scores, more_hits = index.search(queries[q:q + 1], index.faiss_index.ntotal)
            picked = _distinct(codes, more_scores[0], more_hits[0], config.top_k)
        for rank, (code, row, score) in enumerate(picked, start=1):
            rows.append((q, rank, code, preferred.get(code, names[row]), names[row], round(float(score), 4)))
    return pd.DataFrame(rows, columns=CANDIDATE_COLUMNS)


def _distinct(codes: np.ndarray, scores: np.ndarray, hits: np.ndarray, k: int) -> list[tuple]:
    """The first k distinct concepts among hits sorted by score (a concept's best name wins)."""
    seen: set = set()
    picked = []
    for score, row in zip(scores, hits):
        if row < 0:
            break
        code = codes[row]
        if code in seen:
            continue
        seen.add(code)
        picked.append((code, int(row), score))
        if len(picked) == k:
            break
    return picked
