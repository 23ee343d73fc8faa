"""`codemap map` as one library call: check the code lists and the output against the engine
asked for, then map with the local engine (one list → one file) or the Ray engine (several lists
→ a folder of Parquet parts)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..config import BLOCK_ROWS, MapConfig, RayConfig
from ..decide.triage import AUTO_ACCEPT_BY
from ..errors import CodemapError
from ..review.apply import read_reviewed_workbook
from ..write.writers import OUTPUT_SUFFIXES, check_output, default_output
from .local import MapResult, map_to_file
from .ray import map_with_ray


def map_sources(config: MapConfig, sources: list[Path], output: Path | None = None,
                ray: RayConfig | None = None, block_rows: int = BLOCK_ROWS,
                force: bool = False) -> tuple[MapResult | dict, Path]:
    """Map `sources` onto `config.target` and write them; returns what the engine reports (the
    local engine's MapResult, the Ray engine's counts) and where it wrote.

    Without `ray`, one list is mapped here into `output` (.xlsx, .csv, .tsv or .parquet; by
    default `SOURCE.codemap.xlsx` beside it). With `ray`, every list is mapped into the folder
    `output`. An LLM selector without a log file logs beside the output.

    An existing review workbook is replaced only when it was made from the same list and holds
    no review decision, unless `force` (check_replace).

    Raises CodemapError for several lists without Ray, an output of the wrong kind for the
    engine, a workbook it must not replace, and whatever the engine raises.
    """
    output = _output(sources, output, ray)
    if ray is None and not force:
        check_replace(output, sources[0])
    config = replace(config, source=sources[0], llm=_llm_logged_beside(config.llm, output))
    if ray is None:
        return map_to_file(config, output, block_rows), output
    return map_with_ray(config, sources, ray, output), output


def check_replace(output: Path, source: Path) -> None:
    """Refuse to replace a review workbook made from another list (`labs.csv` and `labs.xlsx`
    both default to `labs.codemap.xlsx`) or one that holds review decisions. CSV, TSV and
    Parquet outputs keep no record of their list and are replaced as named."""
    if output.suffix.lower() != ".xlsx" or not output.exists():
        return
    try:
        frame, run = read_reviewed_workbook(output)
    except CodemapError:
        raise CodemapError(f"{output}: exists and is not a codemap review workbook; choose "
                           f"another -o, or pass --force to replace it") from None
    made_from = run.get("source", "")
    if made_from and Path(made_from).resolve() != Path(source).resolve():
        raise CodemapError(f"{output}: holds the candidates of {made_from}, not {source}; "
                           f"choose another -o, or pass --force to replace it")
    # Anything a person typed: a decision (codemap's own pre-approvals aside) or a comment.
    decided = (~frame["decision"].str.lower().isin(["", "unchecked"])
               & ~frame["reviewer"].str.startswith(AUTO_ACCEPT_BY)) | (frame["comment"] != "")
    if decided.any():
        raise CodemapError(f"{output}: holds {int(decided.sum()):,} review decisions that a new "
                           f"run would overwrite; choose another -o, or pass --force")


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
