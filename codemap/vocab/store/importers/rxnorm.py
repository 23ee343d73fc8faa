"""RxNorm full release RRF (`rrf/`): RXNCONSO atoms (keep `--sab RXNORM` for the normalized names
only) and RXNREL relations; the preferred atom's term type (IN, SCD, SBD…) is attribute `tty`,
so `--filter tty=SCD` maps onto clinical drugs."""
from __future__ import annotations

from pathlib import Path

import duckdb

from .base import ImportOptions, ImportResult
from .rrf import RXNORM_NOTICE, import_rrf


def default_name(path: Path) -> str:
    return "RXNORM"


def run(con: duckdb.DuckDBPyConnection, path: Path, options: ImportOptions) -> ImportResult:
    return import_rrf(con, path, options, prefix="RXN", system="RXNORM", notice=RXNORM_NOTICE)
