"""LOINC releases: `Loinc.csv` or `LoincTableCore.csv` (from the zip, the unpacked folder or the
file itself), the linguistic variant files (names in their language) and, when present,
`LoincPartLink_Primary.csv` (LOINC parts as relations) and `MapTo.csv` (the codes LOINC names
for each deprecated one, kept as replacements; its comment says when to take which)."""
from __future__ import annotations

import re
import shutil
import tempfile
import zipfile
from pathlib import Path

import duckdb

from ....errors import CodemapError
from .base import (NAME_TABLE, RELATION_TABLE, REPLACEMENT_TABLE, ImportOptions, ImportResult,
                   execute, find_file, read_csv_sql, read_header)

NOTICE = ("This material contains content from LOINC (http://loinc.org). LOINC is copyright "
          "Regenstrief Institute, Inc. and the LOINC Committee and is available at no cost under "
          "the license at http://loinc.org/license. LOINC® is a registered United States trademark "
          "of Regenstrief Institute, Inc.")
TABLE_FILES = ["Loinc.csv", "LoincTableCore.csv"]
PART_LINK_FILE = "LoincPartLink_Primary.csv"
MAP_TO_FILE = "MapTo.csv"
_VARIANT = re.compile(r"^([a-z]{2})([A-Z]{2})(\d+)LinguisticVariant\.csv$")
# LOINC column → attribute name in the store (the six axes, class, units and the common test
# rank, which the lab usage evidence reads as `rank`).
ATTRIBUTES = {"COMPONENT": "component", "PROPERTY": "property", "TIME_ASPCT": "time",
              "SYSTEM": "system", "SCALE_TYP": "scale", "METHOD_TYP": "method", "CLASS": "class",
              "EXAMPLE_UCUM_UNITS": "example_ucum_units", "ORDER_OBS": "order_obs",
              "COMMON_TEST_RANK": "rank"}
# Name columns → name_type; RELATEDNAMES2 is split on ";" below.
NAMES = {"LONG_COMMON_NAME": "preferred", "SHORTNAME": "short", "DisplayName": "display",
         "CONSUMER_NAME": "consumer", "LinguisticVariantDisplayName": "display"}
CLASS_TYPES = "CASE CLASSTYPE WHEN '1' THEN 'laboratory' WHEN '2' THEN 'clinical' " \
              "WHEN '3' THEN 'attachment' WHEN '4' THEN 'survey' ELSE CLASSTYPE END"
STATUS = "CASE upper(STATUS) WHEN 'DEPRECATED' THEN 'deprecated' " \
         "WHEN 'DISCOURAGED' THEN 'non-standard' ELSE 'active' END"


def default_name(path: Path) -> str:
    return "LOINC"


def run(con: duckdb.DuckDBPyConnection, path: Path, options: ImportOptions) -> ImportResult:
    if path.is_file() and path.suffix.lower() == ".zip":
        with tempfile.TemporaryDirectory(prefix="codemap-loinc-") as folder:
            _unzip(path, Path(folder))
            result = _import_folder(con, Path(folder), options, version_hint=path.stem)
        result.sources = [path]
        return result
    return _import_folder(con, path, options, version_hint=path.name)


def _unzip(path: Path, folder: Path) -> None:
    """Extract only the files the import reads (the release zip holds much more)."""
    wanted = {n.lower() for n in TABLE_FILES + [PART_LINK_FILE, MAP_TO_FILE]}
    try:
        with zipfile.ZipFile(path) as archive:
            for member in archive.infolist():
                base = Path(member.filename).name
                if base.lower() in wanted or _VARIANT.match(base):
                    with archive.open(member) as src, open(folder / base, "wb") as dst:
                        shutil.copyfileobj(src, dst)
    except zipfile.BadZipFile:
        raise CodemapError(f"{path}: not a readable zip file") from None


def _import_folder(con, path: Path, options: ImportOptions, version_hint: str) -> ImportResult:
    table = find_file(path, TABLE_FILES, "LOINC table (Loinc.csv)", required=False)
    variants = _variant_files(path, options.langs)
    if table is None and not variants:
        find_file(path, TABLE_FILES, "LOINC table (Loinc.csv)")  # raises, naming what it wanted
    con.execute(NAME_TABLE)
    con.execute(RELATION_TABLE)
    sources: list[Path] = []
    latest = ""
    if table is not None:
        latest = _import_table(con, table, "en-US", create=True)
        sources.append(table)
    for variant, lang in variants:
        _import_table(con, variant, lang, create=table is None and variant == variants[0][0])
        sources.append(variant)
    parts = None if path.is_file() else find_file(path, [PART_LINK_FILE], "part link", required=False)
    if parts is not None:
        _import_parts(con, parts)
        sources.append(parts)
    map_to = None if path.is_file() else find_file(path, [MAP_TO_FILE], "map to", required=False)
    if map_to is not None:
        _import_map_to(con, map_to)
        sources.append(map_to)
    hinted = re.search(r"(\d+\.\d+)", version_hint)
    version = options.version or (hinted.group(1) if hinted else latest)
    return ImportResult(version=version, sources=sources, notice=NOTICE,
                        options={"langs": list(options.langs)})


def _variant_files(path: Path, langs: tuple[str, ...]) -> list[tuple[Path, str]]:
    candidates = [path] if path.is_file() else sorted(path.rglob("*LinguisticVariant.csv"))
    found = []
    for file in candidates:
        match = _VARIANT.match(file.name)
        if match is None:
            continue
        lang = f"{match.group(1)}-{match.group(2)}"
        if not langs or any(lang.lower().startswith(x.lower()) for x in langs):
            found.append((file, lang))
    return found


def _import_table(con, table: Path, lang: str, create: bool) -> str:
    """Names from one LOINC table; concepts and attributes too when `create` (the main table,
    or a linguistic variant imported on its own). Returns the latest VersionLastChanged."""
    columns = read_header(table, ",", ["LOINC_NUM", "LONG_COMMON_NAME"])
    source = read_csv_sql(table, columns, delim=",", header=True, quote='"')
    execute(con, f"CREATE TEMP TABLE loinc AS SELECT * FROM {source}", table)
    if create:
        attrs = [f'coalesce("{c}", \'\') AS {a}' for c, a in ATTRIBUTES.items() if c in columns]
        if "CLASSTYPE" in columns:
            attrs.append(f"{CLASS_TYPES} AS class_type")
        status = STATUS if "STATUS" in columns else "'active'"
        execute(con, "CREATE TABLE concepts AS SELECT LOINC_NUM AS code, LONG_COMMON_NAME AS name,"
                     f" 'LOINC' AS vocabulary, {status} AS status, {', '.join(attrs)} FROM loinc",
                table)
    for column, name_type in NAMES.items():
        if column in columns:
            con.execute(f'INSERT INTO names SELECT LOINC_NUM, trim("{column}"), ?, ? FROM loinc '
                        f'WHERE trim(coalesce("{column}", \'\')) <> \'\'', [name_type, lang])
    if "RELATEDNAMES2" in columns:
        con.execute("INSERT INTO names SELECT DISTINCT LOINC_NUM, trim(n), 'related', ? FROM "
                    "(SELECT LOINC_NUM, unnest(string_split(RELATEDNAMES2, ';')) AS n FROM loinc) "
                    "WHERE trim(n) <> ''", [lang])
    latest = con.execute("SELECT max(VersionLastChanged) FROM loinc").fetchone()[0] \
        if "VersionLastChanged" in columns else ""
    con.execute("DROP TABLE loinc")
    return latest or ""


def _import_parts(con, parts: Path) -> None:
    columns = read_header(parts, ",", ["LoincNumber", "PartNumber", "PartTypeName"])
    source = read_csv_sql(parts, columns, delim=",", header=True, quote='"')
    execute(con, "INSERT INTO relations SELECT LoincNumber, 'has_' || lower(PartTypeName), "
                 f"PartNumber FROM {source}", parts)


def _import_map_to(con, map_to: Path) -> None:
    """MapTo.csv (LOINC, MAP_TO, COMMENT): a deprecated code's replacement(s), the comment as
    the note ("if units are mg/dL")."""
    columns = read_header(map_to, ",", ["LOINC", "MAP_TO"])
    source = read_csv_sql(map_to, columns, delim=",", header=True, quote='"')
    comment = "trim(coalesce(COMMENT, ''))" if "COMMENT" in columns else "''"
    con.execute(REPLACEMENT_TABLE)
    execute(con, "INSERT INTO replacements SELECT trim(LOINC), 'MAP_TO', trim(MAP_TO), "
                 f"'deprecated', {comment} FROM {source} WHERE trim(coalesce(MAP_TO, '')) <> ''",
            map_to)
