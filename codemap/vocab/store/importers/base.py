"""What every importer shares: its options and result, the table shapes, reading delimited files
with DuckDB's CSV reader (explicit columns, so a short or long row fails with its line number),
chunked appends for the formats parsed in Python (OBO, XML), and turning DuckDB errors into
CodemapError.
"""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pandas as pd

from ....errors import CodemapError
from ...vocabulary import NAME_COLUMNS, RELATION_COLUMNS

NAME_TABLE = "CREATE TABLE names (code VARCHAR, name VARCHAR, name_type VARCHAR, lang VARCHAR)"
RELATION_TABLE = "CREATE TABLE relations (head VARCHAR, relation VARCHAR, tail VARCHAR)"
# What a release says of the concepts it retired: by what each is replaced (a code of this release,
# or empty), why it left and the publisher's note on the replacement ("if units are mg/dL").
# `code` may be absent from `concepts` (a retired RXCUI, an OMOP concept a filter dropped). Read by
# `codemap memory recheck`, never by ranking.
REPLACEMENT_TABLE = ("CREATE TABLE IF NOT EXISTS replacements (code VARCHAR, relation VARCHAR, "
                     "replacement VARCHAR, reason VARCHAR, note VARCHAR)")
REPLACEMENT_COLUMNS = ["code", "relation", "replacement", "reason", "note"]
CHUNK_ROWS = 50_000


@dataclass(frozen=True)
class ImportOptions:
    """Choices for `codemap vocab import` (each format uses the ones that apply to it)."""

    name: str | None = None  # store name; the format's default (LOINC, HP, UMLS…) when None
    version: str | None = None  # release label; read from the files where they carry one
    vocabularies: tuple[str, ...] = ()  # OMOP vocabulary_id values to keep
    sabs: tuple[str, ...] = ()  # UMLS / RxNorm source abbreviations to keep
    langs: tuple[str, ...] = ()  # name languages to keep (UMLS LAT codes or ISO codes)
    domains: tuple[str, ...] = ()  # OMOP domain_id values to keep
    concept_classes: tuple[str, ...] = ()  # OMOP concept_class_id values to keep
    standard_only: bool = False  # OMOP: standard concepts only
    valid_only: bool = False  # OMOP: drop concepts with an invalid_reason


@dataclass
class ImportResult:
    """What an importer read: the release label, the files it used, a licence notice."""

    version: str
    sources: list[Path]
    notice: str = ""
    options: dict = field(default_factory=dict)


def sql_text(value: str) -> str:
    """A string literal for SQL (file paths cannot be bound as parameters in read_csv)."""
    return "'" + str(value).replace("'", "''") + "'"


def read_csv_sql(path: Path, columns: list[str], *, delim: str, header: bool,
                 quote: str = "") -> str:
    """A DuckDB `read_csv(...)` over `path` with every column VARCHAR and no type sniffing.

    With explicit columns DuckDB rejects a row with too few or too many fields and names its
    line, which is how truncated files and wrong delimiters surface.
    """
    cols = ", ".join(f"{sql_text(c)}: 'VARCHAR'" for c in columns)
    return (f"read_csv({sql_text(path)}, columns = {{{cols}}}, delim = {sql_text(delim)}, "
            f"header = {str(header).lower()}, quote = {sql_text(quote)}, "
            f"escape = {sql_text(quote)}, auto_detect = false, strict_mode = true)")


def execute(con: duckdb.DuckDBPyConnection, sql: str, path: Path, params=None) -> None:
    """Run `sql`; a DuckDB error (bad row, wrong delimiter) becomes CodemapError naming `path`."""
    try:
        con.execute(sql, params or [])
    except duckdb.Error as exc:
        raise CodemapError(f"{path}: {_duckdb_message(exc)}") from None


def _duckdb_message(exc: duckdb.Error) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if lines and lines[0].startswith("Invalid Input Error: CSV Error on Line"):
        # "CSV Error on Line: 3" + "Expected Number of Columns: 3 Found: 2": the two that matter.
        where = lines[0].split("Invalid Input Error: CSV Error on ", 1)[1].lower()
        detail = next((x for x in lines if x.startswith("Expected Number")), lines[-1])
        return f"{where}: {detail.lower()} (truncated row or wrong delimiter?)"
    return lines[0] if lines else type(exc).__name__


def read_header(path: Path, delim: str, required: list[str], encoding: str = "utf-8-sig") -> list[str]:
    """The header row of a delimited file; raises CodemapError when a required column is missing
    (the usual sign of a wrong file or a wrong delimiter)."""
    try:
        with open(path, encoding=encoding, newline="") as handle:
            first = handle.readline().rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise CodemapError(f"{path}: cannot read ({exc})") from None
    columns = [c.strip().strip('"') for c in first.split(delim)]
    missing = [c for c in required if c not in columns]
    if missing:
        shown = first[:120] + ("…" if len(first) > 120 else "")
        raise CodemapError(f"{path}: line 1: missing column(s) {', '.join(missing)} (header read "
                           f"with delimiter {delim!r}: {shown!r})")
    return columns


def find_file(folder: Path, names: list[str], what: str, required: bool = True) -> Path | None:
    """The first of `names` (case-insensitive, searched recursively) inside `folder`."""
    if folder.is_file():
        if folder.name.lower() in {n.lower() for n in names}:
            return folder
        folder = folder.parent
    wanted = [n.lower() for n in names]
    for root, _dirs, files in sorted(os.walk(folder)):
        lowered = {f.lower(): f for f in files}
        for name in wanted:
            if name in lowered:
                return Path(root) / lowered[name]
    if required:
        raise CodemapError(f"{folder}: no {what} file found (looked for {', '.join(names)})")
    return None


def find_prefixed(folder: Path, prefix: str, what: str, required: bool = True) -> Path | None:
    """The file whose name starts with `prefix` (RF2 names carry edition and date)."""
    matches = sorted(p for p in folder.rglob(f"{prefix}*") if p.is_file())
    if not matches and required:
        raise CodemapError(f"{folder}: no {what} file found (looked for {prefix}*)")
    return matches[0] if matches else None


class ChunkWriter:
    """Buffers rows parsed in Python and appends them to a DuckDB table in chunks."""

    def __init__(self, con: duckdb.DuckDBPyConnection, table: str, columns: list[str]) -> None:
        self.con, self.table, self.columns, self.rows = con, table, columns, []

    def add(self, row: tuple) -> None:
        self.rows.append(row)
        if len(self.rows) >= CHUNK_ROWS:
            self.flush()

    def flush(self) -> None:
        if self.rows:
            self.con.append(self.table, pd.DataFrame(self.rows, columns=self.columns))
            self.rows = []


@contextlib.contextmanager
def chunk_writers(con: duckdb.DuckDBPyConnection, concept_columns: list[str]):
    """Create the three store tables (every concept column VARCHAR) and yield a ChunkWriter for
    each, for the formats parsed in Python; the last partial chunks are flushed on success."""
    con.execute("CREATE TABLE concepts (" + ", ".join(f"{c} VARCHAR" for c in concept_columns)
                + ")")
    con.execute(NAME_TABLE)
    con.execute(RELATION_TABLE)
    writers = (ChunkWriter(con, "concepts", concept_columns),
               ChunkWriter(con, "names", NAME_COLUMNS),
               ChunkWriter(con, "relations", RELATION_COLUMNS))
    yield writers
    for writer in writers:
        writer.flush()
