"""Input bounds, checked before a file is read whole: a hostile or broken export is refused in
seconds and in bounded memory, with one line that names what is too large and the limit to
raise (`InputLimits`, `--limit`).

Why each bound exists (all measured on a 2-core machine before these checks):
- columns: a CSV with 1,000,000 columns took 104 s and 2.2 GB before any error;
- cell length: one 200 MB cell held 14 GB after 10 minutes;
- a workbook's unpacked size: a 300 KB xlsx whose one cell unpacks to 300 MB took 18.6 GB, a
  sheet of 1.5 GB of whitespace was read whole before being refused;
- a sheet's used range: the workbook reader allocates every cell of the rectangle from A1 to the
  last cell named, so a 1.6 KB xlsx naming cell ZZ200000 took 5.4 GB (`max_cells`).

Text lists are checked while they are read (bounded lines, one block at a time); a workbook's zip
parts are unpacked once in 1 MB pieces and scanned before the workbook reader sees them.
"""
from __future__ import annotations

import re
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Iterator

from ..config import InputLimits
from ..errors import CodemapError

_PIECE = 1 << 20  # bytes unpacked (or read) at a time


# Vocabulary tables hold every synonym of a concept in one cell ("name|name|…"): the same bounds
# but cells 100 times longer.
VOCABULARY_LIMITS = InputLimits(cell_chars=1_000_000)


def name_list(names, shown: int = 8) -> str:
    """"a, b, c" or, past `shown` names, "a, b, … and 1,234 more": an error line stays short."""
    names = [str(n) for n in names]
    if len(names) <= shown:
        return ", ".join(names)
    return f"{', '.join(names[:shown])} … and {len(names) - shown:,} more"


def too_large(path: Path, what: str, limit: str, value: int, unit: str = "") -> CodemapError:
    """The one error for an input past a bound: what, the bound, and how to raise it."""
    unit = unit or limit.replace("-", " ")
    return CodemapError(f"{path}: {what}; at most {value:,} {unit} are read (--limit {limit}=N "
                        f"raises it)")


class BoundedLines:
    """The physical lines of an open text file, each read with a bound of `limit` characters
    (lowered once a header tells how wide a row can be): a longer line, or one holding a NUL,
    stops the read with the line's number."""

    def __init__(self, text, path: Path, limit: int):
        self.text, self.path, self.limit, self.number = text, path, limit, 0
        self.last = ""  # the line read last, as read

    def __iter__(self) -> "BoundedLines":
        return self

    def __next__(self) -> str:
        line = self.text.readline(self.limit + 2)  # + a "\r\n" ending
        if not line:
            raise StopIteration
        self.number += 1
        if len(line.rstrip("\r\n")) > self.limit:
            raise CodemapError(f"{self.path}: line {self.number:,} is longer than "
                               f"{self.limit:,} characters: a cell past --limit cell-chars, or "
                               f"more fields than the header")
        if "\x00" in line:
            raise CodemapError(f"{self.path}: line {self.number:,} holds a NUL byte; looks like a "
                               f"binary file, not CSV/TSV text")
        self.last = line
        return line


def line_limit(columns: int, limits: InputLimits) -> int:
    """The longest physical line a row of `columns` fields within the cell bound can take: every
    field at its bound, quoted, with doubled quotes inside, plus delimiters."""
    return max(1, columns) * (2 * limits.cell_chars + 3)


# --- workbooks -----------------------------------------------------------------------------------

_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # a zip member's local file header
_DEFLATED, _STORED = 8, 0
# Cell references of a worksheet (xlsx): the reader allocates the rectangle they span.
_CELL_REF = re.compile(rb'<c r="([A-Z]{1,3})([0-9]{1,7})"')
_ROW_TAG = re.compile(rb"<row[ >]")
_TAG_EDGE = re.compile(rb"[<>]")
# An OpenDocument sheet repeats a row or cell by count instead of writing it again.
_ODS_ROW = b"<table:table-row"
_ODS_ROWS_REPEATED = re.compile(rb'^[^>]*table:number-rows-repeated="([0-9]+)"')
_ODS_CELL = re.compile(rb"<table:(?:covered-)?table-cell([^>]*?)(/?)>")
_ODS_COLUMNS_REPEATED = re.compile(rb'table:number-columns-repeated="([0-9]+)"')


def check_workbook(path: Path, limits: InputLimits) -> None:
    """Unpack an xlsx/ods zip once, in pieces, and refuse it when a part unpacks past the size
    bound, holds a cell (or padding) longer than the cell bound, or a sheet names more rows,
    columns or cells than the bounds allow. Not a zip (an .xls, a broken file): left to the
    workbook reader, which reads only what the file holds."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        if path.stat().st_size > limits.unpacked_bytes:
            raise too_large(path, f"the workbook holds {path.stat().st_size >> 20:,} MB",
                            "unpacked-mb", limits.unpacked_mb, "MB") from None
        return
    with archive, open(path, "rb") as raw:
        total = 0
        for member in archive.infolist():
            scan = _SheetScan(path, member.filename, limits)
            for piece in _unpacked(raw, member, path):
                total += len(piece)
                if total > limits.unpacked_bytes:
                    raise too_large(path, f"its parts unpack to more than "
                                    f"{limits.unpacked_mb:,} MB (at {member.filename})",
                                    "unpacked-mb", limits.unpacked_mb, "MB")
                scan.feed(piece)
            scan.finish()


def _unpacked(raw, member: zipfile.ZipInfo, path: Path) -> Iterator[bytes]:
    """A member's bytes, unpacked piece by piece from its compressed data: the sizes the zip
    declares are not trusted (a bomb declares small ones)."""
    raw.seek(member.header_offset)
    header = raw.read(_LOCAL_HEADER.size)
    if len(header) < _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
        raise CodemapError(f"{path}: not a readable workbook (damaged zip member "
                           f"{member.filename})")
    name_length, extra_length = struct.unpack("<2H", header[26:30])
    raw.seek(member.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
    left = member.compress_size
    if member.compress_type == _STORED:
        while left > 0 and (piece := raw.read(min(_PIECE, left))):
            left -= len(piece)
            yield piece
        return
    if member.compress_type != _DEFLATED:
        raise CodemapError(f"{path}: not a readable workbook ({member.filename} is compressed "
                           f"with method {member.compress_type})")
    inflate = zlib.decompressobj(-15)
    while left > 0 and (packed := raw.read(min(_PIECE, left))):
        left -= len(packed)
        while packed:
            try:
                piece = inflate.decompress(packed, _PIECE)
            except zlib.error:
                raise CodemapError(f"{path}: not a readable workbook (damaged zip member "
                                   f"{member.filename})") from None
            packed = inflate.unconsumed_tail
            if piece:
                yield piece
            if inflate.eof:
                return


class _SheetScan:
    """The bounds read from one zip part's XML as it streams by: the longest run of text outside
    tags (a cell, padding), and for a worksheet the rectangle its cells span."""

    ODS_ROW_BYTES = 16 << 20  # one OpenDocument row element is scanned whole

    def __init__(self, path: Path, part: str, limits: InputLimits):
        self.path, self.part, self.limits = path, part, limits
        self.xml = part.endswith(".xml")
        self.ods = part == "content.xml"
        self.sheet = part.startswith("xl/worksheets/") or self.ods
        # A cell of `cell_chars` characters takes at most 6 bytes each in XML ("&quot;").
        self.run_limit = 6 * limits.cell_chars
        self.run = 0  # length of the text run the previous piece ended in
        self.tail = b""  # the unfinished tag (ods: row) the previous piece ended in
        self.rows = self.max_row = self.max_column = 0

    def feed(self, piece: bytes) -> None:
        if not self.xml:
            return
        self._runs(piece)
        if not self.sheet:
            return
        data = self.tail + piece
        if self.ods:
            cut = data.rfind(_ODS_ROW) if piece else len(data)
        else:  # cell references are short: a longer unfinished "tag" is text, not kept
            cut = data.rfind(b"<") if piece else len(data)
            cut = cut if cut >= len(data) - 256 else len(data)
        whole, self.tail = data[:max(cut, 0)], data[max(cut, 0):]
        if len(self.tail) > self.ODS_ROW_BYTES:
            raise too_large(self.path, f"{self.part} holds a row of more than "
                            f"{self.ODS_ROW_BYTES >> 20} MB", "cells", self.limits.cells)
        self._ods(whole) if self.ods else self._xlsx(whole)

    def finish(self) -> None:
        if self.xml:
            self.feed(b"")

    def _runs(self, piece: bytes) -> None:
        """Text outside tags, counted across pieces: a run past the bound is a cell past
        `cell_chars` (or a sheet padded with whitespace)."""
        first = min((i for i in (piece.find(b"<"), piece.find(b">")) if i >= 0), default=-1)
        if first < 0:
            self.run += len(piece)
        else:
            self.run += first
            # Split at the tag edges, in one linear pass (a regex for a run of n characters
            # retried at every position took a third of a second on a 200 kB workbook).
            longest_inside = max(map(len, _TAG_EDGE.split(piece))) > self.run_limit
            if self.run > self.run_limit or longest_inside:
                self.run = self.run_limit + 1
            else:
                self.run = len(piece) - 1 - max(piece.rfind(b"<"), piece.rfind(b">"))
        if self.run > self.run_limit:
            raise too_large(self.path, f"{self.part} holds a cell (or padding) of more than "
                            f"{self.run_limit:,} bytes", "cell-chars", self.limits.cell_chars,
                            "characters a cell")

    def _xlsx(self, whole: bytes) -> None:
        self.rows += len(_ROW_TAG.findall(whole))
        for letters, digits in set(_CELL_REF.findall(whole)):
            self.max_row = max(self.max_row, int(digits))
            self.max_column = max(self.max_column, _column_number(letters))
        self._check(max(self.rows, self.max_row), self.max_column)

    def _ods(self, rows: bytes) -> None:
        """Whole <table:table-row> elements: the rectangle up to the last cell with content.
        Repeated empty rows and cells (a sheet's formatted, empty rest) are not expanded by the
        reader; repeated cells with content are, each repeat a cell."""
        for row in rows.split(_ODS_ROW)[1:]:
            repeated = _ODS_ROWS_REPEATED.match(row)
            count = int(repeated.group(1)) if repeated else 1
            position = last = 0
            for attributes, empty in _ODS_CELL.findall(row):
                found = _ODS_COLUMNS_REPEATED.search(attributes)
                position += int(found.group(1)) if found else 1
                if b"value-type" in attributes or not empty:
                    last = position
            self.rows += count
            if last:
                self.max_row = self.rows
                self.max_column = max(self.max_column, last)
        self._check(self.max_row, self.max_column)

    def _check(self, rows: int, columns: int) -> None:
        limits = self.limits
        if rows > limits.rows:
            raise too_large(self.path, f"a sheet ({self.part}) has more than {limits.rows:,} rows",
                            "rows", limits.rows)
        if columns > limits.columns:
            raise too_large(self.path, f"a sheet ({self.part}) has {columns:,} columns",
                            "columns", limits.columns)
        if rows * columns > limits.cells:
            raise too_large(self.path, f"a sheet ({self.part}) spans {rows:,} rows x {columns:,} "
                            f"columns", "cells", limits.cells)


def _column_number(letters: bytes) -> int:
    """A spreadsheet column's number from its letters (A → 1, AA → 27)."""
    number = 0
    for letter in letters:
        number = number * 26 + letter - 64
    return number
