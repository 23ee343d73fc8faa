"""One importer per publisher format. Each module has `default_name(path)` and
`run(con, path, options) -> ImportResult`; `run` creates the `concepts`, `names` and `relations`
tables on `con` (a fresh DuckDB file) from the publisher's files as they come. What they share
(options, table shapes, DuckDB reading, chunked appends) is in `base`.
"""
from . import icd10, icd10cm, loinc, obo, omop, rxnorm, snomed, table, umls
from .base import ImportOptions, ImportResult

IMPORTERS = {"icd10": icd10, "icd10cm": icd10cm, "loinc": loinc, "obo": obo, "omop": omop, "rxnorm": rxnorm,
             "snomed": snomed, "table": table, "umls": umls}

__all__ = ["IMPORTERS", "ImportOptions", "ImportResult"]
