"""Rank: search hits → candidates, fused with lexical scores, re-scored by lab and drug evidence
and optionally re-ordered by a cross-encoder."""
from .hybrid import rank_hybrid
from .lexical import load_or_build_lexical
from .prepare import evidence_scorers, ranking_for, row_fields
from .rerank import CrossEncoder, rerank_candidates

__all__ = ["CrossEncoder", "evidence_scorers", "load_or_build_lexical", "rank_hybrid",
           "ranking_for", "rerank_candidates", "row_fields"]
