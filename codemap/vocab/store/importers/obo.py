"""OBO 1.2/1.4 ontologies (HPO, Disease Ontology, …): names, synonyms by scope, is_a, typed
relationships, xrefs. Read line by line; terms go to DuckDB in chunks."""
from __future__ import annotations

import re
from pathlib import Path

import duckdb

from ....errors import CodemapError
from .base import ImportOptions, ImportResult, chunk_writers

_SYNONYM = re.compile(r'^"((?:[^"\\]|\\.)*)"\s+(EXACT|RELATED|NARROW|BROAD)\b')
_TAG = re.compile(r"^([A-Za-z_-]+):\s?(.*)$")
_CONCEPT_COLUMNS = ["code", "name", "vocabulary", "status", "namespace", "definition"]


def default_name(path: Path) -> str:
    """The `ontology:` header in upper case (hp → HP), else the file name."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.startswith("["):
                break
            if line.startswith("ontology:"):
                return line.split(":", 1)[1].strip().upper()
    return path.stem.upper()


def run(con: duckdb.DuckDBPyConnection, path: Path, options: ImportOptions) -> ImportResult:
    if path.is_dir():
        raise CodemapError(f"{path}: is a folder; give the .obo file")
    with chunk_writers(con, _CONCEPT_COLUMNS) as writers:
        header = _read(path, writers)
    version = options.version or header.get("data-version") or header.get("date", "")
    return ImportResult(version=version, sources=[path])


def _read(path: Path, writers) -> dict:
    """Parse `path`, sending each [Term] to the writers; returns the header tags."""
    header: dict[str, str] = {}
    term: dict | None = None
    in_header = True
    system = ""
    try:
        handle = open(path, encoding="utf-8")
        with handle:
            for number, raw in enumerate(handle, start=1):
                line = raw.strip()
                if not line or line.startswith("!"):
                    continue
                if line.startswith("["):
                    if number == 1:
                        raise CodemapError(f"{path}: line 1: no OBO header (format-version:); "
                                           f"is this an OBO file?")
                    _emit(path, term, system, writers)
                    in_header = False
                    system = system or header.get("ontology", "").upper()
                    term = {"line": number} if line == "[Term]" else None
                    continue
                tag = _TAG.match(line)
                if tag is None:
                    raise CodemapError(f"{path}: line {number}: not an OBO 'tag: value' line: "
                                       f"{line[:80]!r}")
                key, value = tag.group(1), tag.group(2)
                if in_header:
                    if number == 1 and key != "format-version":
                        raise CodemapError(f"{path}: line 1: expected 'format-version:', found "
                                           f"{key!r}; is this an OBO file?")
                    header.setdefault(key, value.strip())
                elif term is not None:
                    _add_tag(path, number, term, key, value)
            _emit(path, term, system, writers)
    except UnicodeDecodeError as exc:
        raise CodemapError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return header


def _add_tag(path: Path, number: int, term: dict, key: str, value: str) -> None:
    value = re.sub(r"\s+!.*$", "", value) if key in {"is_a", "relationship"} else value
    if key == "synonym":
        match = _SYNONYM.match(value)
        if match is None:
            raise CodemapError(f"{path}: line {number}: synonym without quoted text and scope: "
                               f"{value[:80]!r}")
        text = match.group(1).replace('\\"', '"')
        term.setdefault("synonyms", []).append((text, f"{match.group(2).lower()}_synonym"))
    elif key == "def":
        term["def"] = value.split('"')[1] if value.startswith('"') and value.count('"') >= 2 else value
    elif key in {"is_a", "xref", "replaced_by", "consider"}:
        target = value.split()[0] if value.split() else ""
        term.setdefault("relations", []).append((key, target))
    elif key == "relationship":
        parts = value.split()
        if len(parts) < 2:
            raise CodemapError(f"{path}: line {number}: relationship needs a type and a target")
        term.setdefault("relations", []).append((parts[0], parts[1]))
    else:
        term.setdefault(key, value.strip())


def _emit(path: Path, term: dict | None, system: str, writers) -> None:
    if term is None:
        return
    concepts, names, relations = writers
    code, name = term.get("id"), term.get("name")
    if not code or not name:
        raise CodemapError(f"{path}: line {term['line']}: [Term] without "
                           f"{'id' if not code else 'name'}")
    status = "deprecated" if term.get("is_obsolete") == "true" else "active"
    concepts.add((code, name, system, status, term.get("namespace", ""), term.get("def", "")))
    names.add((code, name, "preferred", "en"))
    for text, kind in term.get("synonyms", []):
        names.add((code, text, kind, "en"))
    for relation, target in term.get("relations", []):
        relations.add((code, relation, target))
