"""`codemap map` as one library call: check the code lists and the output against the engine
asked for, then map with the local engine (one list → one file) or the Ray engine (several lists
→ a folder of Parquet parts)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..config import BLOCK_ROWS, MapConfig, RayConfig
from ..errors import CodemapError
from ..write.writers import OUTPUT_SUFFIXES, check_output, default_output
from .local import MapResult, map_to_file
from .ray import map_with_ray


def map_sources(config: MapConfig, sources: list[Path], output: Path | None = None,
                ray: RayConfig | None = None,
                block_rows: int = BLOCK_ROWS) -> tuple[MapResult | dict, Path]:
    """Map `sources` onto `config.target` and write them; returns what the engine reports (the
    local engine's MapResult, the Ray engine's counts) and where it wrote.

    Without `ray`, one list is mapped here into `output` (.xlsx, .csv, .tsv or .parquet; by
    default `SOURCE.codemap.xlsx` beside it). With `ray`, every list is mapped into the folder
    `output`. An LLM selector without a log file logs beside the output.

    Raises CodemapError for several lists without Ray, an output of the wrong kind for the
    engine, and whatever the engine raises.
    """
    output = _output(sources, output, ray)
    config = replace(config, source=sources[0], llm=_llm_logged_beside(config.llm, output))
    if ray is None:
        return map_to_file(config, output, block_rows), output
    return map_with_ray(config, sources, ray, output), output


def _output(sources: list[Path], output: Path | None, ray: RayConfig | None) -> Path:
    if ray is None:
        if len(sources) > 1:
            raise CodemapError(f"{len(sources)} code lists given; map them one at a time, or all "
                               "together with --engine ray -o FOLDER")
        return check_output(output or default_output(sources[0]))
    if output is None or output.suffix.lower() in OUTPUT_SUFFIXES:
        raise CodemapError(f"{output or '(no -o)'}: --engine ray writes a folder of Parquet parts; "
                           "give -o a folder, e.g. -o mapped/")
    return output


def _llm_logged_beside(llm, output: Path):
    """The LLM selector's settings with its log beside `output` (OUTPUT.llm.jsonl) unless set."""
    if llm is None or llm.log is not None:
        return llm
    return replace(llm, log=output.with_name(f"{output.stem}.llm.jsonl"))
