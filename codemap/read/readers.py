"""Read tabular files (CSV, TSV, xlsx, xls, ods) into string tables, and find a code list's columns.

One reader serves every tabular input: source code lists, vocabulary tables, gold pairs and
reviewed workbooks. Every cell is read as text, so codes keep their leading zeros ("00123") and
"NA" or "null" stay the strings a person typed.
"""
from __future__ import annotations

import codecs
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
# Put before the candidate columns when several lists are mapped together: which list a row is from.
SOURCE_FILE_COLUMN = "source_file"


def read_table(path: str | Path, sheet: str | None = None, encoding: str | None = None) -> pd.DataFrame:
    """Read a CSV/TSV or workbook sheet into a DataFrame of strings (empty cells are "").

    Raises CodemapError when the file is missing, unreadable, empty or has no header.
    """
    path = Path(path)
    if not path.exists():
        raise CodemapError(f"{path}: file not found")
    if path.is_dir():
        raise CodemapError(f"{path}: is a folder, expected a CSV, TSV or Excel file")
    suffix = path.suffix.lower()
    if suffix in WORKBOOK_SUFFIXES:
        frame = _read_workbook(path, sheet)
    else:
        frame = _read_delimited(path, encoding)
    frame.columns = [str(c).strip() for c in frame.columns]
    _check_header(path, frame.columns)
    return frame


def _check_header(path: Path, columns) -> None:
    if len(columns) == 0 or all(c == "" or c.startswith("Unnamed:") for c in columns):
        raise CodemapError(f"{path}: no header row found")
    _check_duplicate_headers(path, columns)


def _read_workbook(path: Path, sheet: str | None) -> pd.DataFrame:
    from python_calamine import CalamineWorkbook  # imported here: only workbook inputs need it

    if path.suffix.lower() in {".xlsx", ".xlsm"}:
        with open(path, "rb") as handle:
            if handle.read(8) == _OLE2_MAGIC:
                raise CodemapError(f"{path}: the workbook is password-protected (encrypted); save an "
                                   f"unprotected copy from Excel and map that")
    try:
        workbook = CalamineWorkbook.from_path(str(path))
    except Exception as exc:  # calamine raises its own error types for every unreadable file
        raise CodemapError(f"{path}: not a readable workbook ({_first_line(exc)})") from None
    names = workbook.sheet_names
    if not names:
        raise CodemapError(f"{path}: the workbook has no sheets")
    if sheet is None:
        sheet = names[0]
    elif sheet not in names:
        raise CodemapError(f"{path}: no sheet named {sheet!r} (sheets: {', '.join(names)}); use --sheet")
    try:
        frame = pd.read_excel(path, sheet_name=sheet, engine="calamine", dtype=str,
                              keep_default_na=False, na_filter=False)
    except Exception as exc:
        raise CodemapError(f"{path}: sheet {sheet!r} could not be read ({_first_line(exc)})") from None
    if frame.empty and len(frame.columns) == 0:
        raise CodemapError(f"{path}: sheet {sheet!r} is empty")
    # A code typed as a date in Excel reads as a datetime: write it back the way Excel showed it.
    return frame.fillna("").astype(str).apply(lambda col: col.str.replace(_MIDNIGHT, r"\1", regex=True))


def _read_delimited(path: Path, encoding: str | None) -> pd.DataFrame:
    return next(_iter_delimited(path, encoding, block_rows=None))


def _iter_delimited(path: Path, encoding: str | None, block_rows: int | None) -> Iterator[pd.DataFrame]:
    """The file's rows as DataFrames of strings: one frame (block_rows None) or blocks of at most
    `block_rows` rows read one after the other, so a long list never sits in memory whole."""
    with open(path, "rb") as handle:
        head = handle.read(_SNIFF_BYTES)
        empty = not head.strip() and not handle.read(1)
    if empty:
        raise CodemapError(f"{path}: the file is empty")
    if b"\x00" in head:
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
        try:
            with warnings.catch_warnings():
                # index_col=False: a row longer than the header must not turn column 1 into an index.
                warnings.simplefilter("error", pd.errors.ParserWarning)
                frames = pd.read_csv(text, sep=delimiter, dtype=str, keep_default_na=False,
                                     na_filter=False, quotechar='"', skip_blank_lines=True,
                                     index_col=False, chunksize=block_rows)
                if block_rows is None:
                    yield frames
                    return
                first = True
                for frame in frames:
                    if first or len(frame):  # a header-only file still yields its (empty) frame
                        yield frame
                    first = False
        except pd.errors.EmptyDataError:
            raise CodemapError(f"{path}: the file is empty") from None
        except pd.errors.ParserWarning:
            raise CodemapError(f"{path}: row 2 has more fields than the header; quote fields that "
                               f"contain the delimiter {delimiter!r}") from None
        except pd.errors.ParserError as exc:
            found = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
            if found:
                want, line, saw = found.groups()
                raise CodemapError(f"{path}: row {line} has {saw} fields but the header has {want}; "
                                   f"quote fields that contain the delimiter {delimiter!r}") from None
            raise CodemapError(f"{path}: could not be parsed as delimited text "
                               f"({_first_line(exc)})") from None


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
            line = self._raw.readline()
            if not line:
                break
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
        if size is None or size < 0:
            out, self._buffer = self._buffer, ""
        else:
            out, self._buffer = self._buffer[:size], self._buffer[size:]
        return out

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
         "descripcion", "nombre", "denominacion", "prueba", "analysis", "analyse"},
        {"title", "display", "displayname", "longname", "shortname", "titel", "designation"},
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

    Raises CodemapError for an unreadable file, a file without data rows, a named column that does
    not exist, or a text column that cannot be found or is ambiguous.
    """
    path = Path(path)
    frame = read_table(path, sheet=options.sheet, encoding=options.encoding)
    if frame.empty:
        raise CodemapError(f"{path}: has a header but no data rows")
    return _with_roles(path, frame, options)


def iter_code_list(path: str | Path, options: ReadOptions = ReadOptions(),
                   block_rows: int = 50_000) -> Iterator[SourceTable]:
    """A source code list in consecutive blocks of at most `block_rows` rows, each a SourceTable
    with its spreadsheet row numbers; roles are resolved once, from the header, as read_code_list
    resolves them.

    CSV/TSV files are read block by block (memory does not grow with the file); a workbook sheet
    is read whole (at most 1,048,576 rows, Excel's limit) and then cut into blocks. Raises
    CodemapError as read_code_list does, before the first block is yielded.
    """
    path = Path(path)
    if path.suffix.lower() in WORKBOOK_SUFFIXES or not path.exists() or path.is_dir():
        yield from read_code_list(path, options).blocks(block_rows)
        return
    first_row, roles = 2, None
    for frame in _iter_delimited(path, options.encoding, block_rows):
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
            raise CodemapError(f"{path}: no column named {given!r} (columns: {', '.join(columns)})")
    text_cols = tuple(options.text_cols) or (_find_role(path, columns, "text", required=True),)
    taken = set(text_cols)
    code_col = options.code_col or _find_role(path, columns, "code", exclude=taken)
    unit_col = options.unit_col or _find_role(path, columns, "unit", exclude=taken | {code_col})
    specimen_col = options.specimen_col or _find_role(path, columns, "specimen",
                                                      exclude=taken | {code_col, unit_col})
    table = SourceTable(path, frame, code_col, text_cols, unit_col, specimen_col)
    _warn_duplicate_headers(path, columns, table)
    # Said every time, not only when a guess is doubtful: a list whose code column was missed
    # gets row numbers as codes, and this line is where a person notices.
    columns_log.info("%s: columns: %s", path.name, table.roles())
    return table


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
                               f"({', '.join(hits)}); choose with {flag}")
    if required:
        flag = "--text-col" if role == "text" else f"--{role}-col"
        raise CodemapError(f"{path}: no {role} column found among {', '.join(columns)}; "
                           f"name it with {flag}")
    return None
