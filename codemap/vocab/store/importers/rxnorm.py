"""RxNorm full release RRF (`rrf/`): RXNCONSO atoms (keep `--sab RXNORM` for the normalized names
only) and RXNREL relations; the preferred atom's term type (IN, SCD, SBD…) is attribute `tty`,
so `--filter tty=SCD` maps onto clinical drugs. `RXNCUI.RRF`, when present, gives the retired
RXCUIs: each remapped one with the concept(s) it was remapped to, as replacements (a row whose
two RXCUIs are the same was retired without one)."""
from __future__ import annotations

from pathlib import Path

import duckdb

from .base import REPLACEMENT_TABLE, ImportOptions, ImportResult, execute, find_file, read_csv_sql
from .rrf import RXNORM_NOTICE, import_rrf

# RxNorm Technical Documentation, "RXNCUI – Retired RXCUI Data"; "_end" after the trailing "|".
CUI_COLUMNS = ["CUI1", "VER_START", "VER_END", "CARDINALITY", "CUI2", "_end"]


def default_name(path: Path) -> str:
    return "RXNORM"


def run(con: duckdb.DuckDBPyConnection, path: Path, options: ImportOptions) -> ImportResult:
    result = import_rrf(con, path, options, prefix="RXN", system="RXNORM", notice=RXNORM_NOTICE)
    retired = find_file(path, ["RXNCUI.RRF"], "RXNCUI", required=False)
    if retired is not None:
        _import_retired(con, retired)
        result.sources.append(retired)
    return result


def _import_retired(con: duckdb.DuckDBPyConnection, retired: Path) -> None:
    source = read_csv_sql(retired, CUI_COLUMNS, delim="|", header=False)
    con.execute(REPLACEMENT_TABLE)
    execute(con, "INSERT INTO replacements SELECT DISTINCT CUI1, CASE WHEN CUI1 = CUI2 THEN '' "
                 "ELSE 'remapped to' END, CASE WHEN CUI1 = CUI2 THEN '' ELSE CUI2 END, CASE WHEN "
                 f"CUI1 = CUI2 THEN 'retired' ELSE 'remapped' END, '' FROM {source} WHERE CUI1 = CUI2 "
                 "OR CUI2 IN (SELECT code FROM concepts)", retired)
