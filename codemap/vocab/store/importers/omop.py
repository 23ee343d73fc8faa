"""OMOP vocabulary tables as Athena ships them (tab-separated, unquoted) or as CDM exports write
them (comma-separated, quoted): CONCEPT, CONCEPT_SYNONYM, CONCEPT_RELATIONSHIP, CONCEPT_ANCESTOR,
VOCABULARY. Concepts are keyed by concept_id, the code a source_to_concept_map wants.

Replacements: the "Concept replaced by", "Concept same_as to", "Concept poss_eq to", "Concept
was_a to", "Concept alt_to to" and "Maps to" rows of every concept of the chosen vocabularies
(domains, classes) that is deprecated or not standard, onto a kept concept, even where
--standard-only or --valid-only left the concept itself out (a mapping made before may hold it).
"""
from __future__ import annotations

from pathlib import Path

import duckdb

from ....errors import CodemapError
from .base import (NAME_TABLE, RELATION_TABLE, REPLACEMENT_TABLE, ImportOptions, ImportResult,
                   execute, find_file, read_csv_sql, read_header)

CONCEPT_COLUMNS = ["concept_id", "concept_name", "domain_id", "vocabulary_id", "concept_class_id",
                   "standard_concept", "concept_code", "invalid_reason"]
# Language concepts (SNOMED qualifiers in CONCEPT) → ISO 639-1, looked up by name.
LANGUAGES = {"english language": "en", "german language": "de", "spanish language": "es",
             "french language": "fr", "dutch language": "nl", "italian language": "it",
             "portuguese language": "pt", "swedish language": "sv", "chinese language": "zh",
             "japanese language": "ja", "korean language": "ko", "russian language": "ru"}
ENGLISH_CONCEPT_ID = "4180186"
# The relationships by which OMOP points from a retired or non-standard concept to its successor.
REPLACING = ("Concept replaced by", "Concept same_as to", "Concept poss_eq to", "Concept was_a to",
             "Concept alt_to to", "Maps to")
INVALID_REASONS = {"D": "deleted", "U": "updated"}


def default_name(path: Path) -> str:
    return "OMOP"


def run(con: duckdb.DuckDBPyConnection, path: Path, options: ImportOptions) -> ImportResult:
    if path.is_file():
        raise CodemapError(f"{path}: give the folder holding CONCEPT.csv (the Athena download)")
    concept = find_file(path, ["CONCEPT.csv"], "CONCEPT")
    synonym = find_file(path, ["CONCEPT_SYNONYM.csv"], "CONCEPT_SYNONYM", required=False)
    relationship = find_file(path, ["CONCEPT_RELATIONSHIP.csv"], "CONCEPT_RELATIONSHIP",
                             required=False)
    ancestor = find_file(path, ["CONCEPT_ANCESTOR.csv"], "CONCEPT_ANCESTOR", required=False)
    vocabulary = find_file(path, ["VOCABULARY.csv"], "VOCABULARY", required=False)
    _load(con, concept, "all_concepts", CONCEPT_COLUMNS)
    _keep_concepts(con, options)
    con.execute(NAME_TABLE)
    con.execute(RELATION_TABLE)
    con.execute("INSERT INTO names SELECT code, name, 'preferred', 'en' FROM concepts")
    if synonym is not None:
        _import_synonyms(con, synonym)
    if relationship is not None:
        _import_relationships(con, relationship, options)
    if ancestor is not None:
        _import_ancestors(con, ancestor)
    con.execute("DROP TABLE all_concepts")
    sources = [p for p in (concept, synonym, relationship, ancestor, vocabulary) if p is not None]
    return ImportResult(version=options.version or _version(con, vocabulary, path),
                        sources=sources, notice=_notice(options),
                        options={"vocabularies": list(options.vocabularies),
                                 "domains": list(options.domains),
                                 "concept_classes": list(options.concept_classes),
                                 "standard_only": options.standard_only,
                                 "valid_only": options.valid_only})


def _load(con, path: Path, table: str, required: list[str]) -> list[str]:
    """Create temp `table` from an OMOP file, tab-separated unquoted (Athena) or CSV."""
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        first = handle.readline()
    delim, quote = ("\t", "") if "\t" in first else (",", '"')
    columns = [c.lower() for c in read_header(path, delim, [])]
    missing = [c for c in required if c not in columns]
    if missing:
        raise CodemapError(f"{path}: line 1: missing column(s) {', '.join(missing)}; is this an "
                           f"OMOP vocabulary file?")
    source = read_csv_sql(path, columns, delim=delim, header=True, quote=quote)
    execute(con, f"CREATE TEMP TABLE {table} AS SELECT * FROM {source}", path)
    return columns


def _chosen(options: ImportOptions, table: str = "") -> tuple[list[str], list[str]]:
    """SQL clauses and parameters for the --vocabulary, --domain and --concept-class choices
    (on the columns of `table`, an alias, when given)."""
    clauses, params = [], []
    for column, values in (("vocabulary_id", options.vocabularies), ("domain_id", options.domains),
                           ("concept_class_id", options.concept_classes)):
        if values:
            clauses.append(f"lower({table + '.' if table else ''}{column}) IN "
                           f"({', '.join('?' for _ in values)})")
            params += [v.lower() for v in values]
    return clauses, params


def _keep_concepts(con, options: ImportOptions) -> None:
    clauses, params = _chosen(options)
    if options.standard_only:
        clauses.append("standard_concept = 'S'")
    if options.valid_only:
        clauses.append("coalesce(invalid_reason, '') = ''")
    con.execute(
        "CREATE TABLE concepts AS SELECT concept_id AS code, concept_name AS name, "
        "vocabulary_id AS vocabulary, CASE WHEN coalesce(invalid_reason, '') <> '' THEN "
        "'deprecated' WHEN standard_concept = 'S' THEN 'active' ELSE 'non-standard' END AS status,"
        " domain_id AS domain, concept_class_id AS concept_class, "
        "coalesce(standard_concept, '') AS standard_concept, concept_code, "
        "coalesce(invalid_reason, '') AS invalid_reason FROM all_concepts WHERE "
        f"{' AND '.join(clauses) or 'TRUE'}", params)


def _import_synonyms(con, path: Path) -> None:
    _load(con, path, "synonyms", ["concept_id", "concept_synonym_name", "language_concept_id"])
    cases = " ".join(f"WHEN '{name}' THEN '{iso}'" for name, iso in LANGUAGES.items())
    con.execute(
        "INSERT INTO names SELECT DISTINCT s.concept_id, s.concept_synonym_name, 'synonym', "
        f"CASE WHEN s.language_concept_id = '{ENGLISH_CONCEPT_ID}' THEN 'en' ELSE "
        f"coalesce(CASE lower(l.concept_name) {cases} END, 'omop:' || s.language_concept_id) END "
        "FROM synonyms s SEMI JOIN concepts c ON s.concept_id = c.code "
        "LEFT JOIN all_concepts l ON l.concept_id = s.language_concept_id "
        "WHERE trim(s.concept_synonym_name) <> ''")
    con.execute("DROP TABLE synonyms")


def _import_relationships(con, path: Path, options: ImportOptions) -> None:
    _load(con, path, "rels", ["concept_id_1", "concept_id_2", "relationship_id"])
    _import_replacements(con, options)
    con.execute("INSERT INTO relations SELECT concept_id_1, relationship_id, concept_id_2 FROM "
                "rels r SEMI JOIN concepts a ON r.concept_id_1 = a.code SEMI JOIN concepts b "
                "ON r.concept_id_2 = b.code WHERE coalesce(r.invalid_reason, '') = ''")
    # As Usagi does: the name of a source concept that "Maps to" a kept concept is a synonym
    # of it ("Serum potassium" from a local vocabulary helps find the standard concept).
    con.execute(
        "INSERT INTO names SELECT m.* FROM (SELECT DISTINCT r.concept_id_2 AS code, "
        "s.concept_name AS name, 'mapped_from' AS name_type, 'en' AS lang FROM rels r "
        "JOIN all_concepts s ON s.concept_id = r.concept_id_1 SEMI JOIN concepts c "
        "ON r.concept_id_2 = c.code WHERE r.relationship_id = 'Maps to' AND r.concept_id_1 <> "
        "r.concept_id_2 AND coalesce(r.invalid_reason, '') = '') m "
        "ANTI JOIN names n ON m.code = n.code AND m.name = n.name")
    con.execute("DROP TABLE rels")


def _import_replacements(con, options: ImportOptions) -> None:
    """Table `replacements` from the loaded `rels`: see the module docstring."""
    clauses, params = _chosen(options, "a")
    reasons = " ".join(f"WHEN '{k}' THEN '{v}'" for k, v in INVALID_REASONS.items())
    con.execute(REPLACEMENT_TABLE)
    con.execute(
        "INSERT INTO replacements SELECT DISTINCT r.concept_id_1, r.relationship_id, "
        f"r.concept_id_2, CASE coalesce(a.invalid_reason, '') {reasons} ELSE 'non-standard' END, '' "
        "FROM rels r JOIN all_concepts a ON a.concept_id = r.concept_id_1 SEMI JOIN concepts c "
        f"ON r.concept_id_2 = c.code WHERE r.relationship_id IN ({', '.join('?' for _ in REPLACING)}) "
        "AND r.concept_id_1 <> r.concept_id_2 AND coalesce(r.invalid_reason, '') = '' AND "
        "(coalesce(a.invalid_reason, '') <> '' OR coalesce(a.standard_concept, '') <> 'S')"
        + "".join(f" AND {clause}" for clause in clauses), [*REPLACING, *params])


def _import_ancestors(con, path: Path) -> None:
    _load(con, path, "ancestors", ["ancestor_concept_id", "descendant_concept_id",
                                   "min_levels_of_separation"])
    con.execute("INSERT INTO relations SELECT descendant_concept_id, 'Is a', ancestor_concept_id "
                "FROM ancestors a SEMI JOIN concepts c ON a.descendant_concept_id = c.code "
                "SEMI JOIN concepts p ON a.ancestor_concept_id = p.code "
                "WHERE min_levels_of_separation = '1' AND descendant_concept_id <> ancestor_concept_id "
                "EXCEPT SELECT * FROM relations")
    con.execute("DROP TABLE ancestors")


def _version(con, vocabulary: Path | None, folder: Path) -> str:
    if vocabulary is not None:
        _load(con, vocabulary, "vocabularies", ["vocabulary_id", "vocabulary_version"])
        row = con.execute("SELECT vocabulary_version FROM vocabularies "
                          "WHERE vocabulary_id = 'None'").fetchone()
        con.execute("DROP TABLE vocabularies")
        if row and row[0]:
            return row[0]
    return folder.name


def _notice(options: ImportOptions) -> str:
    return ("OMOP Standardized Vocabularies (Athena, OHDSI); each source vocabulary keeps its own "
            "licence." + (f" Vocabularies: {', '.join(options.vocabularies)}."
                          if options.vocabularies else ""))
