"""Property tests: any text a spreadsheet can hold survives writing and reading back, and column
detection either resolves or raises CodemapError, never anything else."""
import csv

import openpyxl
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from codemap.errors import CodemapError
from codemap.read import header_key, read_code_list, read_table

# Printable text of every script, with tabs and newlines; no other control characters (no
# spreadsheet or CSV export holds them, and the reader takes them as a sign of a binary file).
_CELL_CHARS = st.characters(exclude_categories=("Cs", "Cc"), include_characters="\t\n")
cells = st.text(_CELL_CHARS, max_size=30)
rows = st.lists(st.tuples(cells, cells), min_size=1, max_size=8)
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def _round_trip(tmp_path, suffix, data, quoting=csv.QUOTE_MINIMAL):
    path = tmp_path / f"list{suffix}"
    frame = pd.DataFrame(data, columns=["code", "name"])
    if suffix == ".xlsx":
        book = openpyxl.Workbook()
        book.active.append(["code", "name"])
        for row in data:
            book.active.append(list(row))
        book.save(path)
    else:
        frame.to_csv(path, sep="\t" if suffix == ".tsv" else ",", index=False,
                     quoting=quoting)
    return frame, read_table(path)


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
@SETTINGS
@given(data=rows)
# A quoted cell holding '"|' once made the delimiter sniffer guess "|" for a comma file.
@example(data=[('"|', '')])
@example(data=[('"|', '|')])
@example(data=[('', '\n"|0')])
# A quoted last cell holding only a line break, at the end of the file, closes: it is no cut quote.
@example(data=[('', '\n')])
def test_delimited_text_cells_round_trip(tmp_path, suffix, data):
    written, read = _round_trip(tmp_path, suffix, data)
    assert read.values.tolist() == written.values.tolist()


# A string cell beginning with "=" is a formula to openpyxl, so it is not plain text in a workbook.
@SETTINGS
@given(data=st.lists(st.tuples(cells.filter(lambda s: not s.startswith("=")),
                               cells.filter(lambda s: not s.startswith("="))), min_size=1, max_size=8))
def test_workbook_text_cells_round_trip(tmp_path, data):
    written, read = _round_trip(tmp_path, ".xlsx", data)
    # An all-empty last row is no row to a workbook; anything before it is kept.
    while len(written) > len(read) and not "".join(written.iloc[-1]):
        written = written.iloc[:-1]
    assert read.values.tolist() == written.values.tolist()


headers = st.lists(st.one_of(st.sampled_from(["code", "Code", "ID", "name", "Name", "Bezeichnung",
                                              "unit", "Einheit", "specimen", "Material", "key",
                                              "title", "Libellé", "Código", ""]),
                             st.text(_CELL_CHARS.filter(lambda c: c not in '\t\n",'), max_size=12)),
                   min_size=1, max_size=6)


@SETTINGS
@given(header=headers)
def test_column_detection_resolves_or_says_why(tmp_path, header):
    path = tmp_path / "list.tsv"
    path.write_text("\t".join(header) + "\n" + "\t".join("x" for _ in header) + "\n", encoding="utf-8")
    try:
        table = read_code_list(path)
    except CodemapError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
        return
    assert table.text_cols and all(c in table.frame.columns for c in table.text_cols)
    roles = [c for c in (table.code_col, table.unit_col, table.specimen_col) if c is not None]
    assert len(set(roles) | set(table.text_cols)) == len(roles) + len(table.text_cols)


@given(name=st.text(max_size=20))
def test_header_key_is_folded_ascii(name):
    key = header_key(name)
    assert key == header_key(key) and all(c.isascii() and c.isalnum() and not c.isupper() for c in key)
