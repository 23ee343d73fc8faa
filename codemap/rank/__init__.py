"""Rank: search hits → candidates, fused with lexical scores and re-scored by lab and drug evidence."""
