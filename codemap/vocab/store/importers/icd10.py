"""National ICD-10 editions as their publishers ship the code list (one file):

- ICD-10-GM (BfArM, Germany): `icd10gm<year>syst_kodes.txt` from the "Systematik" download —
  semicolon-separated, no header; field 1 is the level (3, 4 or 5 characters), field 7 the code
  with its dot (A00.0), field 9 the title. Names are German.
- Any edition shipped as a `code,title` list, such as the Spanish CIE-10 list
  (A000,"Colera debido a…") or the ICD-10-CM code,description table of a year; `--lang` names
  its language and `--name` the store name. A first line whose code is no ICD-10 code is its
  header.

Codes take the dotted form (A00.0, as in ICD-10-CM), so editions line up code for code; the
parent of a code is the code one character shorter (A00.01 → A00.0 → A00), which is ICD-10's own
hierarchy below the three-character categories.
"""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import duckdb

from ....errors import CodemapError
from .base import ImportOptions, ImportResult, chunk_writers

_CONCEPT_COLUMNS = ["code", "name", "vocabulary", "status", "level"]
_CODE = re.compile(r"^[A-Z][0-9][0-9A-Z](\.?[0-9A-Z]{1,4})?$")
_BFARM_YEAR = re.compile(r"icd10gm(\d{4})", re.IGNORECASE)


def default_name(path: Path) -> str:
    return "ICD10GM" if _BFARM_YEAR.search(path.name) else path.stem.upper()


def run(con: duckdb.DuckDBPyConnection, path: Path, options: ImportOptions) -> ImportResult:
    if path.is_dir():
        raise CodemapError(f"{path}: is a folder; give the code list file (e.g. "
                           f"icd10gm2024syst_kodes.txt)")
    bfarm = _is_bfarm(path)
    if not bfarm and not options.langs:
        raise CodemapError(f"{path}: a code,title list does not say its language; add --lang "
                           f"(e.g. --lang es)")
    lang = "de" if bfarm else options.langs[0].lower()
    system = options.name or default_name(path)
    with chunk_writers(con, _CONCEPT_COLUMNS) as (concepts, names, relations):
        codes = {}
        for line, code, title in (_bfarm_rows(path) if bfarm else _table_rows(path)):
            if not _CODE.match(code):
                raise CodemapError(f"{path}: line {line}: {code!r} is not an ICD-10 code")
            dotted = code if "." in code or len(code) == 3 else f"{code[:3]}.{code[3:]}"
            codes[dotted.rstrip(".")] = title
        for code, title in codes.items():
            concepts.add((code, title, system, "active", str(len(code.replace(".", "")))))
            names.add((code, title, "preferred", lang))
            parent = _parent(code)
            if parent in codes:
                relations.add((code, "is_a", parent))
    year = _BFARM_YEAR.search(path.name)
    return ImportResult(version=options.version or (year.group(1) if year else ""), sources=[path],
                        notice="ICD-10-GM: BfArM (Germany)" if bfarm else "")


def _parent(code: str) -> str:
    shorter = code[:-1]
    return shorter.rstrip(".")


def _is_bfarm(path: Path) -> bool:
    first = _open(path).readline()
    fields = first.split(";")
    return len(fields) >= 9 and fields[0] in {"3", "4", "5"}


def _open(path: Path):
    # BfArM ships UTF-8 since 2019 (Latin-1 before); other national lists vary.
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return io.StringIO(text, newline="")


def _bfarm_rows(path: Path):
    for line, fields in enumerate(csv.reader(_open(path), delimiter=";"), start=1):
        if len(fields) < 9:
            raise CodemapError(f"{path}: line {line}: {len(fields)} fields, a BfArM kodes file "
                               f"has at least 9")
        yield line, fields[6].strip(), fields[8].strip()


def _table_rows(path: Path):
    for line, fields in enumerate(csv.reader(_open(path)), start=1):
        if not fields or not "".join(fields).strip():
            continue
        if len(fields) != 2:
            raise CodemapError(f"{path}: line {line}: {len(fields)} fields, expected code,title")
        if line == 1 and not _CODE.match(fields[0].strip().upper()):
            continue  # a header ("icd10cm,description")
        yield line, fields[0].strip().upper(), fields[1].strip()
