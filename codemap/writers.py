"""Write candidates: the xlsx review workbook, or CSV/TSV for pipelines. Always atomically.

Spreadsheet safety: a cell whose text starts with = + - @ (or a tab or carriage return) would run
as a formula when a spreadsheet opens the file. The workbook writes every text cell as a string;
CSV/TSV text cells get a leading apostrophe (the OWASP recommendation), numbers are left alone.
"""
from __future__ import annotations

import math
import numbers
from pathlib import Path

import pandas as pd

from .errors import CodemapError
from .files import atomic_path

DECISIONS = ["approve", "reject", "flag", "ignore"]
REVIEW_COLUMNS = ["decision", "comment"]
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
OUTPUT_SUFFIXES = {".xlsx", ".csv", ".tsv"}
EXCEL_MAX_ROWS = 1_048_576


def default_output(source: Path) -> Path:
    """`labs.xlsx` → `labs.codemap.xlsx`, beside the input."""
    return source.with_name(f"{source.stem}.codemap.xlsx")


def write_candidates(frame: pd.DataFrame, path: str | Path, run: dict) -> Path:
    """Write candidates to .xlsx (review workbook), .csv or .tsv, chosen by the suffix.

    Raises CodemapError for an unknown suffix or more rows than one sheet holds.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in OUTPUT_SUFFIXES:
        raise CodemapError(f"{path}: unknown output type {suffix or '(none)'}; use .xlsx, .csv or .tsv")
    with atomic_path(path) as tmp:
        if suffix == ".xlsx":
            write_review_workbook(frame, tmp, run)
        else:
            escaped = frame.apply(lambda col: col.map(escape_formula)
                                  if pd.api.types.is_string_dtype(col) else col)
            escaped.to_csv(tmp, sep="\t" if suffix == ".tsv" else ",", index=False,
                           encoding="utf-8")
    return path


def escape_formula(value):
    """Prefix text that a spreadsheet would run as a formula with an apostrophe."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def write_review_workbook(frame: pd.DataFrame, path: Path, run: dict) -> None:
    """The review workbook: one sheet of candidates grouped by source row, one of run metadata.

    Candidates rank 2+ are outline level 1 (collapsible to the top candidate per source), score
    cells are shaded red→green, `decision` has a drop-down, header frozen with an autofilter.
    """
    import xlsxwriter  # imported here: CSV-only runs do not need it

    if len(frame) + 1 > EXCEL_MAX_ROWS:
        raise CodemapError(f"{path.name}: {len(frame):,} rows do not fit one sheet "
                           f"({EXCEL_MAX_ROWS:,} max); write .csv or .tsv instead")
    table = frame.copy()
    for column in REVIEW_COLUMNS:
        if column not in table.columns:
            table[column] = ""
    book = xlsxwriter.Workbook(str(path), {"strings_to_formulas": False, "strings_to_urls": False,
                                           "nan_inf_to_errors": True})
    header = book.add_format({"bold": True, "bg_color": "#DDE4EE", "border": 1, "text_wrap": True})
    band = [book.add_format({}), book.add_format({"bg_color": "#F3F6FA"})]
    score_fmt = [book.add_format({"num_format": "0.000"}),
                 book.add_format({"num_format": "0.000", "bg_color": "#F3F6FA"})]
    sheet = book.add_worksheet("candidates")
    columns = list(table.columns)
    for c, name in enumerate(columns):
        sheet.write_string(0, c, name, header)
    source_rows = table["source_row"].to_numpy()
    ranks = table["rank"].to_numpy() if "rank" in table else [None] * len(table)
    group = 0
    for r, values in enumerate(table.itertuples(index=False), start=1):
        if r > 1 and source_rows[r - 1] != source_rows[r - 2]:
            group ^= 1
        for c, value in enumerate(values):
            _write_cell(sheet, r, c, value, score_fmt[group] if columns[c] == "score" else band[group])
        rank = ranks[r - 1]
        if rank is not None and not pd.isna(rank) and int(rank) > 1:
            sheet.set_row(r, None, None, {"level": 1})
    last = len(table)
    sheet.freeze_panes(1, 0)
    sheet.autofilter(0, 0, last, len(columns) - 1)
    widths = {"source_text": 36, "target_name": 48, "matched_name": 40, "comment": 30, "flag": 18,
              "explanation": 60}
    for c, name in enumerate(columns):
        sheet.set_column(c, c, widths.get(name, max(10, min(len(name) + 2, 18))))
    if last:
        if "score" in columns:
            col = columns.index("score")
            sheet.conditional_format(1, col, last, col, {
                "type": "3_color_scale", "min_type": "num", "min_value": 0.3, "min_color": "#F8696B",
                "mid_type": "num", "mid_value": 0.6, "mid_color": "#FFEB84",
                "max_type": "num", "max_value": 0.9, "max_color": "#63BE7B"})
        col = columns.index("decision")
        sheet.data_validation(1, col, last, col, {
            "validate": "list", "source": DECISIONS, "error_title": "decision",
            "error_message": f"choose one of: {', '.join(DECISIONS)}"})
    _write_run_sheet(book, run, header)
    book.close()


def _write_cell(sheet, r: int, c: int, value, fmt) -> None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        sheet.write_blank(r, c, None, fmt)
    elif isinstance(value, bool):
        sheet.write_boolean(r, c, value, fmt)
    elif isinstance(value, numbers.Integral):
        sheet.write_number(r, c, int(value), fmt)
    elif isinstance(value, numbers.Real):
        sheet.write_number(r, c, float(value), fmt)
    else:
        sheet.write_string(r, c, str(value), fmt)


def _write_run_sheet(book, run: dict, header) -> None:
    sheet = book.add_worksheet("run")
    sheet.write_string(0, 0, "setting", header)
    sheet.write_string(0, 1, "value", header)
    for r, (key, value) in enumerate(run.items(), start=1):
        sheet.write_string(r, 0, str(key))
        sheet.write_string(r, 1, str(value))
    sheet.set_column(0, 0, 22)
    sheet.set_column(1, 1, 100)
