"""Rich Release Format (RRF) as the UMLS Metathesaurus (`META/MRCONSO.RRF`, `MRREL.RRF`,
`MRSTY.RRF`) and RxNorm (`rrf/RXNCONSO.RRF`, `RXNREL.RRF`) ship it: `|`-delimited, no header,
a trailing `|` on every row, no quoting. Concepts are CUIs (RXCUIs); every kept atom is a name.

Kept atoms: the `--sab` sources and `--lang` languages (UMLS LAT codes such as ENG, GER or ISO
codes such as de), without suppressed ones (SUPPRESS O, E, Y). A concept's preferred name is its
English (else first-language) preferred atom. MRREL rows read "CUI2 has REL/RELA to CUI1", so
they are stored as (CUI2, REL:RELA, CUI1).
"""
from __future__ import annotations

from pathlib import Path

import duckdb

from ....errors import CodemapError
from .base import (NAME_TABLE, RELATION_TABLE, ImportOptions, ImportResult, execute, find_file,
               read_csv_sql)

# Column layouts from the UMLS Reference Manual (3.3.2 MRCONSO, 3.3.7 MRREL, 3.3.8 MRSTY);
# RXNCONSO and RXNREL share them (RXCUI in the CUI columns). "_end" is the empty field after
# the trailing "|".
CONSO_COLUMNS = ["CUI", "LAT", "TS", "LUI", "STT", "SUI", "ISPREF", "AUI", "SAUI", "SCUI", "SDUI",
                 "SAB", "TTY", "CODE", "STR", "SRL", "SUPPRESS", "CVF", "_end"]
REL_COLUMNS = ["CUI1", "AUI1", "STYPE1", "REL", "CUI2", "AUI2", "STYPE2", "RELA", "RUI", "SRUI",
               "SAB", "SL", "RG", "DIR", "SUPPRESS", "CVF", "_end"]
STY_COLUMNS = ["CUI", "TUI", "STN", "STY", "ATUI", "CVF", "_end"]
# UMLS language codes → ISO 639-1 (the languages the encoders here know; others stay as LAT).
LANGUAGES = {"ENG": "en", "GER": "de", "FRE": "fr", "SPA": "es", "DUT": "nl", "ITA": "it",
             "POR": "pt", "SWE": "sv", "DAN": "da", "NOR": "no", "FIN": "fi", "CZE": "cs",
             "POL": "pl", "HUN": "hu", "RUS": "ru", "JPN": "ja", "CHI": "zh", "KOR": "ko",
             "TUR": "tr", "GRE": "el", "HEB": "he", "ARA": "ar", "EST": "et", "LAV": "lv",
             "CRO": "hr", "UKR": "uk", "BAQ": "eu", "PER": "fa"}
SUPPRESSED = ("O", "E", "Y")
UMLS_NOTICE = ("UMLS Metathesaurus (U.S. National Library of Medicine): use requires a UMLS "
               "licence; each source vocabulary keeps its own terms.")
RXNORM_NOTICE = ("RxNorm (U.S. National Library of Medicine); the RXNORM source is free of "
                 "restrictions, other sources in the files keep their own terms.")


def import_rrf(con: duckdb.DuckDBPyConnection, path: Path, options: ImportOptions, *,
               prefix: str, system: str, notice: str) -> ImportResult:
    """Import `<prefix>CONSO.RRF` (+ `<prefix>REL.RRF`, `MRSTY.RRF`) found in folder `path`."""
    check_folder(path)
    conso = find_file(path, [f"{prefix}CONSO.RRF"], f"{prefix}CONSO")
    rel = find_file(path, [f"{prefix}REL.RRF"], f"{prefix}REL", required=False)
    sty = find_file(path, ["MRSTY.RRF"], "MRSTY", required=False) if prefix == "MR" else None
    _atoms(con, conso, options)
    _concepts(con, conso, system, sty)
    con.execute(NAME_TABLE)
    con.execute("INSERT INTO names SELECT a.CUI, a.STR, CASE WHEN a.AUI = c.pref_aui THEN "
                "'preferred' ELSE lower(a.TTY) END, a.lang FROM atoms a JOIN concept_pref c "
                "ON a.CUI = c.CUI")
    con.execute(RELATION_TABLE)
    if rel is not None:
        _relations(con, rel, options)
    con.execute("DROP TABLE atoms")
    con.execute("DROP TABLE concept_pref")
    sources = [p for p in (conso, rel, sty) if p is not None]
    return ImportResult(version=options.version or path.resolve().name, sources=sources,
                        notice=notice, options={"sabs": list(options.sabs),
                                                "langs": list(options.langs)})


def _atoms(con, conso: Path, options: ImportOptions) -> None:
    """The kept atoms of CONSO as a table, with an ISO `lang`."""
    cases = " ".join(f"WHEN '{lat}' THEN '{iso}'" for lat, iso in LANGUAGES.items())
    clauses = [f"coalesce(SUPPRESS, '') NOT IN {SUPPRESSED}"]
    params: list[str] = []
    if options.sabs:
        clauses.append(f"upper(SAB) IN ({', '.join('?' for _ in options.sabs)})")
        params += [s.upper() for s in options.sabs]
    if options.langs:
        wanted = {x.upper() for x in options.langs}
        lats = sorted(lat for lat, iso in LANGUAGES.items() if lat in wanted
                      or iso.upper() in wanted) + sorted(wanted - set(LANGUAGES))
        clauses.append(f"LAT IN ({', '.join('?' for _ in lats)})")
        params += lats
    source = read_csv_sql(conso, CONSO_COLUMNS, delim="|", header=False)
    execute(con, f"CREATE TEMP TABLE atoms AS SELECT CUI, AUI, LAT, TS, STT, ISPREF, SAB, TTY, "
                 f"STR, CASE LAT {cases} ELSE LAT END AS lang FROM {source} WHERE "
                 f"{' AND '.join(clauses)} AND trim(STR) <> ''", conso, params)


def _concepts(con, conso: Path, system: str, sty: Path | None) -> None:
    # The preferred atom: English first, then the term status P, string type PF, ISPREF Y.
    con.execute("CREATE TEMP TABLE concept_pref AS SELECT CUI, arg_min(AUI, (LAT <> 'ENG', "
                "TS <> 'P', STT <> 'PF', ISPREF <> 'Y', AUI)) AS pref_aui, "
                "arg_min(STR, (LAT <> 'ENG', TS <> 'P', STT <> 'PF', ISPREF <> 'Y', AUI)) AS name, "
                "arg_min(TTY, (LAT <> 'ENG', TS <> 'P', STT <> 'PF', ISPREF <> 'Y', AUI)) AS tty, "
                "string_agg(DISTINCT SAB, '|' ORDER BY SAB) AS sabs FROM atoms GROUP BY CUI")
    if sty is None:
        con.execute(f"CREATE TABLE concepts AS SELECT CUI AS code, name, '{system}' AS vocabulary, "
                    "'active' AS status, tty, sabs FROM concept_pref")
        return
    source = read_csv_sql(sty, STY_COLUMNS, delim="|", header=False)
    execute(con, "CREATE TABLE concepts AS SELECT c.CUI AS code, c.name, "
                 f"'{system}' AS vocabulary, 'active' AS status, c.tty, c.sabs, "
                 "coalesce(s.semantic_types, '') AS semantic_types, "
                 "coalesce(s.semantic_tree, '') AS semantic_tree FROM concept_pref c "
                 "LEFT JOIN (SELECT CUI, string_agg(STY, '|' ORDER BY STN) AS semantic_types, "
                 f"min(STN) AS semantic_tree FROM {source} GROUP BY CUI) s "
                 "ON c.CUI = s.CUI", sty)


def _relations(con, rel: Path, options: ImportOptions) -> None:
    clauses = [f"coalesce(r.SUPPRESS, '') NOT IN {SUPPRESSED}", "r.CUI1 <> r.CUI2"]
    params: list[str] = []
    if options.sabs:
        clauses.append(f"upper(r.SAB) IN ({', '.join('?' for _ in options.sabs)})")
        params += [s.upper() for s in options.sabs]
    source = read_csv_sql(rel, REL_COLUMNS, delim="|", header=False)
    execute(con, "INSERT INTO relations SELECT DISTINCT r.CUI2, CASE WHEN coalesce(r.RELA, '') = "
                 "'' THEN r.REL ELSE r.REL || ':' || r.RELA END, r.CUI1 FROM "
                 f"{source} r SEMI JOIN concepts a ON r.CUI1 = a.code SEMI JOIN concepts b "
                 f"ON r.CUI2 = b.code WHERE {' AND '.join(clauses)}", rel, params)


def check_folder(path: Path) -> None:
    if path.is_file() and path.suffix.upper() != ".RRF":
        raise CodemapError(f"{path}: give the folder holding the .RRF files (META/ or rrf/)")
