"""Evaluate: ranking quality on gold (query, code) pairs (`codemap eval`)."""
from .gold import DEFAULT_METHOD, GoldQueries, eval_methods, evaluate_gold, gold_queries
from .metrics import Scores, gold_ranks, score_ranks

__all__ = ["DEFAULT_METHOD", "GoldQueries", "Scores", "eval_methods", "evaluate_gold",
           "gold_queries", "gold_ranks", "score_ranks"]
