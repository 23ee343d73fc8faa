"""Read tabular files (CSV, TSV, xlsx, xls, ods) into string tables, and find a code list's columns.

One reader serves every tabular input: source code lists, vocabulary tables, gold pairs and
reviewed workbooks. Every cell is read as text, so codes keep their leading zeros ("00123") and
"NA" or "null" stay the strings a person typed.
"""
from __future__ import annotations

import codecs
import contextlib
import csv
import io
import logging
import re
import unicodedata
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from ..config import ReadOptions
from ..errors import CodemapError
from .bounds import BoundedLines, InputLimits, check_workbook, line_limit, name_list, too_large

log = logging.getLogger(__name__)
# Which columns a code list is read from: its own logger, which the CLI shows at info level.
columns_log = logging.getLogger(f"{__name__}.columns")

WORKBOOK_SUFFIXES = {".xlsx", ".xlsm", ".xls", ".ods"}
TEXT_SUFFIXES = {".csv", ".tsv", ".txt", ".tab"}
_SNIFF_BYTES = 1 << 16
_DELIMITERS = ",;\t|"
# Control characters other than tab/newline/carriage return: text exports do not contain them.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # an encrypted .xlsx is an OLE2 container
_MIDNIGHT = re.compile(r"^(\d{4}-\d{2}-\d{2}) 00:00:00$")
# A block of a streamed text list ends at this many characters even before its row count: the
# rows' length bounds its memory, not only their number.
BLOCK_CHARS = 32 << 20
# Put before the candidate columns when several lists are mapped together: which list a row is from.
SOURCE_FILE_COLUMN = "source_file"


def read_table(path: str | Path, sheet: str | None = None, encoding: str | None = None,
               limits: InputLimits = InputLimits(), header: bool = True) -> pd.DataFrame:
    """Read a CSV/TSV or workbook sheet into a DataFrame of strings (empty cells are "").

    `limits` bound what is read (columns, cell length, a workbook's size), checked before the
    file is read whole; without a `header` row the columns are named 1, 2, 3…

    Raises CodemapError when the file is missing, unreadable, past a limit, empty or has no header.
    """
    path = _existing(path)
    if path.suffix.lower() in WORKBOOK_SUFFIXES:
        frame = _read_workbook(path, sheet, limits, header)
    else:
        frame = _read_delimited(path, encoding, limits, header)
    frame.columns = [str(c).strip() for c in frame.columns]
    _check_header(path, frame.columns)
    return frame


def _existing(path: str | Path) -> Path:
    path = Path(path)
    if not path.exists():
        raise CodemapError(f"{path}: file not found")
    if path.is_dir():
        raise CodemapError(f"{path}: is a folder, expected a CSV, TSV or Excel file")
    return path


def _check_header(path: Path, columns) -> None:
    if len(columns) == 0 or all(c == "" or c.startswith("Unnamed:") for c in columns):
        raise CodemapError(f"{path}: no header row found")
    _check_duplicate_headers(path, columns)


def read_sheets(path: str | Path, sheets: list[str],
                limits: InputLimits = InputLimits()) -> dict[str, pd.DataFrame]:
    """Several sheets of one workbook, its bounds checked once (a review workbook's candidates
    and run sheets: each check unpacks the whole file). The first sheet named must be there and
    readable; a later one that is missing or unreadable is left out."""
    path = _existing(path)
    if path.suffix.lower() not in WORKBOOK_SUFFIXES:  # a text table is one sheet: the first named
        return {sheets[0]: read_table(path, limits=limits)}
    names = _workbook_sheets(path, limits)
    if sheets[0] not in names:
        raise CodemapError(f"{path}: no sheet named {sheets[0]!r} (sheets: {name_list(names)})")
    out = {}
    for number, sheet in enumerate(sheets):
        try:
            frame = _read_sheet(path, sheet, limits)
        except CodemapError:
            if number == 0:
                raise
            continue
        frame.columns = [str(c).strip() for c in frame.columns]
        _check_header(path, frame.columns)
        out[sheet] = frame
    return out


def _read_workbook(path: Path, sheet: str | None, limits: InputLimits,
                   header: bool = True) -> pd.DataFrame:
    names = _workbook_sheets(path, limits)
    if sheet is None:
        sheet = names[0]
    elif sheet not in names:
        raise CodemapError(f"{path}: no sheet named {sheet!r} (sheets: {name_list(names)}); "
                           f"use --sheet")
    return _read_sheet(path, sheet, limits, header)


def _workbook_sheets(path: Path, limits: InputLimits) -> list[str]:
    """The workbook's sheet names, once it passed its bounds (check_workbook)."""
    from python_calamine import CalamineWorkbook  # imported here: only workbook inputs need it

    if path.suffix.lower() in {".xlsx", ".xlsm"}:
        with open(path, "rb") as handle:
            if handle.read(8) == _OLE2_MAGIC:
                raise CodemapError(f"{path}: the workbook is password-protected (encrypted); save an "
                                   f"unprotected copy from Excel and map that")
    check_workbook(path, limits)  # before the reader, which holds a whole sheet in memory
    try:
        workbook = CalamineWorkbook.from_path(str(path))
    except Exception as exc:  # calamine raises its own error types for every unreadable file
        raise CodemapError(f"{path}: not a readable workbook ({_first_line(exc)})") from None
    names = workbook.sheet_names
    if not names:
        raise CodemapError(f"{path}: the workbook has no sheets")
    return names


def _read_sheet(path: Path, sheet: str, limits: InputLimits, header: bool = True) -> pd.DataFrame:
    try:
        frame = pd.read_excel(path, sheet_name=sheet, engine="calamine", dtype=str,
                              keep_default_na=False, na_filter=False,
                              header=0 if header else None)
    except Exception as exc:
        raise CodemapError(f"{path}: sheet {sheet!r} could not be read ({_first_line(exc)})") from None
    if frame.empty and len(frame.columns) == 0:
        raise CodemapError(f"{path}: sheet {sheet!r} is empty")
    if not header:
        frame.columns = _position_names(len(frame.columns))
    _check_cells(path, frame, limits, first_row=2 if header else 1)
    # A code typed as a date in Excel reads as a datetime: write it back the way Excel showed it.
    return frame.fillna("").astype(str).apply(lambda col: col.str.replace(_MIDNIGHT, r"\1", regex=True))


def _position_names(count: int) -> list[str]:
    """Column names of a table read without a header row: 1, 2, 3… (`--text-col 2`)."""
    return [str(n) for n in range(1, count + 1)]


def _check_cells(path: Path, frame: pd.DataFrame, limits: InputLimits, first_row: int) -> None:
    """The columns and cell lengths of a table read whole, against `limits`."""
    if len(frame.columns) > limits.columns:
        raise too_large(path, f"has {len(frame.columns):,} columns", "columns", limits.columns)
    for number, column in enumerate(frame.columns):
        lengths = frame[column].astype(str).str.len()
        if len(lengths) and lengths.max() > limits.cell_chars:
            row = int(lengths.to_numpy().argmax()) + first_row
            raise too_large(path, f"row {row:,}, column {_column_letter(number)}: a cell of "
                            f"{int(lengths.max()):,} characters", "cell-chars", limits.cell_chars,
                            "characters a cell")


def _read_delimited(path: Path, encoding: str | None, limits: InputLimits,
                    header: bool = True) -> pd.DataFrame:
    return next(_iter_delimited(path, encoding, None, limits, header))


def _iter_delimited(path: Path, encoding: str | None, block_rows: int | None,
                    limits: InputLimits = InputLimits(),
                    header: bool = True) -> Iterator[pd.DataFrame]:
    """The file's rows as DataFrames of strings: one frame (block_rows None) or blocks of at most
    `block_rows` rows (and about BLOCK_CHARS characters) read one after the other, so a long list
    never sits in memory whole. Every line is read with a bound (`limits`), so an oversized
    header, row or cell stops the read where it starts."""
    with open(path, "rb") as handle:
        head = handle.read(_SNIFF_BYTES)
        empty = not head.strip() and not handle.read(1)
    if empty:
        raise CodemapError(f"{path}: the file is empty")
    encoding = encoding or _bom_encoding(head)
    if b"\x00" in head and not (encoding or "").lower().startswith("utf-16"):
        raise CodemapError(f"{path}: looks like a binary file, not CSV/TSV text (is it a workbook "
                           f"with the wrong extension?)")
    text = _open_text(path, encoding)
    with text:
        sample = text.read(_SNIFF_BYTES)
        if len(_CONTROL.findall(sample)) > 0.01 * len(sample):
            raise CodemapError(f"{path}: looks like a binary file, not CSV/TSV text (is it a workbook "
                               f"with the wrong extension?)")
        delimiter = _sniff_delimiter(path, sample)
        text.seek(0)
        yield from _Records(path, text, delimiter, limits, header).frames(block_rows)


def _bom_encoding(head: bytes) -> str | None:
    """UTF-16 when the file starts with its byte-order mark: Excel's "Unicode Text" export
    (tab-separated UTF-16), whose every other byte is a NUL."""
    return "utf-16" if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else None


def _closes_quote(line: str) -> bool:
    """Whether a record's last physical line ends its quoted last cell: it ends in an odd run of
    quotes (a pair is a quote inside the cell, one more closes it)."""
    text = line.rstrip("\r\n")
    return (len(text) - len(text.rstrip('"'))) % 2 == 1


class _Records:
    """A delimited text's records, read with Python's csv reader over bounded lines: the header
    first (its width bounds every later line), then rows in blocks."""

    def __init__(self, path: Path, text, delimiter: str, limits: InputLimits, header: bool):
        self.path, self.delimiter, self.limits = path, delimiter, limits
        # The header line may hold every column at its longest; later lines only the header's.
        self.lines = BoundedLines(text, path, line_limit(limits.columns, limits))
        self.reader = csv.reader(self.lines, delimiter=delimiter, quotechar='"', doublequote=True,
                                 strict=False)
        first = self._block(1)
        if not first:
            raise CodemapError(f"{path}: the file is empty")
        first = first[0]
        if len(first) > limits.columns:
            raise too_large(path, f"has {len(first):,} columns", "columns", limits.columns)
        self.lines.limit = line_limit(len(first), limits)
        self.columns = _header_names(first) if header else _position_names(len(first))
        self.pending = [] if header else [first]  # without a header the first line is data
        self.row = 2 if header else 1  # spreadsheet row of the next record
        self.spans: list[int] = []  # first lines of the quoted cells that span several lines
        self.open_span: tuple[int, int] | None = None  # (first, last line) of the last such record

    def _block(self, rows: int | None) -> list[list[str]]:
        """Up to `rows` non-blank records or about BLOCK_CHARS characters of them (a block of a
        streamed read); every record when `rows` is None (a read whole)."""
        found, chars = [], 0
        try:
            with _field_limit(self.limits.cell_chars):
                for record in self._records():
                    found.append(record)
                    chars += sum(map(len, record))
                    if rows is not None and (len(found) >= rows or chars >= BLOCK_CHARS):
                        break
                else:
                    self._check_closed()
        except csv.Error as exc:
            if "field larger than field limit" in str(exc):
                raise too_large(self.path, f"line {self.reader.line_num:,} holds a cell of more "
                                f"than {self.limits.cell_chars:,} characters", "cell-chars",
                                self.limits.cell_chars, "characters a cell") from None
            raise CodemapError(f"{self.path}: could not be parsed as delimited text "
                               f"({_first_line(exc)}, line {self.reader.line_num:,})") from None
        return found

    def _records(self) -> Iterator[list[str]]:
        """The non-blank records, each checked for the lines it spans: a quote an export cut
        ("Vitamin D (1) swallows every line after it into one cell, so the rows after it would
        vanish into one row without a word. More than `limits.cell_lines` lines in one record
        are refused; fewer are counted, and said once at the end (_check_closed)."""
        last = self.reader.line_num
        for record in self.reader:
            first, last = last + 1, self.reader.line_num
            if not record:
                continue
            if last > first and any("\n" in cell or "\r" in cell for cell in record):
                if last - first + 1 > self.limits.cell_lines:
                    raise CodemapError(
                        f"{self.path}: line {first:,}: a quote opened here runs over "
                        f"{last - first + 1:,} lines, to line {last:,} (a cell cut by an export?); "
                        f"close or remove the quote (--limit cell-lines=N allows longer cells)")
                self.spans.append(first)
                # A last cell that ends in a line break is still open unless its last line
                # closes the quote: a cell holding "<line break>" is whole, a cut one is not.
                ends_open = record[-1].endswith(("\n", "\r")) and not _closes_quote(self.lines.last)
                self.open_span = (first, last) if ends_open else None
            else:
                self.open_span = None
            yield record

    def _check_closed(self) -> None:
        """At the end of the file: refuse a quote that never closed (the csv reader, lenient,
        ends its cell at the end of the file), and say how many cells spanned lines."""
        if self.open_span is not None and self.open_span[1] == self.reader.line_num:
            first, last = self.open_span
            raise CodemapError(f"{self.path}: line {first:,}: a quote opened here never closes; "
                               f"lines {first:,}-{last:,} would be read as one cell of one row. "
                               f"Close or remove the quote")
        if self.spans:
            shown = ", ".join(f"{line:,}" for line in self.spans[:5])
            log.warning("%s: %d quoted cell(s) span several lines (from line %s%s); each is read "
                        "as one cell, so the list has fewer rows than lines", self.path,
                        len(self.spans), shown, ", …" if len(self.spans) > 5 else "")
            self.spans = []

    def frames(self, block_rows: int | None) -> Iterator[pd.DataFrame]:
        width, first = len(self.columns), True
        while True:
            records = self.pending + self._block(None if block_rows is None
                                                 else block_rows - len(self.pending))
            self.pending = []
            for number, record in enumerate(records, start=self.row):
                if len(record) > width:
                    raise CodemapError(f"{self.path}: row {number} has {len(record)} fields but "
                                       f"the header has {width}; quote fields that contain the "
                                       f"delimiter {self.delimiter!r}")
                if len(record) < width:
                    record.extend([""] * (width - len(record)))
            self.row += len(records)
            if records or first:  # a header-only file still yields its (empty) frame
                yield pd.DataFrame(records, columns=self.columns, dtype=str)
            first = False
            if not records or block_rows is None:
                return


def _header_names(cells: list[str]) -> list[str]:
    """Header cells as a table's column names, as pandas names them: an empty cell is
    "Unnamed: N", a repeated name gets ".1", ".2" (_warn_duplicate_headers says so)."""
    names, seen = [], {}
    for number, cell in enumerate(cells):
        name = cell if cell.strip() else f"Unnamed: {number}"
        if name in seen:
            seen[name] += 1
            while f"{name}.{seen[name]}" in seen:
                seen[name] += 1
            name = f"{name}.{seen[name]}"
        seen.setdefault(name, 0)
        names.append(name)
    return names


@contextlib.contextmanager
def _field_limit(chars: int):
    """The csv module's cell bound (process-wide) set for one read, then put back."""
    before = csv.field_size_limit(chars)
    try:
        yield
    finally:
        csv.field_size_limit(before)


def _open_text(path: Path, encoding: str | None) -> io.TextIOBase:
    """The file as text, decoded with the given encoding, else UTF-8 (BOM stripped) when the whole
    file is UTF-8, else line by line (see _LineDecoder). Checked in one streaming pass first, so
    the decision is the same as for a file decoded whole."""
    if encoding:
        try:
            codecs.lookup(encoding)
            _check_decodes(path, encoding)
        except (LookupError, UnicodeDecodeError) as exc:
            raise CodemapError(f"{path}: cannot be decoded as {encoding} ({_first_line(exc)}); "
                               f"try --encoding utf-8 or --encoding cp1252") from None
        return open(path, encoding=encoding, newline="")
    try:
        _check_decodes(path, "utf-8")
        return open(path, encoding="utf-8-sig", newline="")
    except UnicodeDecodeError:
        return _LineDecoder(path)


def _check_decodes(path: Path, encoding: str) -> None:
    """Raise UnicodeDecodeError unless the whole file decodes; reads it in 1 MB pieces."""
    decoder = codecs.getincrementaldecoder(encoding)()
    with open(path, "rb") as handle:
        while piece := handle.read(1 << 20):
            decoder.decode(piece)
    decoder.decode(b"", final=True)


class _LineDecoder(io.TextIOBase):
    """A file that is not UTF-8 throughout, decoded line by line (_decode_line): a list pasted
    together from a UTF-8 and a Windows export keeps both halves' accents."""

    def __init__(self, path: Path):
        self.path = path
        self._raw = open(path, "rb")
        self._buffer = ""
        self._warned = self._saw_utf8 = self._saw_other = False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:  # only rewinding is needed
        self._raw.seek(0)
        self._buffer = ""
        return 0

    def read(self, size: int | None = -1) -> str:
        while size is None or size < 0 or len(self._buffer) < size:
            if not self._decode_more():
                break
        if size is None or size < 0:
            out, self._buffer = self._buffer, ""
        else:
            out, self._buffer = self._buffer[:size], self._buffer[size:]
        return out

    def readline(self, limit: int | None = -1) -> str:
        limit = None if limit is None or limit < 0 else limit
        while "\n" not in self._buffer and (limit is None or len(self._buffer) < limit):
            if not self._decode_more():
                break
        end = self._buffer.find("\n") + 1 or len(self._buffer)
        end = end if limit is None else min(end, limit)
        out, self._buffer = self._buffer[:end], self._buffer[end:]
        return out

    def _decode_more(self) -> bool:
        """Decode the next line (or 1 MB of a longer one) into the buffer; False at the end."""
        line = self._raw.readline(1 << 20)
        if not line:
            return False
        if self._raw.tell() == len(line):
            line = line.removeprefix(b"\xef\xbb\xbf")
        text, utf8 = _decode_line(line)
        self._saw_utf8 |= utf8
        self._saw_other |= not line.isascii() and not utf8
        if self._saw_utf8 and self._saw_other and not self._warned:
            log.warning("%s: mixes UTF-8 and Windows (cp1252) lines; each line decoded on its "
                        "own", self.path)
            self._warned = True
        self._buffer += text
        return True

    def close(self) -> None:
        self._raw.close()
        super().close()


def _decode_line(line: bytes) -> tuple[str, bool]:
    """The line's text, and whether it needed UTF-8 (non-ASCII that decodes as UTF-8)."""
    try:
        return line.decode("utf-8"), not line.isascii()
    except UnicodeDecodeError:
        pass
    try:
        return line.decode("cp1252"), False
    except UnicodeDecodeError:
        return line.decode("latin-1"), False


def _sniff_delimiter(path: Path, text: str) -> str:
    if path.suffix.lower() in {".tsv", ".tab"}:
        return "\t"
    sample = text[:_SNIFF_BYTES]
    header = sample.splitlines()[0] if sample.splitlines() else ""
    counts = {d: header.count(d) for d in _DELIMITERS}
    try:
        guess = csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        guess = None
    # The sniffer reads quote patterns, and a quoted cell holding a quote and a "|" ('"|') can
    # make it guess "|" for a comma file. Of the delimiters under which every row has the
    # header's number of fields, the one that gives the most fields wins (a delimiter that
    # splits nothing agrees trivially); on a tie the sniffer's guess, then the header's most used.
    by_header = sorted(_DELIMITERS, key=lambda d: -counts[d])
    candidates = ([guess] if guess else []) + [d for d in by_header if counts[d] and d != guess]
    truncated = len(sample) >= _SNIFF_BYTES
    fields = {d: _agreed_fields(sample, d, truncated) for d in candidates}
    best = max(candidates, key=lambda d: fields[d], default=None)  # max keeps the first on ties
    if best is not None and fields[best]:
        return best
    # A one-column file, or quoting no delimiter parses: the sniffer's guess, else the
    # delimiter the header line uses most, else one column.
    return guess or (by_header[0] if counts[by_header[0]] else ",")


def _agreed_fields(sample: str, delimiter: str, truncated: bool) -> int:
    """The header row's number of fields under `delimiter` where every non-blank row of
    `sample` has as many (a cut-off last row of a `truncated` sample is not counted), else 0."""
    try:
        records = [r for r in csv.reader(io.StringIO(sample), delimiter=delimiter) if r]
    except csv.Error:
        return 0
    if truncated:
        records = records[:-1]
    agree = bool(records) and all(len(r) == len(records[0]) for r in records)
    return len(records[0]) if agree else 0


def _check_duplicate_headers(path: Path, columns) -> None:
    seen: set[str] = set()
    for column in columns:
        if column in seen:
            raise CodemapError(f"{path}: column {column!r} appears twice in the header")
        seen.add(column)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


# --- finding a code list's columns -------------------------------------------------------------

def header_key(name: str) -> str:
    """Fold a header for matching: lower case, accents and punctuation removed."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]", "", folded.lower())


# Header names by role, in English, German, French, Spanish (and a few Italian, Portuguese and
# Dutch ones), folded by header_key.
# Earlier tiers win; two columns in the same best tier are ambiguous.
_ROLE_ALIASES: dict[str, list[set[str]]] = {
    "code": [
        {"sourcecode", "localcode", "code", "testcode", "itemcode", "itemid", "id", "codigo", "codelocal",
         "kode", "schlussel", "nummer", "testid", "conceptcode"},
        # Short codes lists name by what they are, an abbreviation (Kürzel, abréviation, sigla):
        # after the explicit code headers, before bare numbers.
        {"kurzel", "kuerzel", "kurzelcode", "codekurzel", "kurzbezeichnung", "kurzcode",
         "abkurzung", "abkuerzung", "abbreviation", "abbrev", "abbr", "shortcode", "mnemonic",
         "abreviation", "codecourt", "abrege", "sigle", "abreviatura", "sigla", "codigocorto",
         "codice", "afkorting"},
        {"key", "number", "nr", "no", "identifier", "cle", "clave", "numero"},
    ],
    "text": [
        {"sourcename", "sourcecodedescription", "sourcedescription", "localname", "testname",
         "name", "label", "description", "term", "text", "drug", "medication", "drugname",
         "bezeichnung", "beschreibung", "testbezeichnung", "analyt", "libelle", "nom",
         "descripcion", "nombre", "denominacion", "prueba", "analysis", "analyse",
         "naam", "omschrijving", "testnaam", "bepaling", "nome", "descrizione", "descricao",
         "esame", "exame"},
        {"title", "display", "displayname", "longname", "shortname", "titel", "designation"},
        # An alias list ("BUN", "Hgb") names its one text column for what it holds.
        {"alias", "aliases", "localalias", "testalias", "synonym", "synonyms"},
    ],
    "unit": [{"unit", "units", "uom", "einheit", "einheiten", "unite", "unites", "unidad",
              "unidades", "ucum", "unitofmeasure"}],
    "specimen": [{"specimen", "fluid", "material", "sample", "specimentype", "probe", "probenart",
                  "untersuchungsmaterial", "echantillon", "prelevement", "muestra", "system"}],
}


@dataclass(frozen=True)
class SourceTable:
    """A source code list with its roles resolved.

    `frame` keeps every input column as read, in input order; `row` numbers are 1-based data rows
    as a spreadsheet user counts them below the header (header is row 1, so data starts at 2).
    """

    path: Path
    frame: pd.DataFrame
    code_col: str | None
    text_cols: tuple[str, ...]
    unit_col: str | None
    specimen_col: str | None
    first_row: int = 2  # spreadsheet row of the frame's first row; later for a block of a list

    @property
    def texts(self) -> list[str]:
        """The query text of each row: the text columns joined with single spaces."""
        parts = self.frame[list(self.text_cols)].apply(lambda col: col.str.strip())
        return [" ".join(p for p in row if p) for row in parts.itertuples(index=False)]

    @property
    def query_texts(self) -> list[str]:
        """What is embedded: the text, plus the specimen when the list has a specimen column.

        "Potassium" alone is as close to urine as to serum potassium; "Potassium Blood" is not.
        Measured on the MIMIC-IV dev labels against the LOINC subset: acc@1 0.424 → 0.486.
        """
        if self.specimen_col is None or self.specimen_col in self.text_cols:
            return self.texts
        specimens = self.column(self.specimen_col)
        return [f"{t} {s}" if t and s else t for t, s in zip(self.texts, specimens)]

    @property
    def codes(self) -> list[str]:
        """Each row's source code; the spreadsheet row number where the list has no code column."""
        if self.code_col is None:
            return [f"row{n}" for n in self.rows]
        return [c.strip() for c in self.frame[self.code_col]]

    @property
    def rows(self) -> list[int]:
        return list(range(self.first_row, self.first_row + len(self.frame)))

    def blocks(self, size: int) -> Iterator["SourceTable"]:
        """The list in consecutive blocks of at most `size` rows, each keeping its row numbers."""
        for start in range(0, len(self.frame), size):
            frame = self.frame.iloc[start:start + size].reset_index(drop=True)
            yield replace(self, frame=frame, first_row=self.first_row + start)

    def roles(self) -> str:
        """Which columns the list is read from, e.g. "code=Kürzel, text=Bezeichnung, unit=Einheit"
        (a list without a code column: "code=(none: row numbers)")."""
        roles = [("code", self.code_col or "(none: row numbers)"),
                 ("text", "+".join(self.text_cols)), ("unit", self.unit_col),
                 ("specimen", self.specimen_col)]
        return ", ".join(f"{role}={column}" for role, column in roles if column)

    def column(self, name: str | None) -> list[str]:
        """Values of an optional column (unit, specimen), "" where the list has no such column."""
        if name is None:
            return [""] * len(self.frame)
        return [v.strip() for v in self.frame[name]]


def read_code_list(path: str | Path, options: ReadOptions = ReadOptions()) -> SourceTable:
    """Read a source code list and resolve which columns hold the code, text, unit and specimen.

    Raises CodemapError for an unreadable file, a file past `options.limits`, a file without
    data rows, a named column that does not exist, or a text column that cannot be found or is
    ambiguous.
    """
    path = Path(path)
    frame = read_table(path, sheet=options.sheet, encoding=options.encoding,
                       limits=options.limits, header=options.header)
    if frame.empty:
        raise CodemapError(f"{path}: has a header but no data rows")
    return _with_roles(path, frame, options)


def iter_code_list(path: str | Path, options: ReadOptions = ReadOptions(),
                   block_rows: int = 50_000) -> Iterator[SourceTable]:
    """A source code list in consecutive blocks of at most `block_rows` rows, each a SourceTable
    with its spreadsheet row numbers; roles are resolved once, from the header, as read_code_list
    resolves them.

    CSV/TSV files are read block by block (memory does not grow with the file); a workbook sheet
    is read whole (within `options.limits`) and then cut into blocks. Raises CodemapError as
    read_code_list does, before the first block is yielded.
    """
    path = _existing(path)
    if path.suffix.lower() in WORKBOOK_SUFFIXES:
        yield from read_code_list(path, options).blocks(block_rows)
        return
    first_row, roles = 2 if options.header else 1, None
    for frame in _iter_delimited(path, options.encoding, block_rows, options.limits,
                                 options.header):
        if roles is None:
            frame.columns = [str(c).strip() for c in frame.columns]
            _check_header(path, frame.columns)
            if frame.empty:
                raise CodemapError(f"{path}: has a header but no data rows")
            roles = _with_roles(path, frame, options)
            columns = list(frame.columns)
        frame.columns = columns
        yield replace(roles, frame=frame.reset_index(drop=True), first_row=first_row)
        first_row += len(frame)


def _with_roles(path: Path, frame: pd.DataFrame, options: ReadOptions) -> SourceTable:
    columns = list(frame.columns)
    for given in (options.code_col, options.unit_col, options.specimen_col, *options.text_cols):
        if given is not None and given not in columns:
            raise CodemapError(f"{path}: no column named {given!r} (columns: {name_list(columns)})")
    # A list of one column is that column's texts, whatever its header says ("Tests").
    text_cols = tuple(options.text_cols) or (_find_role(path, columns, "text",
                                                        required=len(columns) > 1) or columns[0],)
    taken = set(text_cols)
    code_col = options.code_col or _find_role(path, columns, "code", exclude=taken)
    unit_col = options.unit_col or _find_role(path, columns, "unit", exclude=taken | {code_col})
    specimen_col = options.specimen_col or _find_role(path, columns, "specimen",
                                                      exclude=taken | {code_col, unit_col})
    table = SourceTable(path, frame, code_col, text_cols, unit_col, specimen_col,
                        first_row=2 if options.header else 1)
    _warn_duplicate_headers(path, columns, table)
    # Said every time, not only when a guess is doubtful: a list whose code column was missed
    # gets row numbers as codes, and this line is where a person notices.
    columns_log.info("%s: columns: %s", path.name, table.roles())
    return table


_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)?")
_UNIT = re.compile(r"%|[a-zA-Zµμ]{1,5}/[a-zA-Z0-9µμ]{1,5}|10\^\d+/[a-zA-Z]{1,3}")


def data_like_headers(table: SourceTable, is_name=lambda cell: False) -> list[str]:
    """The header cells of `table` that read like data, each with why ("'135': a number"):
    a number, a unit, or (`is_name`, the target's) a concept name. Cells that name a column
    role ("code", "Einheit") are headers whatever else they look like."""
    if table.first_row != 2:  # read without a header row
        return []
    roles = {key for tiers in _ROLE_ALIASES.values() for tier in tiers for key in tier}
    found = []
    for cell in table.frame.columns:
        cell = str(cell).strip()
        if not cell or header_key(cell) in roles or cell.startswith("Unnamed: "):
            continue
        why = ("a number" if _NUMBER.fullmatch(cell) else "a unit" if _UNIT.fullmatch(cell)
               else "a name in the target" if is_name(cell) else "")
        if why:
            found.append(f"{cell!r}: {why}")
    return found


def warn_data_like_header(table: SourceTable, is_name=lambda cell: False) -> None:
    """Warn when the header row reads like data (data_like_headers): a list exported without
    one would lose its first row as a header."""
    found = data_like_headers(table, is_name)
    if found:
        log.warning("%s: the header row looks like data (%s); if the list has no header row, "
                    "pass --no-header", table.path.name, name_list(found, 4))


def _warn_duplicate_headers(path: Path, columns: list[str], table: "SourceTable") -> None:
    """pandas reads a second column named like an earlier one as "name.1" (a third "name.2"):
    say so, and which of them the list is read from, since the other is silently left out."""
    used = {table.code_col: "code", table.unit_col: "unit", table.specimen_col: "specimen",
            **{c: "text" for c in table.text_cols}}
    for column in columns:
        found = re.fullmatch(r"(.+)\.(\d+)", column)
        if not found or found.group(1) not in columns:
            continue
        first = found.group(1)
        where = f"columns {_column_letter(columns.index(first))} and " \
                f"{_column_letter(columns.index(column))}"
        if first in used or column in used:
            taken, other = (first, column) if first in used else (column, first)
            role = used[taken]
            which = (f"using {taken!r} as the {role} column (--{role}-col {other!r} for the "
                     f"other)")
        else:
            which = "neither is used"
        log.warning("%s: two columns are named %r (%s); the second is read as %r; %s", path,
                    first, where, column, which)


def _column_letter(number: int) -> str:
    """The spreadsheet letter of a 0-based column number (0 → A, 26 → AA)."""
    letters = ""
    number += 1
    while number:
        number, rest = divmod(number - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def _find_role(path: Path, columns: list[str], role: str, *, required: bool = False,
               exclude: set | None = None) -> str | None:
    exclude = exclude or set()
    for tier in _ROLE_ALIASES[role]:
        hits = [c for c in columns if c not in exclude and header_key(c) in tier]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            flag = "--text-col" if role == "text" else f"--{role}-col"
            raise CodemapError(f"{path}: more than one column could be the {role} column "
                               f"({name_list(hits)}); choose with {flag}")
    if required:
        flag = "--text-col" if role == "text" else f"--{role}-col"
        raise CodemapError(f"{path}: no {role} column found among {name_list(columns)}; "
                           f"name it with {flag}")
    return None
