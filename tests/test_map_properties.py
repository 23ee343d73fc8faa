"""Property test of the whole map pipeline: any list a spreadsheet or a text export can hold
(unicode of every script, empty cells, quotes, delimiters inside cells, very long and very short
names) is mapped by the real CLI without a traceback, and every row of it is in the output.
The 100,000-row version is a benchmark (benchmarks/inputs/map_fuzz.py)."""
import csv

import openpyxl
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from codemap.cli import app

from .conftest import small_target

runner = CliRunner()
# Printable text of every script with tabs and newlines (no other control characters: no export
# holds them, and the reader rightly refuses a file full of them as binary).
_CHARS = st.characters(exclude_categories=("Cs", "Cc"), include_characters="\t\n\"',;|")
names = st.one_of(st.text(_CHARS, max_size=3), st.text(_CHARS, max_size=40),
                  st.text(_CHARS, min_size=200, max_size=400))
rows = st.lists(st.tuples(st.text(_CHARS, max_size=8), names, st.sampled_from(["", "mmol/L", "%"])),
                min_size=1, max_size=12)


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    return small_target(tmp_path_factory.mktemp("fuzz"),
                        ["Potassium serum", "Sodium serum", "Glucose fasting", "Hemoglobin"])


def _write(path, data, delimiter):
    if path.suffix == ".xlsx":
        book = openpyxl.Workbook()
        book.active.append(["code", "name", "unit"])
        for row in data:  # a leading "=" is a formula to a spreadsheet, not text
            book.active.append([f"'{c}" if c.startswith("=") else c for c in row])
        book.save(path)
    else:
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, delimiter=delimiter)
            writer.writerow(["code", "name", "unit"])
            writer.writerows(data)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=rows, form=st.sampled_from([(".csv", ","), (".csv", ";"), (".tsv", "\t"), (".xlsx", "")]))
def test_any_list_maps_without_traceback_and_keeps_every_row(tmp_path_factory, target, data, form):
    folder = tmp_path_factory.mktemp("list")
    suffix, delimiter = form
    source = folder / f"list{suffix}"
    _write(source, data, delimiter)
    output = folder / "out.csv"
    path, cache = target
    result = runner.invoke(app, ["map", str(source), "--target", str(path), "--cache-dir",
                                 str(cache), "-o", str(output), "-q", "--text-col", "name",
                                 "--code-col", "code", "--unit-col", "unit"])
    assert "Traceback" not in result.output and not isinstance(result.exception, Exception) \
        or isinstance(result.exception, SystemExit), result.output
    if result.exit_code == 2:  # a list that is no list (nothing but blank rows): one line
        assert result.output.count("\n") == 1 and not output.exists(), result.output
        return
    assert result.exit_code == 0, result.output
    mapped = pd.read_csv(output, dtype=str, keep_default_na=False)
    read = set(mapped["source_row"].astype(int))
    if suffix == ".xlsx":  # a workbook row with no content at all is no row to the reader
        assert {n for n, row in enumerate(data, start=2) if any(row)} <= read, (read, data)
        assert read <= set(range(2, 2 + len(data)))
    else:
        assert read == set(range(2, 2 + len(data))), (read, data)
