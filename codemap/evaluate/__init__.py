"""Evaluate: ranking quality on gold (query, code) pairs."""
