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


@pytest.mark.parametrize("content, text", [
    ("alias\nBUN\nHgb\n", "alias"),  # an alias list names its column for what it holds
    ("code;Omschrijving\n1;Kalium (bloed)\n", "Omschrijving"),  # Dutch: description
    ("Tests\nSerum sodium\nK+\n", "Tests"),  # one column: its texts, whatever the header
])
def test_text_column_of_alias_dutch_and_one_column_lists(tmp_path, content, text):
    path = tmp_path / "list.csv"
    path.write_text(content, encoding="utf-8")
    table = read_code_list(path)
    assert table.text_cols == (text,) and table.texts[0] in ("BUN", "Kalium (bloed)", "Serum sodium")


def test_explicit_encoding_that_does_not_fit():
    with pytest.raises(CodemapError, match="cannot be decoded as utf-8"):
        read_table(DATA / "labs_de_cp1252.csv", encoding="utf-8")


@pytest.mark.parametrize("header", ["Kürzel", "Kurzbezeichnung", "Kürzel/Code", "abréviation",
                                    "code court", "código", "abreviatura", "sigla"])
def test_short_code_headers_are_the_code_column(tmp_path, header, caplog):
    path = tmp_path / "list.csv"
    path.write_text(f"Nr;{header};Bezeichnung;Einheit\n1;NA;Natrium;mmol/l\n2;K;Kalium;mmol/l\n",
                    encoding="utf-8")
    with caplog.at_level("INFO", logger="codemap.read.readers.columns"):
        table = read_code_list(path)
    assert table.code_col == header
    assert table.codes == ["NA", "K"]  # not the row numbers, not the running number
    assert [r.getMessage() for r in caplog.records] == [
        f"list.csv: columns: code={header}, text=Bezeichnung, unit=Einheit"]


def test_columns_line_says_when_there_is_no_code_column(tmp_path, caplog):
    path = tmp_path / "list.csv"
    path.write_text("Bezeichnung\nNatrium\n", encoding="utf-8")
    with caplog.at_level("INFO", logger="codemap.read.readers.columns"):
        read_code_list(path)
    assert caplog.records[0].getMessage() == "list.csv: columns: code=(none: row numbers), text=Bezeichnung"


def test_two_columns_with_one_name_are_warned_about(tmp_path, caplog):
    path = tmp_path / "list.csv"
    path.write_text("code,name,unit,name\nA1,Sodium,mmol/L,Natrium\n", encoding="utf-8")
    with caplog.at_level("WARNING", logger="codemap.read.readers"):
        table = read_code_list(path)
    assert table.text_cols == ("name",) and table.texts == ["Sodium"]
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [f"{path}: two columns are named 'name' (columns B and D); the second is "
                        f"read as 'name.1'; using 'name' as the text column (--text-col 'name.1' "
                        f"for the other)"]
    with caplog.at_level("WARNING", logger="codemap.read.readers"):
        caplog.clear()
        chosen = read_code_list(path, ReadOptions(text_cols=("name.1",)))
    assert chosen.texts == ["Natrium"]
    assert "using 'name.1' as the text column (--text-col 'name' for the other)" in caplog.text


def test_a_table_read_whole_keeps_every_row_past_a_streamed_blocks_size(tmp_path, monkeypatch):
    # A vocabulary table of a million names is some 60 MB: read whole, none of it may be dropped
    # at the size that bounds one block of a streamed list.
    from codemap.read import readers

    monkeypatch.setattr(readers, "BLOCK_CHARS", 200)
    path = tmp_path / "table.csv"
    path.write_text("code,name\n" + "".join(f"{i},name number {i}\n" for i in range(500)))
    frame = read_table(path)
    assert len(frame) == 500 and frame["code"].iloc[-1] == "499"
    blocks = list(readers._iter_delimited(path, None, 1000))
    assert len(blocks) > 1 and sum(map(len, blocks)) == 500  # a stream still comes in blocks
