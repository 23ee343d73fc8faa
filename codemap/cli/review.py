"""`codemap apply` and `codemap review`: a reviewed workbook turned into mapping files, and
review workbooks made from a Ray run's folder of parts."""
from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from .command import user_errors

app = typer.Typer()


class MappingFormat(str, Enum):
    omop = "omop"
    sssom = "sssom"
    usagi = "usagi"
    csv = "csv"


@app.command("apply")
@user_errors
def apply_command(
    workbook: Path = typer.Argument(..., help="Review workbook written by `codemap map`, edited."),
    output: Path = typer.Option(..., "--output", "-o", help="Mapping file to write."),
    fmt: MappingFormat = typer.Option(MappingFormat.csv, "--format", "-f",
                                      help="omop (source_to_concept_map, tab-separated), sssom "
                                           "(TSV with YAML header), usagi (Usagi CSV) or csv."),
    target: Optional[str] = typer.Option(None, "--target", "-t",
                                         show_default="the workbook's run sheet",
                                         help="Target vocabulary."),
    approve_above: Optional[float] = typer.Option(None, "--approve-above", min=0.0, max=1.0,
                                                  help="Approve unreviewed rank-1 candidates with "
                                                       "at least this score, marked automatic."),
    allow_multiple: bool = typer.Option(False, "--allow-multiple",
                                        help="Allow several approved targets per source."),
    unmapped_as_zero: bool = typer.Option(False, "--unmapped-as-zero",
                                          help="omop: write unmapped sources with concept 0."),
    source_vocabulary: str = typer.Option("", "--source-vocabulary",
                                          show_default="source file name",
                                          help="omop: source_vocabulary_id."),
    memory: Optional[Path] = typer.Option(None, "--memory",
                                          help="Store the decisions in this mapping memory (.db): "
                                               "the next `map --memory` pre-fills them."),
    site: Optional[str] = typer.Option(None, "--site", show_default="the workbook's name before "
                                                                     "its first dot",
                                       help="The site these decisions are from, in the memory."),
) -> None:
    """Validate a reviewed workbook and write its approved mappings.

    Example: codemap apply examples/labs.codemap.xlsx -o labs.sssom.tsv --format sssom
    """
    from ..config import ApplyConfig
    from ..review import apply_reviews

    result = apply_reviews(ApplyConfig(
        workbook=workbook, output=output, format=fmt.value, target=target,
        approve_above=approve_above, allow_multiple=allow_multiple,
        unmapped_as_zero=unmapped_as_zero, source_vocabulary=source_vocabulary, memory=memory,
        site=site))
    c = result.counts
    typer.echo(f"{c['sources']} sources, {c['approved']} approved mappings "
               f"({c['automatic']} automatic, {c['typed']} typed by a reviewer) → {output}")


@app.command("review")
@user_errors
def review_command(
    parts: Path = typer.Argument(..., help="Output folder of `codemap map --engine ray`."),
    output: Path = typer.Option(..., "--output", "-o", help="Review workbook (.xlsx), or .csv/.tsv."),
    site: Optional[str] = typer.Option(None, "--site", help="One workbook per value of this column "
                                                            "(e.g. source_file, or a site column "
                                                            "of the lists)."),
    rows: Optional[int] = typer.Option(None, "--rows", min=1,
                                       help="One workbook per this many source rows."),
) -> None:
    """Write review workbooks from a folder of Parquet parts (one sheet holds 1,048,576 rows:
    split big runs per site or per chunk of source rows).

    Example: codemap review mapped/ -o review.xlsx --site source_file
    """
    from ..write import write_review_parts

    for path in write_review_parts(parts, output, site=site, rows=rows):
        typer.echo(f"wrote {path}")
