"""UMLS Metathesaurus RRF (`META/`): MRCONSO names filtered by SAB, LAT and suppression, MRREL
relations (REL and RELA joined), MRSTY semantic types as concept attributes."""
from __future__ import annotations

from pathlib import Path

import duckdb

from .base import ImportOptions, ImportResult
from .rrf import UMLS_NOTICE, import_rrf


def default_name(path: Path) -> str:
    return "UMLS"


def run(con: duckdb.DuckDBPyConnection, path: Path, options: ImportOptions) -> ImportResult:
    return import_rrf(con, path, options, prefix="MR", system="UMLS", notice=UMLS_NOTICE)
