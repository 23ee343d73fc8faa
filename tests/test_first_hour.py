"""What a new user meets in the first hour, each a case that once went wrong silently: a list
without a header row, two inputs with one default output name, a reviewed workbook overwritten
by a rerun, a summary wrapped mid-phrase in a log."""
import logging

import openpyxl
import pandas as pd
import pytest
from typer.testing import CliRunner

from codemap.cli import app

from .conftest import small_target

runner = CliRunner()


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    return small_target(tmp_path_factory.mktemp("first-hour"),
                        ["Sodium", "Potassium serum", "Glucose fasting"])


def _map(source, target, *options):
    path, cache = target
    return runner.invoke(app, ["map", str(source), "--target", str(path), "--cache-dir",
                               str(cache), *options])


def test_a_list_without_header_row_keeps_its_first_row(tmp_path, target, caplog):
    source = tmp_path / "list.csv"
    source.write_text("Sodium,mmol/L\nPotassium,mmol/L\nGlucose,mg/dL\n")
    with caplog.at_level(logging.WARNING):
        guessed = _map(source, target, "--text-col", "Sodium", "-o", str(tmp_path / "a.csv"), "-q")
    assert guessed.exit_code == 0, guessed.output
    warning = " ".join(r.getMessage() for r in caplog.records if "header row" in r.getMessage())
    assert "the header row looks like data ('Sodium': a name in the target, 'mmol/L': a unit)" \
           in warning and "pass --no-header" in warning
    assert pd.read_csv(tmp_path / "a.csv", dtype=str)["source_row"].nunique() == 2  # row 1 lost
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        whole = _map(source, target, "--no-header", "--text-col", "1", "--unit-col", "2",
                     "-o", str(tmp_path / "b.csv"), "-q")
    assert whole.exit_code == 0, whole.output
    assert not [r for r in caplog.records if "header row" in r.getMessage()]
    frame = pd.read_csv(tmp_path / "b.csv", dtype=str)
    first = frame[frame["rank"] == "1"]
    assert list(first["source_row"]) == ["1", "2", "3"]
    assert list(first["source_text"]) == ["Sodium", "Potassium", "Glucose"]
    assert first["target_code"].iloc[0] == "T1"


def test_a_workbook_of_another_list_or_with_reviews_is_not_replaced(tmp_path, target):
    csv = tmp_path / "labs.csv"
    csv.write_text("code,name\n1,Sodium\n2,Potassium\n")
    book = tmp_path / "labs.xlsx"
    pd.read_csv(csv, dtype=str).to_excel(book, index=False)
    first = _map(csv, target, "-q")
    workbook = tmp_path / "labs.codemap.xlsx"  # the default output of both lists
    assert first.exit_code == 0 and workbook.exists()
    second = _map(book, target, "-q")
    assert second.exit_code == 2
    assert f"holds the candidates of {csv}, not {book}" in second.output
    assert _map(book, target, "-q", "--force").exit_code == 0
    # A person's decision in the workbook: a rerun of the same list must not erase it.
    wb = openpyxl.load_workbook(workbook)
    sheet = wb["candidates"]
    header = [cell.value for cell in sheet[1]]
    sheet.cell(row=2, column=header.index("decision") + 1, value="approved")
    wb.save(workbook)
    again = _map(book, target, "-q")
    assert again.exit_code == 2 and "holds 1 review decisions" in again.output
    assert _map(book, target, "-q", "--force").exit_code == 0


def test_summary_lines_are_whole_when_piped(tmp_path, target):
    source = tmp_path / "list.csv"
    source.write_text("code,name\n1,Sodium\n")
    result = _map(source, target, "-o", str(tmp_path / "out.csv"))
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith("codemap map"))
    assert line.endswith("concepts)")  # "… (3 concepts)" on the line it starts on
