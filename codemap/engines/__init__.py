"""Engines: run the whole pipeline, in this process (local) or over a Ray cluster (ray; imported
on its own, it needs the `ray` extra)."""
from .local import MapResult, Mapper, map_codes, map_to_file

__all__ = ["MapResult", "Mapper", "map_codes", "map_to_file"]
