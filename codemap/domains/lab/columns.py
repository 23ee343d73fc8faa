"""Lab evidence: LOINC axes of the target concepts and scorers for unit, specimen and category.

LOINC axes (PROPERTY, SYSTEM) are read from the long common name, whose form is fixed by LOINC's
naming rules: "Component [Property words] in System by Method" ("Creatinine [Mass/volume] in
Serum or Plasma"). Source specimens and LOINC systems are both reduced to a specimen group
(blood, urine, CSF…) so "Blood" in a local list agrees with "Serum or Plasma".
"""
from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from ..evidence import NO_EVIDENCE, Evidence
from .units import example_units, parse_unit

# LOINC long-common-name property words → PROPERTY codes (LOINC naming convention).
PROPERTY_WORDS = {
    "mass/volume": "MCnc", "moles/volume": "SCnc", "units/volume": "ACnc",
    "enzymatic activity/volume": "CCnc", "#/volume": "NCnc", "titer": "Titr",
    "molar ratio": "SRto", "#/area": "Naric", "mass/time": "MRat", "moles/time": "SRat",
    "partial pressure": "PPres", "mass ratio": "MRto", "ratio": "Ratio", "volume fraction": "VFr",
    "#": "Num", "entitic volume": "EntVol", "entitic mass": "EntMass", "log #/volume": "LnCnc",
    "volume": "Vol", "time": "Time", "molar fraction": "SFr", "mass fraction": "MFr",
    "presence": "PrThr", "identifier": "Prid", "type": "Type", "susceptibility": "Susc",
    "interpretation": "Imp", "time ratio": "RelTime", "volume rate": "VRat",
    "moles/mass": "SCnt", "mass/mass": "MCnt", "enzymatic activity/mass": "CCnt",
    "multiple of the median": "MoM", "catalytic activity/volume": "CCnc",
}
# The stated axes whose contradiction ranks a candidate below every other (an evidence tier),
# by scorer name: measured one by one on the lab dev sets (benchmarks/results/stated-axes/RULE.md).
BINDING = frozenset({"specimen", "text_specimen", "text_timing", "text_property", "text_method",
                     "text_scale", "text_subpart", "text_variant", "unit", "text_field",
                     "text_shared_method"})
CONTRADICTS = -1  # the tier of a contradicted binding axis


def contradiction_tier(scorer_name: str) -> int:
    """The evidence tier of a contradiction of this scorer's axis (0: only its malus)."""
    return CONTRADICTS if scorer_name in BINDING else 0

# Properties whose values are not quantities with units: a unit neither fits nor contradicts them.
_UNITLESS = {"PrThr", "Prid", "Type", "Susc", "Imp", "Titr", "MoM"}

# Specimen words (local and LOINC spellings, incl. LOINC short-name abbreviations) → group.
# French words are listed here ("lcr", "selles", "sang"): no French linguistic variant ships to
# learn them from, as loinc_parts learns the German variant's systems. "LCR" is also an old
# English name of a method (ligase chain reaction) that LOINC's names never use.
SPECIMEN_GROUPS = [
    ("csf", ("csf", "cerebrospinal", "cerebral spinal", "spinal fluid", "liquor", "lcr",
             "cephalorachidien", "cephalo rachidien", "cephalo-rachidien")),
    ("urine", ("urine", "ur ", "urin", "harn")),
    ("stool", ("stool", "feces", "faeces", "fecal", "stuhl", "stl", "selles")),  # Stl: short names
    ("blood", ("blood", "serum", "plasma", "serpl", "bld", "ser", "plas", "red blood cell",
               "rbc", "blut", "sang", "sangre", "dried blood spot", "dbs", "ppp")),
    ("fluid", ("body fluid", "fluid", "pleural", "peritoneal", "ascites", "synovial",
               "joint", "pericardial", "fld", "amniotic")),
]
# The blood spellings above that name its liquid part, serum or plasma, as LOINC's systems write
# them ("Serum or Plasma", "SerPl", "Platelet poor plasma"): a row that states one is no row of a
# whole-blood code (benchmarks/results/stated-serum/RULE.md).
BLOOD_LIQUID = ("serum", "plasma", "serpl", "ser", "plas", "ppp")


# LOINC CLASS → words of its title (LOINC Users' Guide, "LOINC classes") plus the usual local
# department names in English, German, French and Spanish, folded to ASCII. A source category
# agrees with a class when one of its words starts with one of these stems.
CLASS_WORDS = {
    "CHEM": ("chemistry", "chemie", "chimie", "quimica", "biochem", "blood gas", "blutgas",
             "gasometr", "electrolyt"),
    "HEM/BC": ("hematology", "haematology", "hamatolog", "hematolog", "cell count", "blood count",
               "blutbild", "cbc"),
    "COAG": ("coagulation", "hemostasis", "haemostasis", "gerinnung", "hamostas", "coagul"),
    "UA": ("urinalysis", "urine", "urin", "harn"),
    "MICRO": ("microbiology", "mikrobiolog", "microbiolog", "culture", "bacteriolog",
              "virolog", "parasitolog", "mycolog"),
    "SERO": ("serology", "serolog", "immunology", "immunolog", "infectious", "infektions"),
    "DRUG/TOX": ("toxicology", "toxikolog", "toxicolog", "drug", "therapeutic drug",
                 "medikament", "farmaco", "pharmaco"),
    "ABXBACT": ("susceptibility", "antibiogram", "antibiogramm", "resistenz"),
    "ALLERGY": ("allergy", "allergolog", "allergie", "alergia"),
    "BLDBK": ("blood bank", "transfusion", "immunohematolog", "immunhamatolog", "blutbank"),
    "CELLMARK": ("cell marker", "flow cytometry", "immunophenotyp", "durchflusszytometr"),
    "CHAL": ("challenge", "function test", "funktionstest", "belastung"),
    "CYTO": ("cytology", "zytolog", "cytolog"),
    "FERT": ("fertility", "andrology", "semen", "sperm", "fertilit"),
    "HLA": ("hla", "histocompatib", "tissue typing"),
    "MOLPATH": ("molecular", "genetic", "molekular", "genetik", "molecul"),
    "PATH": ("pathology", "patholog", "histolog"),
    "SPEC": ("specimen",),
}
CATEGORY_HEADERS = {"category", "class", "labclass", "section", "labsection", "department",
                    "kategorie", "bereich", "fachbereich", "abteilung", "categorie", "categoria",
                    "rubrik", "group", "testgroup"}


def property_from_name(long_name: str) -> str:
    """LOINC PROPERTY from a long common name ("" when the name does not say)."""
    found = re.search(r"\[([^\]]+)\]", long_name)
    if found:
        return PROPERTY_WORDS.get(found.group(1).strip().lower(), "")
    if "/100 " in long_name:  # "Neutrophils/100 leukocytes in Blood"
        return "NFr"
    return ""


def system_from_name(long_name: str) -> str:
    """LOINC SYSTEM words from a long common name ("Serum or Plasma"), "" when absent."""
    found = re.search(r"(?:\]|^[^\[]*?) (?:in|of) (.+?)(?: by | --|$)", long_name)
    return found.group(1).strip() if found else ""


def add_loinc_axes(concepts: pd.DataFrame) -> pd.DataFrame:
    """Concept table with `property`, `system` (read from the long name where the table has
    none) and `example_units` (UCUM, from LOINC 2.67) where known."""
    concepts = concepts.copy()
    # A short-name table's axes come read already (loinc_parts.with_short_name_axes).
    if "property" not in concepts.columns:
        concepts["property"] = concepts["name"].map(property_from_name)
    if "system" not in concepts.columns:
        concepts["system"] = concepts["name"].map(system_from_name)
    units = example_units()
    concepts["example_units"] = concepts["code"].map(lambda c: "|".join(units.get(c, ())))
    return concepts


def _score_with(scorer, row: Mapping[str, str], concept: Mapping[str, object]) -> Evidence:
    """`scorer.score(row, concept)` through its `for_row`, so both ways share one code path."""
    bound = scorer.for_row(row)
    return NO_EVIDENCE if bound is None else bound(concept)


@dataclass(frozen=True)
class UnitScorer:
    """Prefer candidates whose PROPERTY (or example unit) fits the row's unit."""

    match: float = 0.05
    mismatch: float = -0.10
    use_examples: bool = True  # also accept the code's LOINC example units, not only its PROPERTY
    name: str = "unit"

    def score(self, row: Mapping[str, str], concept: Mapping[str, object]) -> Evidence:
        return _score_with(self, row, concept)

    def for_row(self, row: Mapping[str, str]):
        """The row's unit parsed once for all its candidates; None for a unit not understood."""
        unit = parse_unit(row.get("unit", ""))
        return functools.partial(self._score, unit) if unit.properties else None

    def _score(self, unit, concept: Mapping[str, object]) -> Evidence:
        prop = str(concept.get("property", "") or "")
        if not prop or prop in _UNITLESS:
            return NO_EVIDENCE
        examples = str(concept.get("example_units", "") or "") if self.use_examples else ""
        if unit.ucum.lower() in {u.lower() for u in examples.split("|") if u} \
                or (prop in unit.properties and prop not in unit.loose):
            return Evidence(self.match, f"unit {unit.raw} fits {prop}")
        if _amount_over_period(unit, prop, concept):
            return Evidence(self.match, f"unit {unit.raw} fits {prop} over the code's period")
        if prop in unit.loose:
            return NO_EVIDENCE
        return Evidence(self.mismatch, f"unit {unit.raw} contradicts {prop} ✘", contradicts=True,
                        tier=contradiction_tier(self.name))


# A rate's amount: LOINC writes a 24-hour urine volume as Vol over a 24H period, while its units
# are per 24 hours ("mL/24 hr"). benchmarks/results/stated-period/RULE.md
_RATE_AMOUNTS = {"VRat": "Vol", "MRat": "Mass", "SRat": "Sub"}
_PER_HOURS = re.compile(r"/\(?(\d{1,2})\.?\s*(?:h|hr|hrs|hour|hours)\)?$")


def _amount_over_period(unit, prop: str, concept: Mapping[str, object]) -> bool:
    """The unit is a rate per N hours ("mL/24 hr") and the candidate the amount it is the rate
    of, collected over N hours (its TIME_ASPCT, or its name's "24 hour" system)."""
    per = _PER_HOURS.search(unit.ucum.lower().replace(" ", ""))
    if not per or prop not in {_RATE_AMOUNTS.get(p) for p in unit.properties}:
        return False
    period = str(concept.get("time", "") or "").strip().upper()
    hours = re.fullmatch(r"(\d+)H", period) or re.fullmatch(
        r"(\d+)H", name_period(str(concept.get("name", "") or "")))
    return bool(hours) and int(hours.group(1)) == int(per.group(1))


def name_period(long_name: str) -> str:
    """The collection period a long common name's system states ("Protein [Mass/time] in 24 hour
    Urine" → "24H"), "" where it states none; a challenge's hours ("--2 hours post …") are not
    one."""
    hours = re.search(r"\b(\d+) hour\b", long_name.split(" --")[0])
    return f"{hours.group(1)}H" if hours else ""


def without_accents(text: str) -> str:
    """`text` in ASCII letters, accents dropped: a list writes its words in its own language."""
    return unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode("ascii")


def _fold(text: str) -> str:
    folded = without_accents(text)
    return " " + re.sub(r"[^a-z0-9]+", " ", folded.lower()).strip() + " "


def category_classes(category: str) -> frozenset[str]:
    """LOINC CLASS stems a local category (department, section) points to; empty when unknown."""
    text = _fold(category)
    if not text.strip():
        return frozenset()
    return frozenset(cls for cls, stems in CLASS_WORDS.items()
                     if any(f" {stem}" in text for stem in stems)
                     or f" {_fold(cls).strip()} " in text)


def class_stem(loinc_class: str) -> str:
    """The CLASS_WORDS key of a LOINC class: "MOLPATH.MUT" → "MOLPATH", "Chem" → "CHEM"."""
    upper = str(loinc_class or "").strip().upper()
    return upper if upper in CLASS_WORDS else upper.split(".")[0]


def row_category(row: Mapping[str, str]) -> str:
    """The row's category/department/section column value, "" when the list has none."""
    for key, value in row.items():
        if re.sub(r"[^a-z0-9]", "", str(key).lower()) in CATEGORY_HEADERS and value:
            return str(value)
    return ""


@dataclass(frozen=True)
class CategoryScorer:
    """Prefer candidates whose LOINC CLASS fits the row's category ("Chemistry" → CHEM).

    Only a bonus: local departments file tests where LOINC does not (MIMIC-IV files urinalysis under
    Hematology), so a class outside the category is no evidence against a candidate.
    """

    match: float = 0.03
    name: str = "category"

    def score(self, row: Mapping[str, str], concept: Mapping[str, object]) -> Evidence:
        return _score_with(self, row, concept)

    def for_row(self, row: Mapping[str, str]):
        """The row's category read once (a scan of its columns); None when it names no class."""
        category = row_category(row)
        wanted = category_classes(category)
        return functools.partial(self._score, category, wanted) if wanted else None

    def _score(self, category: str, wanted: frozenset, concept: Mapping[str, object]) -> Evidence:
        target = class_stem(str(concept.get("class", "") or ""))
        if not target or target not in wanted:
            return NO_EVIDENCE
        return Evidence(self.match, f"category {category} fits class {concept.get('class')}")
