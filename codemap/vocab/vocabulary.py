"""Target vocabularies: concepts and their names, from the built-in set or a table file.

A `Vocabulary` is what ranking needs: one row per concept (code, preferred name, attributes such
as LOINC class or OMOP domain) and one row per name (every label and synonym, pointing back to its
concept, so a concept scores by its best name). The vocabulary store produces the same object.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pandas as pd

from ..errors import CodemapError
from ..files import sha256_text
from ..read.bounds import VOCABULARY_LIMITS, name_list
from ..read.normalize import spelled_from
from ..read.readers import header_key, read_table

NAME_COLUMNS = ["code", "name", "name_type", "lang"]
# Name types of expanded short names (codemap.domains.lab.abbreviations): read by the encoder
# only (codemap.rank.lexical leaves them out of the n-gram index), or by the lexical index too (a
# table with no long names). With "short", the types whose words are abbreviated themselves.
ENCODER_ONLY_EXPANDED = "short expanded"
EXPANDED = "expanded"
SHORT_NAME_TYPES = frozenset({"short", ENCODER_ONLY_EXPANDED, EXPANDED})
RELATION_COLUMNS = ["head", "relation", "tail"]
SYNONYM_SEPARATOR = "|"


@dataclass
class Vocabulary:
    """Concepts (`code`, `name`, attribute columns…), names (`code`, `name`, `name_type`, `lang`)
    and, where the source has them, relations (`head`, `relation`, `tail` codes) for training."""

    id: str  # short id shown to users, e.g. "LOINC"
    version: str
    concepts: pd.DataFrame
    names: pd.DataFrame
    notice: str = ""  # shown in the summary and the run sheet (subset warnings, licence)
    source: str = ""  # where it was read from
    relations: pd.DataFrame | None = None
    _hash: str | None = field(default=None, repr=False)
    _typed_hash: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.concepts = self.concepts.reset_index(drop=True)
        self.names = self.names.reset_index(drop=True)

    @property
    def content_hash(self) -> str:
        """A hash of every (code, name) pair in order: the index cache keys on it."""
        if self._hash is None:
            joined = "\n".join(self.names["code"] + "\t" + self.names["name"])
            self._hash = sha256_text(self.id, joined)
        return self._hash

    @property
    def typed_hash(self) -> str:
        """`content_hash` and every name's type: the key of what reads names by their type (the
        lexical index leaves encoder-only types empty; word completion leaves short names out),
        so that a vocabulary retyped with the same names never reads another's cache."""
        if self._typed_hash is None:
            types = "\n".join(self.names["name_type"].astype(str))
            self._typed_hash = sha256_text(self.content_hash, types)
        return self._typed_hash

    def with_concepts(self, concepts: pd.DataFrame) -> "Vocabulary":
        """A copy with another concept table (more attribute columns), the same names: its
        index cache keys (content_hash, typed_hash) stay."""
        return dataclasses.replace(self, concepts=concepts)

    def concept_attributes(self) -> pd.DataFrame:
        """Concept table indexed by code, for joining attributes onto candidates."""
        return self.concepts.set_index("code")


def deprecated_codes(vocab: Vocabulary) -> set:
    """Codes the vocabulary itself marks as no longer valid: OMOP invalid_reason (D, U) or LOINC
    STATUS (DEPRECATED, DISCOURAGED)."""
    concepts = vocab.concepts
    stale = pd.Series(False, index=concepts.index)
    if "invalid_reason" in concepts:
        stale |= concepts["invalid_reason"].fillna("").astype(str).str.strip().isin(["D", "U"])
    if "status" in concepts:
        stale |= concepts["status"].fillna("").astype(str).str.upper().isin(["DEPRECATED", "DISCOURAGED"])
    return set(concepts.loc[stale, "code"])


# --- vocabulary table files ---------------------------------------------------------------------

_CODE_HEADERS = ["code", "conceptcode", "conceptid", "loinc", "loincnum", "loinccode", "id",
                 "targetcode", "cui", "icd10", "icdcode", "kode", "codigo"]
_NAME_HEADERS = ["name", "conceptname", "longcommonname", "preferredname", "term", "label",
                 "description", "str", "display", "bezeichnung", "nom", "nombre", "title"]
_SYNONYM_HEADERS = ["synonyms", "synonym", "aliases", "altnames", "relatednames"]
_PARENT_HEADERS = ["parent", "parentcode", "parentid", "parents", "broader", "isa"]


def load_vocab_file(path: str | Path) -> Vocabulary:
    """Read a vocabulary table: a code column, a name column, an optional `|`-separated synonyms
    column, an optional `|`-separated parent codes column (relations `is_a`); every other column
    becomes a concept attribute.

    Raises CodemapError when the code or name column cannot be found or a code repeats with
    different names in the preferred-name column.
    """
    path = Path(path)
    frame = read_table(path, limits=VOCABULARY_LIMITS)
    if frame.empty:
        raise CodemapError(f"{path}: the vocabulary has no rows")
    code_col = _pick(path, frame.columns, _CODE_HEADERS, "code")
    name_col = _pick(path, frame.columns, _NAME_HEADERS, "name", exclude={code_col})
    syn_col = _pick(path, frame.columns, _SYNONYM_HEADERS, "synonyms", required=False,
                    exclude={code_col, name_col})
    frame = frame.copy()
    frame[code_col] = frame[code_col].str.strip()
    frame[name_col] = frame[name_col].str.strip()
    blank = frame.index[(frame[code_col] == "") | (frame[name_col] == "")]
    if len(blank):
        raise CodemapError(f"{path}: row {blank[0] + 2} has an empty code or name")
    parent_col = _pick(path, frame.columns, _PARENT_HEADERS, "parent", required=False,
                       exclude={code_col, name_col, syn_col})
    concepts = frame.drop(columns=[c for c in (syn_col, parent_col) if c]).rename(
        columns={code_col: "code", name_col: "name"})
    concepts = concepts.drop_duplicates(subset="code", keep="first")
    names = [pd.DataFrame({"code": frame[code_col], "name": frame[name_col],
                           "name_type": "preferred", "lang": ""})]
    if syn_col:
        synonyms = frame[[code_col, syn_col]].assign(
            name=frame[syn_col].str.split(SYNONYM_SEPARATOR, regex=False)).explode("name")
        synonyms["name"] = synonyms["name"].fillna("").str.strip()
        synonyms = synonyms[synonyms["name"] != ""]
        names.append(pd.DataFrame({"code": synonyms[code_col], "name": synonyms["name"],
                                   "name_type": "synonym", "lang": ""}))
    names_frame = pd.concat(names, ignore_index=True).drop_duplicates(subset=["code", "name"])
    relations = None
    if parent_col:
        parents = frame[[code_col]].assign(
            tail=frame[parent_col].str.split(SYNONYM_SEPARATOR, regex=False)).explode("tail")
        parents["tail"] = parents["tail"].fillna("").str.strip()
        parents = parents[parents["tail"] != ""]
        relations = pd.DataFrame({"head": parents[code_col], "relation": "is_a",
                                  "tail": parents["tail"]}).reset_index(drop=True)
    return Vocabulary(id=path.stem, version=f"file:{path.name}", concepts=concepts,
                      names=names_frame, source=str(path), relations=relations)


def _pick(path: Path, columns, wanted: list[str], role: str, *, required: bool = True,
          exclude: set | None = None) -> str | None:
    keyed = {header_key(c): c for c in columns if c not in (exclude or set())}
    for key in wanted:
        if key in keyed:
            return keyed[key]
    if required:
        raise CodemapError(f"{path}: no {role} column found among {name_list(columns)} "
                           f"(expected one of: {', '.join(wanted[:6])}…)")
    return None


# --- built-in vocabularies -------------------------------------------------------------------

LOINC_SUBSET_NOTICE = (
    "LOINC here is the built-in Top 2000+ lab results subset (LOINC 1.6 accessory file, ~2,300 "
    "codes), not the full LOINC table; import the full release with `codemap vocab import loinc`. "
    "German names of 1,625 of its codes come from the LOINC German linguistic variant (deDE15). "
    "LOINC is copyright Regenstrief Institute, Inc. (https://loinc.org/license)."
)


TOP2000_COLUMNS = ["code", "name", "short_name", "class", "rank"]


def shipped_top2000(units: str) -> pd.DataFrame:
    """One shipped LOINC Top-2000 list ("US" or "SI") as TOP2000_COLUMNS, all text. The lists
    write one long name without the space before its bracket and with a trailing space
    ("Leukocytes[#/volume] in Blood by Automated count "): its component would read as
    "Leukocytes[#/volume]", no variant of "Leukocytes", so every name is tidied as LOINC writes
    the others."""
    folder = resources.files("codemap") / "data" / "loinc"
    with (folder / f"LOINC_1.6_Top2000CommonLabResults{units}.csv").open(encoding="utf-8") as f:
        frame = pd.read_csv(f, dtype=str, keep_default_na=False)
    frame = frame.iloc[:, :len(TOP2000_COLUMNS)].set_axis(TOP2000_COLUMNS, axis=1)
    frame["name"] = frame["name"].str.replace(r"(?<=\w)\[", " [", regex=True).str.strip()
    return frame


def builtin_loinc() -> Vocabulary:
    """The LOINC Top 2000+ lab results lists (US and SI units), merged, as a LOINC subset."""
    folder = resources.files("codemap") / "data" / "loinc"
    merged = pd.concat([shipped_top2000(units).assign(units_list=units) for units in ("US", "SI")],
                       ignore_index=True)
    concepts = merged.sort_values("units_list", ascending=False, kind="stable").drop_duplicates(
        "code").sort_values("code", kind="stable")
    concepts = concepts.drop(columns=["units_list"])
    names = pd.concat([
        pd.DataFrame({"code": concepts["code"], "name": concepts["name"], "name_type": "preferred"}),
        pd.DataFrame({"code": concepts["code"], "name": concepts["short_name"], "name_type": "short"}),
    ], ignore_index=True).assign(lang="en")
    names = pd.concat([names, _loinc_german_names(folder, concepts)], ignore_index=True)
    names = names[names["name"].str.strip() != ""].drop_duplicates(subset=["code", "name"])
    return Vocabulary(id="LOINC", version="Top 2000+ v1.6 (subset)", concepts=concepts,
                      names=names, notice=LOINC_SUBSET_NOTICE, source="built-in")


def _loinc_german_names(folder, concepts: pd.DataFrame) -> pd.DataFrame:
    """German names (lang "de") of the built-in codes, from the deDE15 linguistic variant
    (recipes/build_loinc_german.py): the long common name, and each German related name of
    the component with the specimen ("Gamma-GT Serum oder Plasma"), since local lists name the
    analyte by its everyday name and rarely spell out the property. A related name listed under
    codes of several analytes ("RBC" under the red-cell count, the RDW, the MCH) is a search
    keyword that names none of them, and is left out; but one that every listing analyte holds
    as a part of its ratio ("Gesamteiweiß" under protein and protein/creatinine) names that part,
    and stays on that analyte's codes. A related name that is another test's English short name
    ("NT-proBNP" under the BNP codes; "NT-proBNP SerPl-mCnc" is 33762-6) names that test, and
    is left off the codes whose short names name another (benchmarks/results/short-name-owner/
    RULE.md)."""
    with resources.as_file(folder / "loinc_de_names.tsv") as tsv:
        german = pd.read_csv(tsv, sep="\t", dtype=str, keep_default_na=False)
    german = german[german["code"].isin(set(concepts["code"]))]
    related = german.assign(name=german["related_names"].str.split(";")).explode("name")
    related["name"] = related["name"].str.strip()
    related = related[related["name"] != ""]
    # The analyte: the component before its first LOINC part separator ("Glucose^2H post dose").
    analyte = related["component"].str.split(r"[.^]", regex=True).str[0].str.strip().str.lower()
    # A subpart of its own: a "." before any divisor or challenge ("Ag.frei/…", not "…/Hämoglobin.gesamt").
    subpart = related["component"].str.split(r"[/^]", regex=True).str[0].str.contains(".", regex=False)
    lowered = related["name"].str.lower()
    keyword = pd.Series([abbreviates(n, a) for n, a in zip(lowered, analyte)],
                        index=related.index, dtype=bool)
    related = related[_names_its_analyte(lowered, analyte) & ~(subpart & keyword)
                      & ~_names_another_test(lowered, related["code"], concepts)]
    return pd.concat([
        pd.DataFrame({"code": german["code"], "name": german["long_common_name"],
                      "name_type": "preferred"}),
        pd.DataFrame({"code": related["code"], "name": related["name"] + " " + related["system"],
                      "name_type": "related"}),
    ], ignore_index=True).assign(lang="de")


def abbreviates(name: str, analyte: str) -> bool:
    """Whether a related name abbreviates the analyte alone ("bili" of bilirubin, "psa" of
    prostataspezifisches ag, "hav" of hepatitis-a-virus ak): its letters and digits spelled from
    one analyte word, or the initials of consecutive analyte words. On a subpart's codes such a
    keyword of the analyte would pull every row that names it to that subpart
    (benchmarks/results/analyte-keywords/RULE.md)."""
    letters = re.sub(r"[^a-z0-9]", "", name)
    words = re.findall(r"[a-z0-9äöüß]+", analyte)
    if not letters or not words:
        return False
    initials = "".join(w[0] for w in words)
    return (any(spelled_from(letters, w) for w in words)
            or any(initials[i:i + len(letters)] == letters for i in range(len(initials))))


def _names_another_test(names: pd.Series, codes: pd.Series, concepts: pd.DataFrame) -> pd.Series:
    """Per related name (lower case) and its code: whether the name is the analyte of another
    code's short name and not of its own code's ("NT-proBNP" on 30934-4, "BNP SerPl-mCnc")."""
    owners: dict[str, set] = {}
    for code, short_name in zip(concepts["code"], concepts["short_name"]):
        if analyte := short_name_head(short_name)[0].lower():
            owners.setdefault(analyte, set()).add(code)
    return pd.Series([name in owners and code not in owners[name]
                      for name, code in zip(names, codes)], index=names.index)


def short_name_head(short_name: str) -> tuple[str, str]:
    """(the words before the system word, the system word) of a LOINC short name with a
    property suffix ("NT-proBNP SerPl-mCnc" → ("NT-proBNP", "SerPl")); ("", "") for one without
    ("Albumin Ur Ql") or with one word before the suffix."""
    words = short_name.rsplit("-", 1)[0].split() if "-" in short_name else []
    return (" ".join(words[:-1]), words[-1]) if len(words) > 1 else ("", "")


def _names_its_analyte(names: pd.Series, analytes: pd.Series) -> pd.Series:
    """Per (related name, analyte) row: whether the name names this analyte, i.e. it is listed
    under this analyte only, or this analyte is the one part common to every analyte it is listed
    under (the parts of "protein/creatinin" are protein and creatinin)."""
    common = {}
    for name, group in analytes.groupby(names):
        kinds = set(group)
        parts = set.intersection(*(set(kind.split("/")) for kind in kinds))
        common[name] = kinds if len(kinds) == 1 else (parts if len(parts) == 1 else set())
    return pd.Series([a in common[n] for n, a in zip(names, analytes)], index=names.index)


DRUG_TARGET_NOTICE = (
    "DRUGS is the shipped drug target: the 1,004 target drug concepts of the OHDSI MIMIC-IV to "
    "OMOP curated drug mapping plus the RxNorm drugs of the Eunomia GiBleed sample vocabulary as "
    "distractors (both Apache-2.0; codemap/data/drugs/NOTICE.txt). Concept names are OMOP/Athena "
    "RxNorm content; RxNorm is produced by the US National Library of Medicine."
)


def builtin_drugs() -> Vocabulary:
    """The shipped drug target (codemap/data/drugs/drug_targets.tsv) as the built-in DRUGS."""
    with resources.as_file(resources.files("codemap") / "data" / "drugs" /
                           "drug_targets.tsv") as tsv:
        vocab = load_vocab_file(tsv)
    vocab.id, vocab.version, vocab.source = "DRUGS", "OHDSI MIMIC + Eunomia (shipped)", "built-in"
    vocab.notice, vocab._hash, vocab._typed_hash = DRUG_TARGET_NOTICE, None, None  # hashes include the id
    return vocab


@dataclass(frozen=True)
class BuiltinVocabulary:
    """A vocabulary that ships inside the package: `--target NAME` loads it, no import needed."""

    load: object  # () -> Vocabulary
    description: str  # one line for `codemap vocab list` and `--target` help
    licence: str


# The one list of built-in targets: `--target` help, `codemap vocab list` and load_target read it.
BUILTINS = {
    "LOINC": BuiltinVocabulary(builtin_loinc, "lab tests: LOINC Top 2000+ lab results subset, "
                               "English and German names", "LOINC licence (Regenstrief)"),
    "DRUGS": BuiltinVocabulary(builtin_drugs, "medications: RxNorm drug concepts (OHDSI MIMIC "
                               "drug mapping targets + Eunomia)", "Apache-2.0 (RxNorm names: NLM)"),
}
BUILTIN_VOCABULARIES = {name: builtin.load for name, builtin in BUILTINS.items()}
