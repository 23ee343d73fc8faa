"""A vocabulary the user keeps as a table (CSV, TSV, xlsx): code, name, optional `|`-separated
synonyms and parent codes, any other column as an attribute. Read by the one table reader
(`codemap.vocab.vocabulary.load_vocab_file`); such tables are small, so they pass through pandas."""
from __future__ import annotations

from pathlib import Path

import duckdb

from ...vocabulary import Vocabulary, load_vocab_file
from .base import NAME_TABLE, RELATION_TABLE, ImportOptions, ImportResult


def default_name(path: Path) -> str:
    return path.stem


def run(con: duckdb.DuckDBPyConnection, path: Path, options: ImportOptions) -> ImportResult:
    vocab = load_vocab_file(path)
    write_vocabulary(con, vocab, options.name or default_name(path))
    return ImportResult(version=options.version or vocab.version, sources=[path])


def write_vocabulary(con: duckdb.DuckDBPyConnection, vocab: Vocabulary, system: str) -> None:
    """Create the store tables from an in-memory `Vocabulary`."""
    concepts = vocab.concepts
    attributes = [c for c in concepts.columns if c not in {"code", "name", "vocabulary", "status"}]
    frame = concepts[["code", "name"]].assign(
        vocabulary=concepts["vocabulary"] if "vocabulary" in concepts else system,
        status=concepts["status"] if "status" in concepts else "active")
    frame = frame.join(concepts[attributes])
    con.register("frame_in", frame)
    con.execute("CREATE TABLE concepts AS SELECT * FROM frame_in")
    con.unregister("frame_in")
    con.execute(NAME_TABLE)
    con.append("names", vocab.names[["code", "name", "name_type", "lang"]])
    con.execute(RELATION_TABLE)
    if vocab.relations is not None and len(vocab.relations):
        con.append("relations", vocab.relations[["head", "relation", "tail"]])
