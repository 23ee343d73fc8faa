"""Drug vocabularies for the training graph: ATC classes, DrugCentral ingredients with their
synonyms, and OMOP (RxNorm) drug concept names.

Licences: ATC — WHO Collaborating Centre for Drug Statistics Methodology copyright, here the
UMLS 2019AB ATC source as exported by BioPortal (folder atc-2019ab, repository MIT; SOURCE.txt).
DrugCentral — CC BY-SA 4.0 (obo-db-ingest export, folder drugcentral). OMOP samples — Apache 2.0
repositories (OHDSI/MIMIC, OHDSI/EunomiaDatasets); the RxNorm names inside are NLM's RxNorm
(public domain US government work; see each folder's SOURCE.txt).
"""
from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from codemap.vocab import Vocabulary

from .files import read_data

log = logging.getLogger(__name__)

_ATC_URL = "http://purl.bioontology.org/ontology/UATC/"
# ATC code length per level: anatomical group 1, therapeutic 3, pharmacological 4, chemical 5,
# substance 7; a code's parent is the code of the next shorter level.
_ATC_PARENT_LENGTH = {3: 1, 4: 3, 5: 4, 7: 5}
# OMOP relationships between drug concepts worth learning; "Maps to" inside one vocabulary is
# a concept mapping to itself (or its replacement), not a relation between two meanings.
_OMOP_DRUG_RELATIONS = {"RxNorm has ing", "RxNorm ing of", "Has tradename", "Tradename of",
                        "Consists of", "Constitutes", "Has brand name", "Brand name of",
                        "RxNorm has dose form", "Has ingredient", "Ingredient of"}


def load_atc(data_dir: Path) -> Vocabulary:
    """ATC classes (folder atc-2019ab): preferred label and synonyms, `is_a` to the parent class
    (the code one level shorter)."""
    table = read_data(data_dir / "atc-2019ab" / "ATC.csv")
    # the export also holds the 127 UMLS semantic types (…/STY/T047) the classes are typed with
    table = table[table["Class ID"].str.startswith(_ATC_URL) & (table["Obsolete"].str.lower() != "true")]
    codes = table["Class ID"].str.removeprefix(_ATC_URL)
    names = [pd.DataFrame({"code": codes, "name": table["Preferred Label"], "name_type": "preferred"})]
    synonyms = pd.DataFrame({"code": codes, "name": table["Synonyms"].str.split("|")}).explode("name")
    names.append(synonyms.assign(name_type="synonym"))
    names = _tidy_names(pd.concat(names, ignore_index=True))
    parents = codes.map(lambda code: code[:_ATC_PARENT_LENGTH.get(len(code), len(code))])
    relations = pd.DataFrame({"head": codes, "relation": "is_a", "tail": parents})
    relations = relations[(relations["head"] != relations["tail"]) & relations["tail"].isin(set(codes))]
    return Vocabulary(id="ATC", version="UMLS 2019AB (BioPortal)", concepts=_concepts(names),
                      names=names, relations=relations.reset_index(drop=True),
                      source=str(data_dir / "atc-2019ab"))


def load_drugcentral(data_dir: Path) -> Vocabulary:
    """DrugCentral active ingredients (folder drugcentral): every synonym (INN, USAN, brand and
    research names: paracetamol, acetaminophen and Panadol are one concept). No relations: the
    files carry no ATC codes (the .obo has CAS and InChIKey cross-references only).

    The version-54 `name` column is shifted against the identifiers (drugcentral:52 is labelled
    "oxymethurea" while its synonyms are paracetamol's), so the preferred name comes from the
    2021 .obo, whose names agree with the synonyms, and the shifted labels are not used.
    """
    folder = data_dir / "drugcentral"
    synonyms = read_data(folder / "drugcentral.synonyms.tsv")
    # rdfs:label rows repeat the shifted label; only the hasRelatedSynonym rows are keyed right
    synonyms = synonyms[synonyms["predicate"] != "rdfs:label"]
    names = pd.concat([
        _obo_names(next(iter(sorted(folder.glob("drugcentral_*.obo"))))),
        pd.DataFrame({"code": synonyms["curie"].str.removeprefix("drugcentral:"),
                      "name": synonyms["text"], "name_type": "synonym"}),
    ], ignore_index=True)
    names = _tidy_names(names)
    return Vocabulary(id="DRUGCENTRAL", version="obo-db-ingest 54 synonyms, 2021_09_01 names",
                      concepts=_concepts(names), names=names, source=str(folder))


def load_drugs(data_dir: Path) -> Vocabulary:
    """DrugCentral ingredients and ATC classes as ONE vocabulary (codes "DC:52", "ATC:N02BE"),
    so a drug can point at its classes: a drug that shares a name with an ATC substance (level 5,
    e.g. "paracetamol" = N02BE01) takes that substance's place and gets `is_a` to its level-4
    class(es). The ATC substance is merged, not linked, because two concepts with the same name
    would be each other's negatives in the term loss. Matching is by exact case-folded name, so
    salts and spelling variants stay unlinked."""
    atc, drugs = load_atc(data_dir), load_drugcentral(data_dir)
    atc_names = atc.names.assign(code="ATC:" + atc.names["code"])
    drug_names = drugs.names.assign(code="DC:" + drugs.names["code"])
    substances = atc_names[atc_names["code"].str.len() == len("ATC:") + 7]
    match = drug_names.assign(key=drug_names["name"].str.casefold()).merge(
        substances.assign(key=substances["name"].str.casefold()), on="key", suffixes=("", "_atc"))
    match = match[["code", "code_atc"]].drop_duplicates()
    # an ATC substance matched by several drugs stays on its own: which drug it is, is unclear
    match = match[~match["code_atc"].duplicated(keep=False)]
    merged = dict(zip(match["code_atc"], match["code"]))
    log.info("drugs: %d ATC substances merged into %d DrugCentral drugs", len(merged),
             match["code"].nunique())
    atc_relations = atc.relations.assign(head="ATC:" + atc.relations["head"],
                                         tail="ATC:" + atc.relations["tail"])
    atc_relations["head"] = atc_relations["head"].replace(merged)
    names = _tidy_names(pd.concat([drug_names, atc_names[~atc_names["code"].isin(merged)]],
                                  ignore_index=True))
    return Vocabulary(id="DRUGS", version=f"{drugs.version}; ATC {atc.version}",
                      concepts=_concepts(names), names=names,
                      relations=atc_relations.drop_duplicates().reset_index(drop=True),
                      source=str(data_dir))


def load_omop_drugs(data_dir: Path) -> Vocabulary:
    """RxNorm-style names of OMOP drug concepts: the target dictionary of the OHDSI MIMIC drug
    mapping (target_drug_concepts.tsv) and the Drug-domain concepts of the Synthea27Nj sample
    with their synonyms and the relations between two of them (e.g. "Has tradename").

    dev_local_drug_to_concept.tsv is never read: its local strings are evaluation queries.
    """
    targets = read_data(data_dir / "ohdsi-mimic-drugs" / "target_drug_concepts.tsv")
    omop = data_dir / "synthea27nj-omop"
    concept = read_data(omop / "CONCEPT.csv")
    concept = concept[concept["domain_id"] == "Drug"]
    synonym = read_data(omop / "CONCEPT_SYNONYM.csv")
    synonym = synonym[synonym["concept_id"].isin(set(concept["concept_id"]))]
    names = _tidy_names(pd.concat([
        targets.rename(columns={"concept_id": "code", "concept_name": "name"}).assign(name_type="preferred"),
        concept.rename(columns={"concept_id": "code", "concept_name": "name"}).assign(name_type="preferred"),
        synonym.rename(columns={"concept_id": "code", "concept_synonym_name": "name"}).assign(name_type="synonym"),
    ], ignore_index=True))
    links = read_data(omop / "CONCEPT_RELATIONSHIP.within_concept_set.csv")
    links = links[links["relationship_id"].isin(_OMOP_DRUG_RELATIONS)
                  & (links["concept_id_1"] != links["concept_id_2"])]
    relations = pd.DataFrame({"head": links["concept_id_1"], "relation": links["relationship_id"],
                              "tail": links["concept_id_2"]}).drop_duplicates()
    return Vocabulary(id="OMOP", version="OHDSI MIMIC targets + Synthea27Nj Drug domain",
                      concepts=_concepts(names), names=names,
                      relations=relations.reset_index(drop=True), source=str(data_dir))


def _obo_names(path: Path) -> pd.DataFrame:
    """id and name of each [Term] of an OBO file (the drugcentral one has no synonym lines)."""
    rows, code = [], None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("id: "):
            code = line[4:].strip().removeprefix("drugcentral:")
        elif line.startswith("name: ") and code is not None:
            rows.append((code, line[6:].strip()))
            code = None
    return pd.DataFrame(rows, columns=["code", "name"]).assign(name_type="preferred")


def _tidy_names(names: pd.DataFrame) -> pd.DataFrame:
    """Strip, drop empty names and repeats of a name within a concept (the first, i.e. the
    preferred, kept); English."""
    names = names.assign(name=names["name"].fillna("").str.strip())
    names = names[names["name"] != ""].drop_duplicates(["code", "name"])
    return names.assign(lang="en")[["code", "name", "name_type", "lang"]].reset_index(drop=True)


def _concepts(names: pd.DataFrame) -> pd.DataFrame:
    return names.drop_duplicates("code")[["code", "name"]]


SOURCES = {
    "atc": load_atc,
    "drugcentral": load_drugcentral,
    "drugs": load_drugs,
    "omop-drugs": load_omop_drugs,
}
