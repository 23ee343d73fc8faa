"""Engines: run the whole pipeline, in this process (local) or over a Ray cluster (ray)."""
