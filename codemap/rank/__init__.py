"""Rank: search hits → candidates, fused with lexical scores, re-scored by lab and drug evidence
and optionally re-ordered by a cross-encoder."""
from .hybrid import for_languages, rank_hybrid
from .lexical import load_or_build_lexical
from .prepare import evidence_scorers, row_fields
from .rerank import CrossEncoder, rerank_candidates

__all__ = ["CrossEncoder", "evidence_scorers", "for_languages", "load_or_build_lexical",
           "rank_hybrid", "rerank_candidates", "row_fields"]
