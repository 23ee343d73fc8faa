"""Readers: encodings, delimiters, workbooks, column detection and their errors."""
import openpyxl
import pytest

from codemap.config import ReadOptions
from codemap.errors import CodemapError
from codemap.read import read_code_list, read_table

from .conftest import DATA, EXAMPLES


def test_cp1252_semicolon_list_keeps_umlauts_and_leading_zeros():
    table = read_code_list(DATA / "labs_de_cp1252.csv")
    assert table.code_col == "Code"
    assert table.text_cols == ("Bezeichnung",)
    assert table.unit_col == "Einheit"
    assert table.specimen_col == "Material"
    assert table.codes == ["00123", "K0042", "777", "0815"]
    assert table.texts[2] == "Hämoglobin"
    assert table.rows == [2, 3, 4, 5]


def test_utf8_bom_and_tab_delimiter(tmp_path):
    path = tmp_path / "list.txt"
    path.write_bytes("\ufeffid\tname\n1\tKreatinin i.S.\n2\tNA\n".encode("utf-8"))
    table = read_code_list(path)
    assert table.code_col == "id"
    assert table.texts == ["Kreatinin i.S.", "NA"]  # "NA" is a name a person typed, not missing


def test_example_workbook_columns_detected():
    table = read_code_list(EXAMPLES / "labs.xlsx")
    assert (table.code_col, table.text_cols, table.specimen_col) == ("itemid", ("label",), "fluid")
    assert len(table.frame) == 150
    assert all(code.isdigit() for code in table.codes)  # numbers come back without ".0"


def test_workbook_sheet_choice_and_joined_text_columns(tmp_path):
    path = tmp_path / "two.xlsx"
    book = openpyxl.Workbook()
    book.active.title = "notes"
    book.active.append(["nothing here"])
    sheet = book.create_sheet("labs")
    sheet.append(["Test code", "Test name", "Specimen"])
    sheet.append(["00042", "Potassium", "Serum"])
    book.save(path)
    table = read_code_list(path, ReadOptions(sheet="labs", text_cols=("Test name", "Specimen")))
    assert table.codes == ["00042"]
    assert table.texts == ["Potassium Serum"]
    with pytest.raises(CodemapError, match=r"no sheet named 'lab' \(sheets: notes, labs\); use --sheet"):
        read_code_list(path, ReadOptions(sheet="lab"))


@pytest.mark.parametrize("content, message", [
    (b"", "the file is empty"),
    (b"code,name\n", "has a header but no data rows"),
    (b"PK\x03\x04\x00\x00binary", "looks like a binary file"),
])
def test_bad_text_files(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(CodemapError, match=message):
        read_code_list(path)


def test_missing_file_and_fake_workbook(tmp_path):
    with pytest.raises(CodemapError, match="nope.csv: file not found"):
        read_table(tmp_path / "nope.csv")
    fake = tmp_path / "fake.xlsx"
    fake.write_text("code,name\n1,a\n")
    with pytest.raises(CodemapError, match="fake.xlsx: not a readable workbook"):
        read_table(fake)


def test_column_errors(tmp_path):
    path = tmp_path / "list.csv"
    path.write_text("code,name,description\n1,K,Potassium\n")
    with pytest.raises(CodemapError, match=r"more than one column could be the text column "
                                           r"\(name, description\); choose with --text-col"):
        read_code_list(path)
    with pytest.raises(CodemapError, match=r"no column named 'Label'"):
        read_code_list(path, ReadOptions(text_cols=("Label",)))
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(CodemapError, match="no text column found among a, b; name it with --text-col"):
        read_code_list(other)


def test_explicit_encoding_that_does_not_fit():
    with pytest.raises(CodemapError, match="cannot be decoded as utf-8"):
        read_table(DATA / "labs_de_cp1252.csv", encoding="utf-8")
