"""A corpus of messy inputs: each one either reads exactly as a person typed it or fails with one
named CodemapError. The files are generated here so the corpus documents itself."""
import datetime
import zipfile

import openpyxl
import pandas as pd
import pytest
from msoffcrypto.format.ooxml import OOXMLFile
from typer.testing import CliRunner

from codemap.cli import app
from codemap.config import InputLimits, ReadOptions
from codemap.errors import CodemapError
from codemap.read import read_code_list

from .conftest import small_target as three_names

runner = CliRunner()


def _workbook(path, rows):
    book = openpyxl.Workbook()
    for row in rows:
        book.active.append(row)
    book.save(path)
    return path


def _encrypted_workbook(path):
    plain = _workbook(path.with_name("plain.xlsx"), [["code", "name"], ["1", "Potassium"]])
    with open(plain, "rb") as source, open(path, "wb") as target:
        OOXMLFile(source).encrypt("secret", target)
    return path


def _zip_of_text(path):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("notes.txt", "not a workbook")
    return path


# (file name, how to make it, the error message expected)
BROKEN = {
    "empty": ("list.csv", lambda p: p.write_bytes(b""), "list.csv: the file is empty"),
    "blank lines only": ("list.csv", lambda p: p.write_bytes(b"  \r\n\n"), "list.csv: the file is empty"),
    "header only": ("list.csv", lambda p: p.write_text("code,name\n"), "list.csv: has a header but no data rows"),
    "header only workbook": ("list.xlsx", lambda p: _workbook(p, [["code", "name"]]),
                             "list.xlsx: has a header but no data rows"),
    "binary with NUL bytes": ("list.csv", lambda p: p.write_bytes(bytes(range(256)) * 8),
                              "list.csv: looks like a binary file, not CSV/TSV text"),
    "binary without NUL bytes": ("list.csv", lambda p: p.write_bytes(bytes(range(1, 256)) * 8),
                                 "list.csv: looks like a binary file, not CSV/TSV text"),
    "zip of something else": ("list.xlsx", _zip_of_text, r"list.xlsx: not a readable workbook \("),
    "encrypted workbook": ("list.xlsx", _encrypted_workbook,
                           "list.xlsx: the workbook is password-protected \\(encrypted\\); save an "
                           "unprotected copy from Excel and map that"),
    "row longer than header": ("list.csv", lambda p: p.write_text("code,name\n1,K,serum\n"),
                               "list.csv: row 2 has 3 fields but the header has 2; quote fields"),
    "later row longer than header": ("list.csv", lambda p: p.write_text("code,name\n1,K\n2,Na,x\n"),
                                     "list.csv: row 3 has 3 fields but the header has 2; quote fields"),
    "no header": ("list.csv", lambda p: p.write_text(",\n1,2\n"), "list.csv: no header row found"),
}


@pytest.mark.parametrize("case", BROKEN)
def test_broken_file_is_one_named_error(tmp_path, case):
    name, make, message = BROKEN[case]
    path = tmp_path / name
    make(path)
    with pytest.raises(CodemapError, match=message):
        read_code_list(path)


def test_mixed_encodings_decode_line_by_line(tmp_path):
    path = tmp_path / "list.csv"
    path.write_bytes("code;name\n1;Hämoglobin\n".encode("utf-8") + "2;Glucose nüchtern\n".encode("cp1252"))
    assert read_code_list(path).texts == ["Hämoglobin", "Glucose nüchtern"]


def test_one_megabyte_cell_and_ten_thousand_columns_within_raised_limits(tmp_path):
    raised = ReadOptions(limits=InputLimits(cell_chars=2 << 20, columns=20_000))
    big = tmp_path / "big.csv"
    big.write_text("code,name\n1," + "x" * (1 << 20) + "\n2,Potassium\n")
    assert [len(t) for t in read_code_list(big, raised).texts] == [1 << 20, 9]
    wide = tmp_path / "wide.csv"
    extra = [f"c{i}" for i in range(10_000)]
    wide.write_text(",".join(["code", "name", *extra]) + "\n" + ",".join(["1", "K", *["v"] * 10_000]) + "\n")
    table = read_code_list(wide, raised)
    assert table.frame.shape == (1, 10_002) and table.code_col == "code" and table.texts == ["K"]
    # The defaults refuse both, naming the limit to raise.
    with pytest.raises(CodemapError, match=r"big.csv: line 2 is longer than .* characters"):
        read_code_list(big)
    with pytest.raises(CodemapError, match=r"wide.csv: has 10,002 columns; at most 1,024 columns are "
                                           r"read \(--limit columns=N raises it\)"):
        read_code_list(wide)


def test_text_cells_kept_exactly(tmp_path):
    path = tmp_path / "list.csv"
    path.write_text('code,name\n'
                    '00123,"Potassium\nserum"\n'       # newline inside quotes
                    '00124,"Sodium\tplasma"\n'         # tab inside quotes
                    'NA,null\n'                        # NaN-like strings stay text
                    'nan,NaN\n'
                    '2024-01-05,#N/A\n'                # a date as a code stays as typed
                    '1e5,None\n'                       # scientific notation is not a number
                    '7,بوتاسيوم\n8,カリウム\n9,אשלגן\n10,=HYPERLINK("x")\n', encoding="utf-8")
    table = read_code_list(path)
    assert table.codes == ["00123", "00124", "NA", "nan", "2024-01-05", "1e5", "7", "8", "9", "10"]
    assert table.texts == ["Potassium\nserum", "Sodium\tplasma", "null", "NaN", "#N/A", "None",
                           "بوتاسيوم", "カリウム", "אשלגן", '=HYPERLINK("x")']


def test_workbook_numbers_dates_and_formulas(tmp_path):
    path = _workbook(tmp_path / "list.xlsx", [
        ["code", "name"],
        ["00123", "Potassium"],                  # text cell: leading zeros kept
        [123, "Sodium"],                         # number cell: as Excel shows it
        [datetime.date(2024, 1, 5), "Glucose"],  # date cell: the date, no midnight time
        [1.5, "=CONCAT(\"Chlo\",\"ride\")"],     # formula never calculated: no cached value
    ])
    table = read_code_list(path)
    assert table.codes == ["00123", "123", "2024-01-05", "1.5"]
    # A formula cell reads as the value Excel last calculated; openpyxl stores none, so the row
    # is kept with empty text (flagged "empty source text" in the output, never dropped).
    assert table.texts == ["Potassium", "Sodium", "Glucose", ""]


def test_duplicate_codes_are_both_kept(tmp_path):
    path = tmp_path / "list.csv"
    path.write_text("code,name\n1,Potassium\n1,Sodium\n")
    table = read_code_list(path)
    assert table.codes == ["1", "1"] and table.texts == ["Potassium", "Sodium"] and table.rows == [2, 3]


# --- through `codemap map`: real default model, a small target -------------------------------

@pytest.fixture(scope="module")
def small_target(tmp_path_factory):
    return three_names(tmp_path_factory.mktemp("target"),
                       ["Potassium serum", "Sodium serum", "Glucose fasting"])


def _map(source, small_target, output):
    target, cache = small_target
    return runner.invoke(app, ["map", str(source), "--target", str(target), "-o", str(output),
                               "--cache-dir", str(cache), "--quiet"])


@pytest.mark.parametrize("case", ["empty", "binary without NUL bytes", "encrypted workbook",
                                  "later row longer than header"])
def test_map_refuses_broken_file_in_one_line(tmp_path, small_target, case):
    name, make, message = BROKEN[case]
    source = tmp_path / name
    make(source)
    output = tmp_path / "out.csv"
    result = _map(source, small_target, output)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("codemap: error: ")
    assert "Traceback" not in result.output
    assert not output.exists() and not list(tmp_path.glob(".out.csv.*"))


def test_map_keeps_every_messy_row(tmp_path, small_target):
    source = tmp_path / "list.csv"
    source.write_text('code,name\n00123,Potassium\n00123,Sodium\nNA,null\n5,"Glucose\nfasting"\n'
                      '6,\n7,カリウム\n8,=1+2\n', encoding="utf-8")
    output = tmp_path / "out.csv"
    result = _map(source, small_target, output)
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(output, dtype=str, keep_default_na=False)
    first = frame.groupby("source_row").first()
    assert list(first.index.astype(int)) == [2, 3, 4, 5, 6, 7, 8]  # every input row is in the output
    assert list(first["source_code"]) == ["00123", "00123", "NA", "5", "6", "7", "8"]
    assert list(first["source_text"]) == ["Potassium", "Sodium", "null", "Glucose\nfasting", "",
                                          "カリウム", "'=1+2"]  # formula escaped on the way out
    assert first.loc["2", "target_code"] == "T1" and first.loc["3", "target_code"] == "T2"
    assert first.loc["6", "flag"] == "empty source text"
