"""Hostile input files, made on the fly: each is small to store or quick to write and would cost
minutes or gigabytes if read naively. Shared by tests/test_hostile_inputs.py (loose bounds) and
benchmarks/inputs/hostile_inputs.py (the figures, at the full sizes users reported)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
    '</Types>')
_RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
         '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
         '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
         '</Relationships>')
_WORKBOOK = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
             '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
             'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
             '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>')
_WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
    '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>'
    '</Relationships>')
_SHEET_HEAD = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
               '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
               '<row r="1"><c r="A1" t="inlineStr"><is><t>code</t></is></c>'
               '<c r="B1" t="inlineStr"><is><t>name</t></is></c></row>')
_SHEET_TAIL = '</sheetData></worksheet>'
_SST_HEAD = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
             '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" uniqueCount="1"><si><t>')
_SST_TAIL = '</t></si></sst>'
_MB = 1 << 20


def _xlsx(path: Path, rows: str, shared: str = "", repeat: tuple[str, int] | None = None,
          repeat_in: str = "sheet") -> Path:
    """A minimal real xlsx; `repeat` = (text, megabytes) streamed into the shared strings or the
    sheet (after `rows`), compressed as it is written, so a huge part costs no memory here."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name, text in (("[Content_Types].xml", _CONTENT_TYPES), ("_rels/.rels", _RELS),
                           ("xl/workbook.xml", _WORKBOOK),
                           ("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS)):
            archive.writestr(name, text)
        parts = {"sheet": ("xl/worksheets/sheet1.xml", _SHEET_HEAD + rows, _SHEET_TAIL),
                 "shared": ("xl/sharedStrings.xml", _SST_HEAD + shared, _SST_TAIL)}
        for key, (name, head, tail) in parts.items():
            with archive.open(name, "w", force_zip64=True) as part:
                part.write(head.encode())
                if repeat is not None and repeat_in == key:
                    piece = (repeat[0] * (_MB // len(repeat[0]))).encode()
                    for _ in range(repeat[1]):
                        part.write(piece)
                part.write(tail.encode())
    return path


def million_columns_csv(path: Path, columns: int = 1_000_000) -> Path:
    path.write_text(",".join(f"c{i}" for i in range(columns)) + "\n"
                    + ",".join("1" for _ in range(columns)) + "\n")
    return path


def huge_cell_csv(path: Path, megabytes: int = 200) -> Path:
    with open(path, "w") as handle:
        handle.write("code,name\n1,")
        piece = "x" * _MB
        for _ in range(megabytes):
            handle.write(piece)
        handle.write("\n2,Potassium\n")
    return path


def huge_cell_xlsx(path: Path, megabytes: int = 300) -> Path:
    """A small xlsx whose one shared string unpacks to `megabytes` of text."""
    return _xlsx(path, '<row r="2"><c r="A2" t="inlineStr"><is><t>1</t></is></c>'
                       '<c r="B2" t="s"><v>0</v></c></row>', repeat=("x", megabytes),
                 repeat_in="shared")


def whitespace_xlsx(path: Path, megabytes: int = 1500) -> Path:
    """A sheet padded with `megabytes` of whitespace between its rows (a zip bomb)."""
    return _xlsx(path, '<row r="2"><c r="A2" t="inlineStr"><is><t>1</t></is></c></row>',
                 repeat=(" ", megabytes))


def sparse_range_xlsx(path: Path, cell: str = "ZZ200000") -> Path:
    """A 2 KB xlsx naming one far cell: the reader would allocate every cell up to it."""
    row = "".join(ch for ch in cell if ch.isdigit())
    return _xlsx(path, f'<row r="{row}"><c r="{cell}" t="inlineStr"><is><t>x</t></is></c></row>')


def _entity_xlsx(path: Path, doctype: str, entity: str) -> Path:
    """An xlsx whose shared string is `entity`, declared in the shared strings' `doctype`."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in (("[Content_Types].xml", _CONTENT_TYPES), ("_rels/.rels", _RELS),
                           ("xl/workbook.xml", _WORKBOOK),
                           ("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS)):
            archive.writestr(name, text)
        archive.writestr("xl/worksheets/sheet1.xml", _SHEET_HEAD + '<row r="2"><c r="A2" '
                         't="inlineStr"><is><t>1</t></is></c><c r="B2" t="s"><v>0</v></c></row>'
                         + _SHEET_TAIL)
        archive.writestr("xl/sharedStrings.xml", doctype + '<sst xmlns="http://schemas.'
                         f'openxmlformats.org/spreadsheetml/2006/main"><si><t>{entity}</t></si></sst>')
    return path


def entity_expansion_xlsx(path: Path) -> Path:
    """"Billion laughs": nested entities in the shared strings."""
    entities = '<!ENTITY a0 "lol">' + "".join(
        f'<!ENTITY a{i} "{"&a%d;" % (i - 1) * 10}">' for i in range(1, 10))
    return _entity_xlsx(path, f'<?xml version="1.0"?><!DOCTYPE sst [{entities}]>', "&a9;")


def external_entity_xlsx(path: Path) -> Path:
    """An external entity pointing at a local file."""
    return _entity_xlsx(path, '<?xml version="1.0"?><!DOCTYPE sst [<!ENTITY x SYSTEM '
                              '"file:///etc/passwd">]>', "&x;")


def repeated_cells_ods(path: Path, rows: int = 20_000, columns: int = 1_000) -> Path:
    """An OpenDocument sheet whose one cell with content is repeated rows x columns times."""
    content = (
        '<?xml version="1.0" encoding="UTF-8"?><office:document-content '
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2">'
        '<office:body><office:spreadsheet><table:table table:name="Sheet1"><table:table-row>'
        '<table:table-cell office:value-type="string"><text:p>code</text:p></table:table-cell>'
        '<table:table-cell office:value-type="string"><text:p>name</text:p></table:table-cell>'
        f'</table:table-row><table:table-row table:number-rows-repeated="{rows}">'
        f'<table:table-cell table:number-columns-repeated="{columns}" office:value-type="string">'
        '<text:p>x</text:p></table:table-cell></table:table-row></table:table>'
        '</office:spreadsheet></office:body></office:document-content>')
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet",
                         compress_type=zipfile.ZIP_STORED)
        archive.writestr("content.xml", content)
    return path


def nul_csv(path: Path) -> Path:
    """A text list with a NUL byte past the part read to sniff the format."""
    path.write_bytes(b"code,name\n" + b"1,Potassium\n" * 20_000 + b"2,Sod\x00ium\n")
    return path


def binary_csv(path: Path) -> Path:
    path.write_bytes(bytes(range(256)) * 4096)
    return path


# name → (file name, maker at the reported size, maker at a test size that still passes a bound)
HOSTILE = {
    "1,000,000 columns": ("wide.csv", million_columns_csv, million_columns_csv),
    "200 MB cell in a CSV": ("cell.csv", huge_cell_csv, lambda p: huge_cell_csv(p, 20)),
    "300 MB cell in an xlsx": ("cell.xlsx", huge_cell_xlsx, lambda p: huge_cell_xlsx(p, 30)),
    "1.5 GB of whitespace in an xlsx": ("padded.xlsx", whitespace_xlsx,
                                        lambda p: whitespace_xlsx(p, 300)),
    "sheet naming cell ZZ200000": ("sparse.xlsx", sparse_range_xlsx, sparse_range_xlsx),
    "repeated cells in an ods": ("repeated.ods", repeated_cells_ods, repeated_cells_ods),
    "entity expansion": ("laughs.xlsx", entity_expansion_xlsx, entity_expansion_xlsx),
    "external entity": ("entity.xlsx", external_entity_xlsx, external_entity_xlsx),
    "NUL byte": ("nul.csv", nul_csv, nul_csv),
    "binary": ("binary.csv", binary_csv, binary_csv),
}


# The child reports its own peak: a forked child's ru_maxrss counts the parent's pages from
# before exec (a pytest process holding models would read as gigabytes); /proc's VmHWM does not.
_PEAK_REPORTING = ("import atexit, os, re\n"
                   "def _peak():\n"
                   "    status = open('/proc/self/status').read()\n"
                   "    open(os.environ['CODEMAP_PEAK_FILE'], 'w').write("
                   "re.search(r'VmHWM:\\s*(\\d+)', status).group(1))\n"
                   "atexit.register(_peak)\n"
                   "from codemap.cli import main; main()")


def run_cli(args: list[str], scratch: Path) -> dict:
    """`codemap ARGS` in a child process: its exit code, seconds, peak resident memory (MB) and
    stderr."""
    peak = scratch / "peak.txt"
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _PEAK_REPORTING, *args], capture_output=True,
                          text=True, env={**os.environ, "CODEMAP_PEAK_FILE": str(peak)})
    return {"exit_code": done.returncode, "seconds": round(time.perf_counter() - started, 2),
            "peak_mb": round(int(peak.read_text()) / 1024), "stderr": done.stderr.strip()}


def refuse(source: Path, scratch: Path) -> dict:
    """`codemap map SOURCE --target LOINC -o scratch/out.csv` (run_cli), and whether it wrote
    the output."""
    output = scratch / "out.csv"
    found = run_cli(["map", str(source), "--target", "LOINC", "-o", str(output), "--cache-dir",
                     str(scratch / "cache")], scratch)
    return {**found, "output_written": output.exists()}
