"""Engines: run the whole pipeline, in this process (local) or over a Ray cluster (ray: Ray itself
is imported only by a run that uses it, from the `ray` extra); `map_sources` picks one."""
from .local import MapResult, Mapper, map_codes, map_to_file
from .run import map_sources

__all__ = ["MapResult", "Mapper", "map_codes", "map_sources", "map_to_file"]
