"""The vocabulary store: each imported vocabulary is one DuckDB file under the store folder.

A vocabulary file holds five tables: `concepts` (code, name, vocabulary, status, attribute columns…),
`names` (code, name, name_type, lang), `relations` (head, relation, tail), `replacements` (code,
relation, replacement, reason, note: what the release says replaces a concept it retired, where
the publisher ships that) and `meta` (key, value: format, version, source files with their sizes and
hashes, content hash, licence notice).

An import writes a new DuckDB file beside the old one and renames it over the old one only when
every table is complete, so a failed or killed import leaves the previous release untouched and
never a half-imported vocabulary. Importers (one module per format under `importers/`) stream the
publisher's files through DuckDB's own CSV reader or in chunks, never as Python object graphs, so
UMLS-sized releases import in bounded memory.
"""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pandas as pd

from ...config import VocabFilter, default_cache_dir
from ...read.bounds import name_list
from ...errors import CodemapError
from ...files import atomic_path, locked, sha256_file, sha256_text
from ..vocabulary import Vocabulary
from .importers import IMPORTERS, ImportOptions, ImportResult
from .importers.base import REPLACEMENT_COLUMNS, REPLACEMENT_TABLE

log = logging.getLogger(__name__)

SUFFIX = ".duckdb"
TABLES = ("concepts", "names", "relations", "replacements")
_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# Memory DuckDB may use while importing; beyond it, sorts and joins spill to a temporary folder.
IMPORT_MEMORY_LIMIT = "1GB"


def default_store_dir() -> Path:
    """<cache dir>/store: $CODEMAP_CACHE_DIR/store, else ~/.cache/codemap/store."""
    return default_cache_dir() / "store"


@dataclass(frozen=True)
class StoredVocabulary:
    """What `vocab list` shows about one imported vocabulary."""

    name: str
    path: Path
    meta: dict

    @property
    def version(self) -> str:
        return self.meta.get("version", "")


class VocabStore:
    """A folder of imported vocabularies; `load` returns them as `codemap.vocab.Vocabulary`."""

    def __init__(self, folder: str | Path | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_store_dir()

    # --- reading ------------------------------------------------------------------------------

    def list(self) -> list[StoredVocabulary]:
        """Every vocabulary in the store, by name."""
        if not self.folder.is_dir():
            return []
        found = []
        for path in sorted(self.folder.glob(f"*{SUFFIX}")):
            with _connect(path, read_only=True) as con:
                found.append(StoredVocabulary(path.stem, path, _read_meta(con)))
        return found

    def names(self) -> list[str]:
        """The names of the vocabularies in the store, without opening them."""
        return sorted(path.stem for path in self.folder.glob(f"*{SUFFIX}")) \
            if self.folder.is_dir() else []

    def find(self, name: str) -> Path | None:
        """The file of vocabulary `name` (case-insensitive), or None."""
        if not self.folder.is_dir():
            return None
        for path in self.folder.glob(f"*{SUFFIX}"):
            if path.stem.lower() == name.lower():
                return path
        return None

    def path_of(self, name: str) -> Path:
        """Like `find`, but raises CodemapError naming the vocabularies there are."""
        path = self.find(name)
        if path is None:
            known = ", ".join(v.name for v in self.list()) or "none"
            raise CodemapError(f"no vocabulary {name!r} in the store {self.folder} (imported: "
                               f"{known}); import it with `codemap vocab import`")
        return path

    def load(self, name: str, vocab_filter: VocabFilter = VocabFilter()) -> Vocabulary:
        """Vocabulary `name` as a `Vocabulary` (filtered in DuckDB before it reaches pandas)."""
        path = self.path_of(name)
        with _connect(path, read_only=True) as con:
            meta = _read_meta(con)
            concepts, names, relations = select_filtered(con, vocab_filter, str(path))
        content = sha256_text(meta.get("content_hash", ""), vocab_filter.describe())
        notice = meta.get("notice", "")
        if vocab_filter.active:
            notice = f"{notice} Filtered: {vocab_filter.describe()}.".strip()
        return Vocabulary(id=path.stem, version=meta.get("version", ""), concepts=concepts,
                          names=names, notice=notice, source=f"store:{path}",
                          relations=relations, _hash=content)

    def replacements(self, name: str) -> pd.DataFrame:
        """The `replacements` table of vocabulary `name` (code, relation, replacement, reason, note):
        empty for a format that ships none, or a file imported before codemap kept them."""
        with _connect(self.path_of(name), read_only=True) as con:
            tables = {row[0] for row in con.execute("SHOW TABLES").fetchall()}
            if "replacements" not in tables:
                return pd.DataFrame(columns=REPLACEMENT_COLUMNS, dtype=str)
            return _as_text(con.execute(
                f"SELECT {', '.join(REPLACEMENT_COLUMNS)} FROM replacements").df())

    def show(self, name: str, code: str | None = None) -> dict:
        """Metadata and counts of a vocabulary, or one concept with its names and relations."""
        path = self.path_of(name)
        with _connect(path, read_only=True) as con:
            if code is None:
                return _read_meta(con)
            concept = con.execute("SELECT * FROM concepts WHERE code = ?", [code]).df()
            if concept.empty:
                raise CodemapError(f"{name}: no concept with code {code!r}")
            names = con.execute("SELECT name, name_type, lang FROM names WHERE code = ?",
                                [code]).df()
            relations = con.execute("SELECT head, relation, tail FROM relations "
                                    "WHERE head = ? OR tail = ? LIMIT 200", [code, code]).df()
        return {"concept": concept.fillna("").iloc[0].to_dict(), "names": names,
                "relations": relations}

    # --- writing ------------------------------------------------------------------------------

    def import_files(self, fmt: str, path: str | Path, options: ImportOptions) -> StoredVocabulary:
        """Import `path` in format `fmt` as vocabulary `options.name` (or the format's default).

        Replaces a vocabulary of the same name atomically. Raises CodemapError for unknown
        formats, unreadable or malformed files (naming file and line) and bad names.
        """
        importer = IMPORTERS.get(fmt)
        if importer is None:
            raise CodemapError(f"unknown format {fmt!r}; use one of {', '.join(sorted(IMPORTERS))}")
        path = Path(path)
        if not path.exists():
            raise CodemapError(f"{path}: file or folder not found")
        name = options.name or importer.default_name(path)
        if not _NAME_PATTERN.match(name):
            raise CodemapError(f"{name!r} is not a usable vocabulary name: use letters, digits, "
                               f"'_', '-' or '.' (set one with --name)")
        existing = self.find(name)
        target = existing if existing is not None else self.folder / f"{name}{SUFFIX}"
        # Two imports of one name run one after the other; readers keep the file they opened.
        with locked(target, f"importing {name}"), atomic_path(target) as tmp:
            tmp.unlink()  # DuckDB must create the file itself
            with _connect(tmp) as con:
                con.execute(f"SET memory_limit = '{IMPORT_MEMORY_LIMIT}'")
                con.execute("SET preserve_insertion_order = false")
                result = importer.run(con, path, options)
                con.execute(REPLACEMENT_TABLE)  # empty where the format ships no replacements
                _check_tables(con, fmt, path)
                meta = _meta(con, name, fmt, result)
                _write_meta(con, meta)
            Path(f"{tmp}.wal").unlink(missing_ok=True)
        log.info("imported %s: %s concepts, %s names, %s relations", name, meta["concepts"],
                 meta["names"], meta["relations"])
        return StoredVocabulary(name, target, meta)

    def remove(self, name: str) -> Path:
        """Delete vocabulary `name`; raises CodemapError when it is not there."""
        path = self.path_of(name)
        path.unlink()
        return path


def filtered(vocab: Vocabulary, vocab_filter: VocabFilter) -> Vocabulary:
    """A vocabulary read from a file or built in, after `vocab_filter`: the store's own query
    over its frames, so `--lang en` keeps the built-in LOINC's English names as it keeps an
    import's. Raises CodemapError as `select_filtered` does."""
    if not vocab_filter.active:
        return vocab
    relations = vocab.relations if vocab.relations is not None else pd.DataFrame(
        columns=["head", "relation", "tail"], dtype=str)
    with duckdb.connect() as con:
        for table, frame in (("concepts", vocab.concepts), ("names", vocab.names),
                             ("relations", relations)):
            con.register(table, frame)
        concepts, names, relations = select_filtered(con, vocab_filter, vocab.source or vocab.id)
    return Vocabulary(vocab.id, vocab.version, concepts, names,
                      f"{vocab.notice} Filtered: {vocab_filter.describe()}.".strip(), vocab.source,
                      relations)


def select_filtered(con: duckdb.DuckDBPyConnection, vocab_filter: VocabFilter,
                    where: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Concepts, names and relations of the `concepts`/`names`/`relations` tables visible on
    `con`, after `vocab_filter`. Serves the store and (through registered frames) any Vocabulary.

    Raises CodemapError when a filter names an attribute the vocabulary does not have, or leaves
    no name to map onto (a `--lang` no name is tagged with: untagged names match none).
    """
    columns = [row[0] for row in con.execute("DESCRIBE concepts").fetchall()]
    clauses, params = [], []
    by_key: dict[str, list[str]] = {}
    for key, value in vocab_filter.attributes:
        column = next((c for c in columns if c.lower() == key.lower()), None)
        if column is None:
            raise CodemapError(f"{where}: no concept attribute {key!r} to filter on (attributes: "
                               f"{name_list(c for c in columns if c != 'code')})")
        by_key.setdefault(column, []).append(value.lower())
    for column, values in by_key.items():
        clauses.append(f'lower(CAST("{column}" AS VARCHAR)) IN '
                       f'({", ".join("?" for _ in values)})')
        params += values
    if vocab_filter.standard_only and "status" in columns:
        clauses.append("status = 'active'")
    lang_sql, lang_params = "TRUE", []
    if vocab_filter.langs:
        lang_sql = " OR ".join("lower(lang) = ? OR lower(lang) LIKE ?" for _ in vocab_filter.langs)
        lang_params = [p for lang in vocab_filter.langs for p in (lang.lower(), f"{lang.lower()}-%")]
    # The kept concepts are materialised once: names and relations both join on them.
    con.execute("CREATE OR REPLACE TEMP TABLE kept AS SELECT * FROM concepts WHERE "
                f"{' AND '.join(clauses) or 'TRUE'}", params)
    if vocab_filter.langs:  # a concept without a name in the wanted languages cannot be found
        con.execute("DELETE FROM kept WHERE code NOT IN (SELECT code FROM names WHERE name <> '' "
                    f"AND ({lang_sql}))", lang_params)
    names = con.execute(
        "SELECT code, name, name_type, lang FROM names SEMI JOIN kept USING (code) "
        f"WHERE name <> '' AND ({lang_sql}) ORDER BY code, name_type <> 'preferred', name",
        lang_params).df()
    if vocab_filter.active and names.empty:
        tagged = con.execute("SELECT DISTINCT lang FROM names WHERE lang IS NOT NULL AND lang <> '' "
                             "ORDER BY lang").fetchall()
        con.execute("DROP TABLE kept")
        raise CodemapError(f"{where}: no name is left after {vocab_filter.describe()} (languages "
                           f"tagged: {', '.join(str(t[0]) for t in tagged) or 'none'})")
    concepts = con.execute("SELECT * FROM kept ORDER BY code").df()
    relations = con.execute(
        "SELECT r.head, r.relation, r.tail FROM relations r SEMI JOIN kept a ON r.head = a.code "
        "SEMI JOIN kept b ON r.tail = b.code").df() if vocab_filter.active else con.execute(
        "SELECT head, relation, tail FROM relations").df()
    con.execute("DROP TABLE kept")
    return _as_text(concepts), _as_text(names), _as_text(relations)


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.fillna("").astype(str).reset_index(drop=True)


def _connect(path: Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as exc:
        raise CodemapError(f"{path}: not a readable vocabulary store file "
                           f"({str(exc).splitlines()[0]}); re-import it") from None


def _check_tables(con: duckdb.DuckDBPyConnection, fmt: str, path: Path) -> None:
    count = con.execute("SELECT count(*) FROM concepts").fetchone()[0]
    if count == 0:
        raise CodemapError(f"{path}: no concepts found; is this really a {fmt} release "
                           f"(and do the filters leave anything)?")


def _meta(con: duckdb.DuckDBPyConnection, name: str, fmt: str, result: ImportResult) -> dict:
    sources = [{"path": str(p.resolve()), "bytes": p.stat().st_size, "sha256": sha256_file(p)}
               for p in result.sources]
    counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    return {
        "name": name, "format": fmt, "version": result.version,
        "imported_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "sources": sources, "options": result.options,
        "content_hash": sha256_text(fmt, result.version, json.dumps(result.options, sort_keys=True),
                                    *(s["sha256"] for s in sources)),
        "notice": result.notice, **counts,
    }


def _write_meta(con: duckdb.DuckDBPyConnection, meta: dict) -> None:
    con.execute("CREATE TABLE meta (key VARCHAR, value VARCHAR)")
    con.executemany("INSERT INTO meta VALUES (?, ?)",
                    [(k, json.dumps(v)) for k, v in meta.items()])
    con.execute("CHECKPOINT")


def _read_meta(con: duckdb.DuckDBPyConnection) -> dict:
    return {k: json.loads(v) for k, v in con.execute("SELECT key, value FROM meta").fetchall()}
