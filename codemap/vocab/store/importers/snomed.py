"""SNOMED CT RF2 snapshot (`Snapshot/` of an edition): `sct2_Concept_Snapshot*`,
`sct2_Description_Snapshot*` (every language file), `sct2_Relationship_Snapshot*` and, when
present, the language reference sets (`der2_cRefset_LanguageSnapshot*`) that say which synonym
is preferred. Tab-separated with a header row, no quoting (RF2 specification, section 5).

A concept's name is its preferred synonym (US English language refset when present, else the
FSN without its semantic tag); the semantic tag ("disorder", "procedure"…) is attribute
`semantic_tag`. Only active descriptions and active relationships are kept; relation labels are
the type concept's FSN without its tag ("Is a", "Finding site"…).

Replacements, where the release has them: the active rows of the historical association
reference sets (`der2_cRefset_Association*Snapshot*`: REPLACED BY, SAME AS, POSSIBLY EQUIVALENT
TO…) from an inactive concept to its successors, with the reason of the concept inactivation
indicator reference set (`der2_cRefset_AttributeValueSnapshot*`: duplicate, outdated,
ambiguous…); an inactive concept with a reason and no association is kept with its reason alone.
"""
from __future__ import annotations

import re
from pathlib import Path

import duckdb

from ....errors import CodemapError
from .base import (NAME_TABLE, RELATION_TABLE, REPLACEMENT_TABLE, ImportOptions, ImportResult,
                   execute, find_prefixed, read_csv_sql, read_header)

FSN = "900000000000003001"
PREFERRED = "900000000000548007"
US_ENGLISH = "900000000000509007"
CONCEPT_COLUMNS = ["id", "effectiveTime", "active", "moduleId", "definitionStatusId"]
DESCRIPTION_COLUMNS = ["id", "effectiveTime", "active", "moduleId", "conceptId", "languageCode",
                       "typeId", "term", "caseSignificanceId"]
RELATIONSHIP_COLUMNS = ["id", "effectiveTime", "active", "moduleId", "sourceId", "destinationId",
                        "relationshipGroup", "typeId", "characteristicTypeId", "modifierId"]
LANGUAGE_COLUMNS = ["id", "effectiveTime", "active", "moduleId", "refsetId",
                    "referencedComponentId", "acceptabilityId"]
ASSOCIATION_COLUMNS = ["id", "effectiveTime", "active", "moduleId", "refsetId",
                       "referencedComponentId", "targetComponentId"]
ATTRIBUTE_VALUE_COLUMNS = ["id", "effectiveTime", "active", "moduleId", "refsetId",
                           "referencedComponentId", "valueId"]
# Historical association reference sets, most telling first (SNOMED CT Editorial Guide).
ASSOCIATIONS = {"900000000000526001": "REPLACED BY", "900000000000527005": "SAME AS",
                "900000000000523009": "POSSIBLY EQUIVALENT TO",
                "1186921001": "POSSIBLY REPLACED BY", "1186924009": "PARTIALLY EQUIVALENT TO",
                "900000000000530003": "ALTERNATIVE", "900000000000528000": "WAS A",
                "900000000000524003": "MOVED TO"}
CONCEPT_INACTIVATION = "900000000000489007"
INACTIVATION_REASONS = {"900000000000482003": "duplicate", "900000000000483008": "outdated",
                        "900000000000484002": "ambiguous", "900000000000485001": "erroneous",
                        "900000000000486000": "limited", "900000000000487009": "moved elsewhere",
                        "900000000000492006": "pending move",
                        "723277005": "nonconformance to editorial policy",
                        "1186917008": "classification derived",
                        "1186919006": "meaning of component unknown"}
# "Heart attack (disorder)" → tag "disorder"; the name is the part before " (".
_TAG = r"regexp_extract(term, '\(([^()]+)\)\s*$', 1)"
_UNTAGGED = r"trim(regexp_replace(term, '\s*\([^()]+\)\s*$', ''))"
NOTICE = ("SNOMED CT (SNOMED International): use requires an Affiliate Licence or a national "
          "release centre's licence.")


def default_name(path: Path) -> str:
    return "SNOMED"


def run(con: duckdb.DuckDBPyConnection, path: Path, options: ImportOptions) -> ImportResult:
    if path.is_file():
        raise CodemapError(f"{path}: give the Snapshot folder of the RF2 release")
    concept = find_prefixed(path, "sct2_Concept_Snapshot", "RF2 concept")
    descriptions = sorted(path.rglob("sct2_Description_Snapshot*"))
    if not descriptions:
        raise CodemapError(f"{path}: no RF2 description file found (sct2_Description_Snapshot*)")
    relationship = find_prefixed(path, "sct2_Relationship_Snapshot", "RF2 relationship",
                                 required=False)
    languages = sorted(path.rglob("der2_cRefset_LanguageSnapshot*"))
    _load(con, concept, "rf2_concepts", CONCEPT_COLUMNS)
    _load(con, descriptions[0], "rf2_descriptions", DESCRIPTION_COLUMNS)
    for extra in descriptions[1:]:
        _load(con, extra, "rf2_descriptions", DESCRIPTION_COLUMNS, append=True)
    _preferred_ids(con, languages)
    _concepts(con)
    con.execute(NAME_TABLE)
    con.execute(
        "INSERT INTO names SELECT d.conceptId, d.term, CASE WHEN d.typeId = ? THEN 'fsn' "
        "WHEN d.id IN (SELECT id FROM preferred) THEN 'preferred' ELSE 'synonym' END, "
        "d.languageCode FROM rf2_descriptions d SEMI JOIN concepts c ON d.conceptId = c.code "
        "WHERE d.active = '1' AND trim(d.term) <> ''", [FSN])
    con.execute(RELATION_TABLE)
    if relationship is not None:
        _load(con, relationship, "rf2_relationships", RELATIONSHIP_COLUMNS)
        con.execute(
            f"INSERT INTO relations SELECT r.sourceId, coalesce(t.label, r.typeId), "
            "r.destinationId FROM rf2_relationships r LEFT JOIN (SELECT conceptId, "
            f"arg_max({_UNTAGGED}, effectiveTime) AS label FROM rf2_descriptions WHERE "
            f"typeId = '{FSN}' AND active = '1' GROUP BY conceptId) t ON t.conceptId = r.typeId "
            "WHERE r.active = '1'")
    history = _import_replacements(con, path)
    # RF2 file names end with the release date (…_INT_20240101.txt).
    dated = re.search(r"_(\d{8})\.txt$", concept.name)
    version = dated.group(1) if dated else con.execute(
        "SELECT max(effectiveTime) FROM rf2_concepts").fetchone()[0] or ""
    sources = [concept, *descriptions, *([relationship] if relationship else []), *languages,
               *history]
    return ImportResult(version=options.version or version, sources=sources, notice=NOTICE)


def _load(con, path: Path, table: str, columns: list[str], append: bool = False) -> None:
    read_header(path, "\t", columns)
    source = read_csv_sql(path, columns, delim="\t", header=True)
    sql = (f"INSERT INTO {table} SELECT * FROM {source}" if append
           else f"CREATE TEMP TABLE {table} AS SELECT * FROM {source}")
    execute(con, sql, path)


def _preferred_ids(con, languages: list[Path]) -> None:
    """Table `preferred` of description ids preferred in the US English refset (empty when
    there is no language refset, and then concepts are named by their FSN)."""
    con.execute("CREATE TEMP TABLE preferred (id VARCHAR)")
    _collect(con, languages, LANGUAGE_COLUMNS, "preferred", "SELECT referencedComponentId FROM "
             f"{{table}} WHERE active = '1' AND acceptabilityId = '{PREFERRED}' AND refsetId = "
             f"'{US_ENGLISH}'")


def _collect(con, files: list[Path], columns: list[str], into: str, select: str) -> None:
    """Load each reference set file and insert `select` of it (its table named `{table}`) into
    table `into`."""
    for index, path in enumerate(files):
        table = f"rf2_{into}{index}"
        _load(con, path, table, columns)
        con.execute(f"INSERT INTO {into} " + select.format(table=table))


def _concepts(con) -> None:
    """Concepts with the preferred synonym (else the untagged FSN) as name."""
    con.execute(
        "CREATE TABLE concepts AS SELECT c.id AS code, coalesce(p.term, f.untagged, c.id) AS name,"
        " 'SNOMED' AS vocabulary, CASE WHEN c.active = '1' THEN 'active' ELSE 'deprecated' END "
        "AS status, coalesce(f.tag, '') AS semantic_tag, c.definitionStatusId AS definition_status "
        "FROM rf2_concepts c LEFT JOIN (SELECT conceptId, arg_max(" + _UNTAGGED + ", effectiveTime)"
        " AS untagged, arg_max(" + _TAG + ", effectiveTime) AS tag FROM rf2_descriptions WHERE "
        f"typeId = '{FSN}' AND active = '1' GROUP BY conceptId) f ON f.conceptId = c.id "
        "LEFT JOIN (SELECT d.conceptId, min(d.term) AS term FROM rf2_descriptions d SEMI JOIN "
        "preferred p ON d.id = p.id WHERE d.active = '1' AND d.typeId <> '" + FSN + "' "
        "GROUP BY d.conceptId) p ON p.conceptId = c.id")


def _import_replacements(con, path: Path) -> list[Path]:
    """Table `replacements` from the association and attribute value reference sets found
    under `path` (see the module docstring); returns the files read."""
    con.execute(REPLACEMENT_TABLE)
    associations = sorted(path.rglob("der2_cRefset_Association*Snapshot*"))
    values = sorted(path.rglob("der2_cRefset_AttributeValueSnapshot*"))
    reasons = " ".join(f"WHEN '{k}' THEN '{v}'" for k, v in INACTIVATION_REASONS.items())
    con.execute("CREATE TEMP TABLE reasons (code VARCHAR, reason VARCHAR)")
    _collect(con, values, ATTRIBUTE_VALUE_COLUMNS, "reasons", "SELECT referencedComponentId, "
             f"CASE valueId {reasons} ELSE valueId END FROM {{table}} WHERE active = '1' AND "
             f"refsetId = '{CONCEPT_INACTIVATION}'")
    labels = " ".join(f"WHEN '{k}' THEN '{v}'" for k, v in ASSOCIATIONS.items())
    refsets = ", ".join(f"'{k}'" for k in ASSOCIATIONS)
    _collect(con, associations, ASSOCIATION_COLUMNS, "replacements",
             f"SELECT a.referencedComponentId, CASE a.refsetId {labels} END, a.targetComponentId, "
             "coalesce(r.reason, ''), '' FROM {table} a SEMI JOIN concepts c ON "
             "a.referencedComponentId = c.code LEFT JOIN reasons r ON r.code = "
             f"a.referencedComponentId WHERE a.active = '1' AND a.refsetId IN ({refsets})")
    con.execute("INSERT INTO replacements SELECT r.code, '', '', r.reason, '' FROM reasons r SEMI JOIN "
                "concepts c ON r.code = c.code WHERE r.code NOT IN (SELECT code FROM replacements)")
    return [*associations, *values]
