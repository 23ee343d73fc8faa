"""`codemap harmonise`: several sites' reviewed mappings → one crosswalk, its conflicts and
coverage (the work is codemap.review.harmonise)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..config import SAME_MEANING_MODEL, EncoderConfig, HarmoniseConfig
from .command import progress_bars, setup_logging, user_errors
from .options import Model

app = typer.Typer()


@app.command("harmonise")
@user_errors
def harmonise_command(
    site: Optional[List[str]] = typer.Option(
        None, "--site", "-s", help="A site's reviewed workbook, NAME=FILE; or FILE, named by the "
                                   "file name before its first dot. Give it once per site."),
    memory: Optional[Path] = typer.Option(None, "--memory",
                                          help="Read every site from this mapping memory "
                                               "(`apply --memory`) instead; a site per workbook."),
    output: Path = typer.Option(..., "--output", "-o", help="Folder to write (replaced whole)."),
    target: Optional[str] = typer.Option(None, "--target", "-t",
                                         show_default="the workbooks' run sheets",
                                         help="Check the mappings against this vocabulary (e.g. a "
                                              "newer release, for its deprecated codes)."),
    name_threshold: Optional[float] = typer.Option(
        None, "--name-threshold", min=-1.0, max=1.0, show_default="calibrated",
        help="Encoder cosine at which two sites' names mean the same."),
    name_precision: float = typer.Option(HarmoniseConfig.name_precision, "--name-precision",
                                         min=0.5, max=1.0,
                                         help="Precision the name threshold is calibrated at."),
    model: Model = SAME_MEANING_MODEL,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines."),
) -> None:
    """Put several sites' approved mappings side by side per target concept, with conflicts and
    coverage: harmonised.xlsx plus CSV, SSSOM and OMOP files in one folder.

    Example: codemap harmonise -s boston=boston.reviewed.xlsx -s leeds=leeds.reviewed.xlsx -o crosswalk/
    """
    from ..review.harmonise import harmonise, parse_sites

    config = HarmoniseConfig(output=output, sites=parse_sites(site or []), memory=memory,
                             target=target, name_threshold=name_threshold,
                             name_precision=name_precision, encoder=EncoderConfig(model=model))
    setup_logging(False, quiet)
    result = harmonise(config, progress=progress_bars(quiet))
    for name, table in result.tables.items():
        typer.echo(f"{name}: {len(table)} rows")
    typer.echo(f"same-meaning threshold {result.threshold}")
    typer.echo(f"wrote {output}")
