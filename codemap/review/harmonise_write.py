"""Write a harmonisation into a folder: the workbook for people, the files for pipelines.

- `harmonised.xlsx`: one sheet per table (crosswalk, conflicts, site_coverage,
  concept_coverage) and a run sheet, as the review workbook is written: header frozen, autofilter,
  every text cell a string (never a formula); a site's empty crosswalk cells are shaded grey, so
  "no mapping here" is seen, not guessed;
- `<sheet>.csv` per table, text cells formula-escaped as every codemap CSV;
- `sssom/<site>.sssom.tsv`: the site's approved mappings as one SSSOM mapping set;
- `omop/<site>.source_to_concept_map.tsv`: the same as OMOP rows, when the target has concept ids.

The writer's caller (harmonise.write_harmonised) writes into a staging folder and swaps it in.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..config import ApplyConfig
from ..write.writers import escape_formula, write_cell, write_mappings, write_run_sheet
from .apply import approved_mappings

WORKBOOK = "harmonised.xlsx"
_WIDTHS = {"target_name": 48, "detail": 70, "source_text": 30, "other_source_text": 30,
           "missing_at": 30, "origin": 40}


def write_folder(result, folder: Path) -> None:
    """`result` is a harmonise.Harmonised; `folder` exists and is empty."""
    folder = Path(folder)
    _write_workbook(result.tables, folder / WORKBOOK, _run(result))
    for name, table in result.tables.items():
        escaped = table.apply(lambda col: col.map(escape_formula) if col.dtype == object else col)
        escaped.to_csv(folder / f"{name}.csv", index=False)
    from .. import __version__

    has_ids = "concept_id" in result.vocab.concepts.columns
    for site in result.sites:
        mappings = approved_mappings(site.reviews.assign(source_row="", score="", rank=""),
                                     result.vocab)
        write_mappings(mappings, site.reviews, _apply_config(site, folder / "sssom" /
                                                             f"{site.name}.sssom.tsv", "sssom"),
                       result.vocab, {"source": site.name, "codemap_version": __version__})
        if has_ids:
            write_mappings(mappings, site.reviews, _apply_config(
                site, folder / "omop" / f"{site.name}.source_to_concept_map.tsv", "omop"),
                result.vocab, {"source": site.name, "codemap_version": __version__})


def _apply_config(site, output: Path, fmt: str) -> ApplyConfig:
    return ApplyConfig(workbook=output, output=output, format=fmt,
                       source_vocabulary=site.name[:20],
                       mapping_set_id=f"urn:codemap:harmonised:{site.name}")


def _run(result) -> dict:
    from .. import __version__

    vocab = result.vocab
    run = {"codemap_version": __version__, "date": pd.Timestamp.now(tz="UTC").isoformat(timespec="seconds"),
           "target": vocab.id, "target_version": vocab.version, "name_threshold": result.threshold,
           "omop_files": "written" if "concept_id" in vocab.concepts.columns
           else f"not written: {vocab.id} has no OMOP concept ids"}
    run.update({f"site {s.name}": s.origin for s in result.sites})
    return run


def _write_workbook(tables: dict[str, pd.DataFrame], path: Path, run: dict) -> None:
    import xlsxwriter  # imported here, as in writers: CSV-only callers do not need it

    book = xlsxwriter.Workbook(str(path), {"strings_to_formulas": False, "strings_to_urls": False,
                                           "nan_inf_to_errors": True})
    header = book.add_format({"bold": True, "bg_color": "#DDE4EE", "border": 1, "text_wrap": True})
    plain = book.add_format({})
    missing = book.add_format({"bg_color": "#D9D9D9"})
    for name, table in tables.items():
        _write_sheet(book.add_worksheet(name), table, header, plain,
                     missing if name == "crosswalk" else None)
    write_run_sheet(book, run, header)
    book.close()


def _write_sheet(sheet, table: pd.DataFrame, header, plain, missing) -> None:
    columns = list(table.columns)
    site_cells = {c for c, name in enumerate(columns) if missing is not None and
                  name.endswith(("_code", "_name", "_unit", "_equivalence")) and
                  name not in ("target_code", "target_name")}
    for c, name in enumerate(columns):
        sheet.write_string(0, c, name, header)
    for r, values in enumerate(table.itertuples(index=False), start=1):
        for c, value in enumerate(values):
            empty = value == "" or value is None
            write_cell(sheet, r, c, value, missing if c in site_cells and empty else plain)
    sheet.freeze_panes(1, 0)
    sheet.autofilter(0, 0, max(len(table), 1), len(columns) - 1)
    for c, name in enumerate(columns):
        sheet.set_column(c, c, _WIDTHS.get(name, max(10, min(len(name) + 2, 24))))
