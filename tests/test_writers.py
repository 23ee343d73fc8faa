"""Review workbook and CSV/TSV output: structure, formula safety, atomic writes."""
import csv
import os
import stat

import numpy as np
import openpyxl
import pandas as pd
import pytest

from codemap.errors import CodemapError
from codemap.files import atomic_path, temp_dir_beside
from codemap.write.writers import (COLUMN_LEGEND, DECISIONS, EQUIVALENCES, OTHER_COLUMN,
                                   REVIEW_COLUMNS, write_candidates)

RUN = {"model": "default", "target": "LOINC"}


def candidates() -> pd.DataFrame:
    return pd.DataFrame({
        "source_row": [2, 2, 3],
        "source_code": ["00123", "00123", "=HYPERLINK(\"http://x\")"],
        "source_text": ["K+ SerPl", "K+ SerPl", "+Na"],
        "rank": pd.array([1, 2, 1], dtype="Int64"),
        "target_code": ["2823-3", "6298-4", "2951-2"],
        "target_name": ["Potassium [Moles/volume] in Serum or Plasma",
                        "Potassium [Moles/volume] in Blood", "-Sodium"],
        "matched_name": ["Potassium SerPl-sCnc", "Potassium Bld-sCnc", "@Na"],
        "score": np.array([0.91, 0.85, 0.7], dtype=np.float32),
    })


def test_review_workbook_structure(tmp_path):
    path = write_candidates(candidates(), tmp_path / "out.xlsx", RUN)
    book = openpyxl.load_workbook(path)
    assert book.sheetnames == ["candidates", "run", "legend"]
    sheet = book["candidates"]
    header = [c.value for c in sheet[1]]
    assert header[-4:] == REVIEW_COLUMNS
    assert sheet.freeze_panes == "A2"
    assert sheet.auto_filter.ref == f"A1:{openpyxl.utils.get_column_letter(len(header))}4"
    validations = sheet.data_validations.dataValidation
    assert sorted(v.formula1 for v in validations) == sorted(
        '"' + ",".join(values) + '"' for values in (DECISIONS, EQUIVALENCES))
    # Formula-like text stays text: the cell type is string, not formula.
    code_cell = sheet.cell(row=4, column=2)
    assert code_cell.value == "=HYPERLINK(\"http://x\")" and code_cell.data_type == "s"
    assert sheet.cell(row=2, column=2).value == "00123"
    assert sheet.cell(row=2, column=header.index("score") + 1).value == pytest.approx(0.91, abs=1e-6)
    assert sheet.row_dimensions[3].outline_level == 1  # rank 2 collapses under its source
    assert {r[0].value: r[1].value for r in book["run"].iter_rows(min_row=2)} == RUN


@pytest.mark.parametrize("suffix, delimiter", [(".csv", ","), (".tsv", "\t")])
def test_delimited_output_escapes_formulas(tmp_path, suffix, delimiter):
    path = write_candidates(candidates(), tmp_path / f"out{suffix}", RUN)
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter=delimiter))
    assert rows[2]["source_code"] == "'=HYPERLINK(\"http://x\")"
    assert rows[2]["source_text"] == "'+Na" and rows[2]["matched_name"] == "'@Na"
    assert rows[0]["source_code"] == "00123" and rows[0]["score"].startswith("0.91")


def test_bad_output_suffix_writes_nothing(tmp_path):
    with pytest.raises(CodemapError, match="unknown output type .json"):
        write_candidates(candidates(), tmp_path / "out.json", RUN)
    assert list(tmp_path.iterdir()) == []


def test_failed_write_leaves_no_file(tmp_path, monkeypatch):
    import codemap.write.writers

    def half_write(frame, path, run):
        path.write_bytes(b"PK half a workbook")
        raise KeyboardInterrupt  # a user pressing Ctrl-C in the middle of writing

    monkeypatch.setattr(codemap.write.writers, "write_review_workbook", half_write)
    with pytest.raises(KeyboardInterrupt):
        write_candidates(candidates(), tmp_path / "out.xlsx", RUN)
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def umask_027():
    previous = os.umask(0o027)
    yield
    os.umask(previous)


@pytest.mark.parametrize("suffix", [".xlsx", ".csv", ".parquet"])
def test_outputs_honour_the_umask(tmp_path, umask_027, suffix):
    """Atomic writes go through a temporary file: it must not keep mkstemp's 0600, or colleagues
    on a shared drive cannot open the workbook."""
    path = write_candidates(candidates(), tmp_path / f"out{suffix}", RUN)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_atomic_files_and_folders_honour_the_umask(tmp_path, umask_027):
    with atomic_path(tmp_path / "cache" / "manifest.json") as tmp:
        tmp.write_text("{}")
    assert stat.S_IMODE((tmp_path / "cache" / "manifest.json").stat().st_mode) == 0o640
    folder = temp_dir_beside(tmp_path / "export")  # filled, then renamed into a shared cache
    assert folder.name.startswith(".export.") and folder.name.endswith(".part")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o750


def test_workbook_explains_its_columns(tmp_path):
    """A `legend` sheet names every column of the candidates sheet in order with its meaning,
    says which score to trust, and each header cell carries the same text as a note."""
    frame = candidates().assign(confidence=[0.38, 0.2, 0.9], fluid=["Blood", "Blood", "Urine"])
    path = write_candidates(frame, tmp_path / "out.xlsx", RUN)
    book = openpyxl.load_workbook(path)
    header = [c.value for c in book["candidates"][1]]
    legend = {row[0]: row[1] for row in book["legend"].iter_rows(min_row=2, values_only=True)}
    assert list(legend) == header
    assert "no fixed scale" in legend["score"] and "trust `confidence`" in legend["score"]
    assert legend["confidence"].startswith("Calibrated probability")
    assert legend["fluid"] == OTHER_COLUMN and all(legend.values())
    notes = {c.value: c.comment.text for c in book["candidates"][1]}
    assert notes["score"] == f"score: {COLUMN_LEGEND['score']}"
    assert all(notes[name] == f"{name}: {legend[name]}" for name in header)


def test_the_cli_offers_every_registered_format():
    """Export formats and vocabulary importers are registries; the CLI's choices are their
    names, so a format added to a registry is offered, and none offered is missing."""
    from codemap.cli.review import MappingFormat
    from codemap.cli.vocab import VocabFormat
    from codemap.vocab.store import IMPORTERS
    from codemap.write.writers import MAPPING_FORMATS

    assert {f.value for f in MappingFormat} == set(MAPPING_FORMATS)
    assert {f.value for f in VocabFormat} == set(IMPORTERS)
