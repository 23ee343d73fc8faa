"""Rank: search hits → candidates, fused with lexical scores, re-scored by the target domain's
evidence; the one pipeline assembly (assembly.Ranking) every caller ranks with."""
from .assembly import Ranking
from .hybrid import rank_hybrid
from .lexical import load_or_build_lexical
from .prepare import ranking_for, row_fields
from .rerank import CrossEncoder, rerank_candidates

__all__ = ["CrossEncoder", "Ranking", "load_or_build_lexical", "rank_hybrid", "ranking_for",
           "rerank_candidates", "row_fields"]
