"""A lab row's TEXT and a LOINC concept, both read as LOINC axes.

A local label often says in words what LOINC puts in its axes: ", SERUM" (system), "(%)" and
"Count" (property), "24 hr urine" (timing), "Automated count", "by calculation" (method). Lab
evidence used to read these facts only from columns; `text_axes` reads them from the text, and
`concept_axes` reads the same axes from a candidate: a LOINC import's columns when the concept
table has them, else its long common name ("Urate [Mass/time] in 24 hour Urine by …") or its
short name ("Chol SerPl-mCnc").

The word tables are learned from the shipped LOINC Top-2000 lists where the vocabulary has them:
which method phrases LOINC uses (the "by …" part of the long names), and which short-name
property suffix ("mCnc", "%") stands for which PROPERTY. What LOINC never writes (local words for
the same idea: "dipstick" for a test strip, "%" for a fraction, "level" for a concentration) is a
small table of words here, never of tests.
"""
from __future__ import annotations

import functools
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from importlib import resources
from typing import Mapping

import pandas as pd

from ...vocab.vocabulary import short_name_head, shipped_top2000
from .columns import (BLOOD_LIQUID, PROPERTY_WORDS, SPECIMEN_GROUPS, name_period, property_from_name,
                      system_from_name, without_accents)
from .specimen_forms import (DOMINANT, compound_heads, cut_spelling, foreign_spellings, hour_words,
                             split_compounds)
from .specimens import Specimen, SpecimenTable, read_specimen, system_specimen
from .units import parse_unit

# Local words for a PROPERTY family (LOINC writes "[Mass/volume]", labs write "level").
FRACTION = frozenset({"NFr", "MFr", "VFr", "SFr", "CFr", "ArVFr", "Fr"})
COUNT = frozenset({"NCnc", "Num", "Naric"})
CONCENTRATION = frozenset({"MCnc", "SCnc", "ACnc", "CCnc", "LnCnc"})
RATIO = frozenset({"Ratio", "SRto", "MRto", "VRto", "RelTime"})
PROPERTY_CUES = (
    (("%", "percent", "pct", "fraction"), FRACTION, "a fraction"),
    (("count", "#", "absolute", "abs", "cnt"), COUNT, "a count"),
    (("ratio",), RATIO, "a ratio"),
    (("concentration", "conc"), CONCENTRATION, "a concentration"),
    # "Level": an amount in the patient, of whatever kind its analyte is ("HbA1c level", a
    # fraction; "Tobramycin level", a mass concentration), never a susceptibility or a presence
    # (benchmarks/results/level-filler/RULE-2.md).
    (("level", "levels"), CONCENTRATION | FRACTION, "an amount"),
    (("titer", "titre"), frozenset({"Titr"}), "a titer"),
    (("qualitative", "qual", "ql", "presence"), frozenset({"PrThr"}), "presence"),
)
_CUE_WORDS = {word for cues, _, _ in PROPERTY_CUES for word in cues}
_NUMERAL = re.compile(r"\d+|i{1,3}|iv")  # "type 1", "type II": a subtype's number
_CUTOFF_WORDS = {"cutoff", "cut-off"}  # "(cutoff 40 ng/mL)": the screen's threshold
# Local words for a LOINC method word ("dipstick" is LOINC's "Test strip").
METHOD_SYNONYMS = {"dipstick": "strip", "calc": "calculation", "calculated": "calculation",
                   "auto": "automated", "automatic": "automated", "microscopic": "microscopy",
                   "elisa": "immunoassay", "eia": "immunoassay", "pcr": "amplification",
                   "naat": "amplification"}
# Text timing: "24 hr", "24h", "24-hour"; "random"/"spot" is a point in time. Hours "post" or
# "after" something ("1h p 50 g Glc") time a challenge sample: read against challenge hours.
# Other languages' words for "hours" are learned (specimen_forms.hour_words: "horas", "heures").
_HOUR_WORDS = ("h", "hr", "hrs", "hour", "hours", "std")
_POINT_WORDS = {"random", "spot"}
# A quantitative result, as LOINC's short names and local names write its scale ("Qn").
_QUANTITATIVE_WORDS = {"qn", "quant", "quantitative"}
# The German variant's SCALE values: quantitative, or a kind of unquantified result. Its
# "Semiquantitativ" (titers) and "Ordinal oder Quantitativ" (susceptibilities) are neither.
_VARIANT_SCALES = {"Quantitativ": "Qn", "Ordinal": "Ord", "Nominal": "Ord", "Freitext": "Ord",
                   "Dokument": "Ord"}
# In a label, "Red/White Blood Cells" and "Plasma Cells" name cells (an analyte), not the
# specimen: a one-word blood spelling before "cell(s)" (benchmarks/results/stated-serum/RULE-2.md).
_BLOOD_CELLS = re.compile(r" (?:%s) cells? " % "|".join(
    s for s in dict(SPECIMEN_GROUPS)["blood"] if s.isalpha() and len(s) > 3))
# In a label, "RBC" is an analyte (a red-cell count), not a specimen as in LOINC's systems.
_TEXT_NOT_SPECIMEN = {"rbc", "red blood cell"}
# Order for the text: a body-fluid word wins over "blood" ("RBC, Pleural"), urine over blood
# ("Blood, Urine" is haematuria), as in labs.SPECIMEN_GROUPS otherwise; a specimen of its own
# (sweat, saliva: specimen_table) before the body fluids.
_TEXT_GROUP_ORDER = ("csf", "urine", "stool", "fluid", "blood")
# Words of LOINC systems that name no specimen: a row that writes them states none.
_SYSTEM_STOPWORDS = frozenset({"or", "and", "of", "from", "in", "specimen", "specimens",
                               "unspecified", "hour", "time", "narrative", "nominal", "tests"})
QUALIFIER_CODES = 5  # codes whose systems must use a word for it to qualify a specimen group
_LOINC_CODE = re.compile(r"^\d{1,7}-\d$")
_BRACKETS = re.compile(r"\[([^\]]+)\]")


@dataclass(frozen=True)
class Axes:
    """LOINC axes, each "" (or empty) when unknown; `said` keeps the words that told us."""

    component: str = ""
    system: str = ""  # the system as written ("Serum or Plasma", "Ser/Plas", "Urine")
    group: str = ""  # specimen group of the system (specimen_table)
    qualifier: str = ""  # what the system adds within its group ("arterial" blood)
    part: str = ""  # the liquid part of blood it names (specimens.Specimen.part)
    properties: frozenset = frozenset()  # acceptable PROPERTY codes (a text may allow several)
    timing: str = ""  # "24H", "Pt"…
    methods: frozenset = frozenset()  # method phrases, lower case ("" = no method)
    said: Mapping = None  # axis → the text's words ("24 hr", "serum", "(%)")
    scale: str = ""  # a text's stated scale: "Qn" ("Qn", "quant"); a code's is its property's
    challenge_hours: str = ""  # a code's challenge hours: "--2 hours post 75 g glucose" → "2H"


def fold(text: str) -> str:
    """Lower-case ASCII with single spaces, keeping % and # (they carry a property)."""
    folded = without_accents(text)
    return " " + re.sub(r"[^a-z0-9%#]+", " ", folded.lower().replace("%", " % ")).strip() + " "


def is_loinc_code(code: str) -> bool:
    """A LOINC code: 1-7 digits, '-', its mod-10 check digit (so "123-4" from another
    vocabulary does not pass for LOINC by its shape alone)."""
    code = str(code).strip()
    if not _LOINC_CODE.match(code):
        return False
    number, check = code.split("-")
    return _check_digit(number) == int(check)


def _check_digit(number: str) -> int:
    """LOINC's mod-10 check digit (Luhn over the digits, rightmost doubled)."""
    total = 0
    for position, digit in enumerate(reversed(number)):
        value = int(digit) * (2 if position % 2 == 0 else 1)
        total += value // 10 + value % 10
    return (10 - total % 10) % 10


# --- what the shipped vocabulary teaches -----------------------------------------------------

@functools.lru_cache(maxsize=1)
def ranked_codes() -> pd.DataFrame:
    """The shipped LOINC Top-2000 US and SI lists as one table: code, name, short_name, class,
    rank (the better of the two lists' ranks), counted (False for a code only the SI list ranks:
    the SI list puts molar twins at their US code's rank, so that rank is borrowed)."""
    frames = [shipped_top2000(units).assign(list=units) for units in ("US", "SI")]
    table = pd.concat(frames, ignore_index=True)
    table["counted"] = table["code"].isin(set(table.loc[table["list"] == "US", "code"]))
    table = table.drop(columns="list")
    table["rank"] = pd.to_numeric(table["rank"], errors="coerce").fillna(0).astype(int)
    table = table[table["rank"] > 0].sort_values("rank", kind="stable")
    return table.drop_duplicates("code").reset_index(drop=True)


@functools.lru_cache(maxsize=1)
def method_words() -> dict[str, frozenset]:
    """Word (5-letter stem) → the LOINC method phrases it names, learned from the "by …" part of
    the shipped long names. Left out: words naming many phrases ("method"), property words
    ("count"), and words of analyte names ("creatinine" of "Creatinine-based formula",
    "neutr" of "Neutralization" and "Neutrophils"): in a label they name the analyte."""
    naming, analyte = _method_naming(), _component_stems()
    table = _method_stems(naming, analyte)
    # A local method word ("calculated") names its LOINC method even where an analyte shares
    # the stem ("Calculated" components): the label uses it as a method word.
    for word in set(METHOD_SYNONYMS.values()):
        if word[:5] in naming:
            table[word[:5]] = frozenset(naming[word[:5]])
    for stem, found in _variant_method_words(analyte).items():
        if stem not in naming:  # an English stem keeps its meaning, or its exclusion
            table[stem] = found
    return table


@functools.lru_cache(maxsize=1)
def _method_naming() -> dict[str, set]:
    """Stem → the method phrases of the shipped long names ("by …") that have it."""
    phrases = {_method_from_name(name) for name in ranked_codes()["name"]} - {""}
    return _stems_naming((phrase, phrase) for phrase in phrases)


@functools.lru_cache(maxsize=1)
def _component_stems() -> frozenset:
    """The stems of the shipped long names' component words."""
    return frozenset(stem for component in builtin_components() for stem in _stems(component.lower()))


@functools.lru_cache(maxsize=1)
def shared_method_words() -> dict[str, frozenset]:
    """The stems method_words leaves out because a component writes them too, stem → the method
    phrases it names ("scree": "screen method", of "Benzodiazepines … by Screen method" and
    "Newborn hearing screen"; "sensi": "high sensitivity method"), less the stems of specimen
    words (the specimen readers' to read: "stool" of "Testing kit protocol [#] in stool")."""
    specimen = {stem for spelling, _ in specimen_table().spellings for stem in _stems(spelling)}
    every, read = _method_stems(_method_naming(), set()), method_words()
    return {stem: found for stem, found in every.items()
            if stem in _component_stems() and stem not in specimen and stem not in read}


@functools.lru_cache(maxsize=1)
def analyte_methods() -> dict[str, frozenset]:
    """A built-in test (its words, as whole_analyte gives them, folded) → the method phrases of
    its codes ("benzodiazepines" → {"screen method", "confirmatory method", ""})."""
    found: dict[str, set] = defaultdict(set)
    for name, component in zip(ranked_codes()["name"], builtin_components()):
        found[fold(whole_analyte(component)).strip()].add(_method_from_name(name.split(" --")[0]))
    return {analyte: frozenset(methods) for analyte, methods in found.items()}


def _variant_method_words(analyte: set[str]) -> dict[str, frozenset]:
    """Word stem of the shipped linguistic variant's METHOD values ("manue" of "Manuelle
    Zählung") → the English method phrases of the same codes ("manual count"): a German list
    that states its method is read as stating it (benchmarks/results/lab-text/RULE-variant-methods.md).
    Left out as in method_words, with the variant's component words as analyte words too."""
    english = ranked_codes().set_index("code")["name"].map(_method_from_name)
    variant = linguistic_variant()
    pairs = ((fold(method), english.get(code, "")) for code, method in zip(variant["code"], variant["method"]))
    naming = _stems_naming((text, phrase) for text, phrase in pairs if phrase)
    return _method_stems(naming, analyte | {stem for c in variant["component"] for stem in _stems(fold(c))})


def _stems(text: str) -> list[str]:
    """The 5-letter stems of a lower-case text's words of 4 letters or more."""
    return [word[:5] for word in re.findall(r"[a-z]{4,}", text)]


def _stems_naming(pairs) -> dict[str, set]:
    """Stem → the method phrases whose (text, phrase) pairs have it in their text."""
    naming: dict[str, set] = defaultdict(set)
    for text, phrase in pairs:
        for stem in _stems(text):
            naming[stem].add(phrase)
    return naming


def _method_stems(naming: dict[str, set], analyte: set[str]) -> dict[str, frozenset]:
    """The stems that name a method in a label: at most 3 phrases, no analyte or property word."""
    return {stem: frozenset(found) for stem, found in naming.items()
            if len(found) <= 3 and stem not in analyte
            and not any(w.startswith(stem) for w in _CUE_WORDS)}


def _spells(word: str, system: str) -> bool:
    """`word` starts like `system` and its letters follow in order ("urns" in "urine sediment"),
    or the system's words in reverse: an English name puts its noun last, a short name first
    ("BldA" for "Arterial blood", "BldCoV" for "Venous cord blood")."""
    return _spells_in_order(word, system) or _spells_in_order(word, " ".join(system.split()[::-1]))


def _spells_in_order(word: str, system: str) -> bool:
    if not system.startswith(word[0]):
        return False
    rest = iter(system)
    return all(letter in rest for letter in word)


def property_codes() -> dict[str, str]:
    """Folded LOINC PROPERTY code → the code ("mcnc" → "MCnc"): a text or short name that writes
    a property code ("Chol SerPl-mCnc", "Neutrophils NFr Bld") states the property exactly."""
    codes = set(PROPERTY_WORDS.values()) | FRACTION | COUNT | CONCENTRATION | RATIO | {"MRat"}
    return {code.lower(): code for code in codes}


def short_name_property(short_name: str) -> str:
    """The PROPERTY a LOINC short name writes: its suffix ("Chol SerPl-mCnc" → MCnc) or a word of
    its own after the first ("MetHgb MFr Bld" → MFr, where the long name, "Methemoglobin/
    Hemoglobin.total in Blood", brackets none); "" when it writes none."""
    codes = property_codes()
    if "-" in short_name:
        found = codes.get(short_name.rsplit("-", 1)[-1].strip().lower(), "")
        if found:
            return found
    written = [codes[word.lower()] for word in short_name.split()[1:] if word.lower() in codes]
    return written[-1] if written else ""


@functools.lru_cache(maxsize=1)
def linguistic_variant() -> pd.DataFrame:
    """The shipped German linguistic variant of the built-in codes (code, long_common_name, and
    the six axes in German), from which German axis words are learned by code."""
    with (resources.files("codemap") / "data" / "loinc" / "loinc_de_names.tsv").open(
            encoding="utf-8") as f:
        return pd.read_csv(f, sep="\t", dtype=str, keep_default_na=False)


@functools.lru_cache(maxsize=1)
def variant_systems() -> dict[str, str]:
    """Folded SYSTEM of the linguistic variant (" zerebrospinalflussigkeit ") → the English
    system of the same codes ("Cerebral spinal fluid"), learned by code: a value naming ≥ 2
    codes, ≥ 90 % of them one English system's specimen. A value that is also the analyte of one
    of the variant's components ("Erythrozyten") is left out: in a label it names the analyte
    (but "Urinsediment", of "Urinsediment Kommentare", stays a specimen)."""
    variant = linguistic_variant()
    english = {row["code"]: _system_of(row["name"].split(" --")[0])
               for row in ranked_codes().to_dict("records")}
    pairs = pd.DataFrame({"system": variant["system"].map(fold),
                          "english": variant["code"].map(english).fillna("")})
    pairs = pairs[pairs["english"].map(lambda e: bool(system_specimen_of(e)))]
    analyte = set(variant["component"].str.split(r"[.^/]", regex=True).str[0].map(fold))
    learned = {}
    for system, found in pairs.groupby("system")["english"]:
        read = found.map(lambda e: system_specimen_of(e)).value_counts()
        if len(found) >= 2 and read.iloc[0] >= 0.9 * len(found) and system not in analyte:
            learned[system] = found[found.map(system_specimen_of) == read.index[0]].iloc[0]
    return learned


def variant_specimens() -> dict[str, str]:
    """variant_systems' specimen groups (" urin " → "urine")."""
    return {german: system_specimen_of(english).group for german, english in variant_systems().items()}


@functools.lru_cache(maxsize=1)
def bracket_properties() -> dict[str, str]:
    """Folded bracket phrase of a LOINC long name → its PROPERTY code: the English phrases
    ("[Mass/volume]", labs.PROPERTY_WORDS) and those of the shipped linguistic variants
    ("[Masse/Volumen]"), learned by code from the English long names of the same codes. A
    variant phrase is kept when it names at least 3 codes and 90% of them agree on one property."""
    table = {fold(words): code for words, code in PROPERTY_WORDS.items()}
    variant = linguistic_variant()
    phrases = variant["long_common_name"].str.extract(_BRACKETS)[0].dropna().map(fold)
    for phrase, code in _agreed(phrases, variant["code"].map(_english_properties())).items():
        table.setdefault(phrase, code)
    return table


@functools.lru_cache(maxsize=1)
def _english_properties() -> pd.Series:
    """Built-in code → the PROPERTY its English long name brackets ("" where none)."""
    return ranked_codes().drop_duplicates("code").set_index("code")["name"].map(property_from_name)


def _agreed(keys: pd.Series, values: pd.Series, least: int = 3, share: float = 0.9) -> dict:
    """Key → the value that at least `share` of its rows agree on, where it has `least` rows
    with a value ("" or missing is none): what the German variant's words are learned by, code
    by code, against the English names of the same codes. Empty keys learn nothing."""
    pairs = pd.DataFrame({"key": keys, "value": values}).dropna()
    pairs = pairs[(pairs["key"] != "") & (pairs["value"] != "")]
    agreed = {}
    for key, found in pairs.groupby("key")["value"]:
        counts = found.value_counts()
        if len(found) >= least and counts.iloc[0] >= share * len(found):
            agreed[key] = counts.index[0]
    return agreed


# --- a concept's axes -----------------------------------------------------------------------

def concept_axes(concept: Mapping[str, object]) -> Axes:
    """The candidate's axes: a LOINC import's columns when present, else read from its names."""
    get = lambda key: str(concept.get(key, "") or "").strip()
    # `long_name`: a short-name table's axes source (with_short_name_axes).
    return _concept_axes(get("long_name") or get("name"), get("short_name"), get("component"),
                         get("property"), get("system"), get("time"), get("method"))


@functools.lru_cache(maxsize=1 << 16)  # called per (row, candidate); a candidate recurs often
def _concept_axes(name, short_name, component, prop, system, timing, method) -> Axes:
    main = name.split(" --")[0]  # "--2 hours post 75 g glucose" is a challenge, not a timing
    system = system or _system_of(main) or _short_name_system(short_name)
    prop = prop or property_from_name(main) or short_name_property(short_name)
    if not timing:
        timing = name_period(main) or ("Pt" if system else "")
    method = method.lower() if method else _method_from_name(main)
    specimen = system_specimen_of(system)
    challenge = _CHALLENGE_HOURS.search(name.partition(" --")[2])
    return Axes(component=(component or component_from_name(main)).lower(), system=system,
                group=specimen.group, qualifier=specimen.qualifier, part=specimen.part,
                properties=frozenset({prop} - {""}),
                timing=timing.upper() if timing != "Pt" else timing, methods=frozenset({method}),
                challenge_hours=f"{int(challenge.group(1))}H" if challenge else "")


# The hours a challenge is timed by ("--2 hours post 100 g glucose PO", "--1H post dose").
_CHALLENGE_HOURS = re.compile(r"^\s*(\d{1,2})\s*(?:hours?|hr|h)\b", re.IGNORECASE)


_COMPONENT_PARTS = re.compile(r"[./^]")
_DIVISOR_OR_CHALLENGE = re.compile(r"[/^]")


@functools.lru_cache(maxsize=1 << 14)
def component_parts(component: str) -> tuple[str, frozenset]:
    """A LOINC component's analyte and the words that make it one test of that analyte, split
    where LOINC's component syntax adds a subpart, a divisor or a qualifier ('.', '/', '^'):
    "bilirubin.direct" → ("bilirubin", {"direct"}); "glomerular filtration rate/1.73 sq
    m.predicted among blacks" → ("glomerular filtration rate", {"predicted", "among", "blacks"})."""
    found = _COMPONENT_PARTS.search(component)
    if not found or found.start() == 0:
        return component.strip(), frozenset()
    detail = fold(component[found.start():]).split()
    return component[:found.start()].strip(), frozenset(w for w in detail if len(w) >= 3 and w.isalpha())


@functools.lru_cache(maxsize=1)
def builtin_components() -> tuple[str, ...]:
    """The COMPONENT of every shipped Top-2000 code, as its long name writes it
    (component_from_name), in rank order: what the learned component tables read."""
    return tuple(component_from_name(str(name)) for name in ranked_codes()["name"])


def own_subparts(component: str) -> frozenset:
    """The words of a component's own subpart: component_parts' words of what comes before any
    divisor or challenge ("/", "^"): "Calcium.ionized" → {"ionized"}; "Protein.monoclonal/
    Protein.total" → {"monoclonal"}; "Albumin/Creatinine" → {} (a divisor is no subpart)."""
    return component_parts(_DIVISOR_OR_CHALLENGE.split(component, maxsplit=1)[0])[1]


def whole_analyte(component: str) -> str:
    """The component a row names by its analyte alone: "Bilirubin.total" → "Bilirubin" (the
    total of an analyte is the analyte, as a LOINC release's own COMPONENT column writes 1975-2:
    "Bilirubin"; the urine codes' long names write the same analyte without ".total"); any
    other component as it is ("Bilirubin.direct", "Cholesterol.total/Cholesterol in HDL")."""
    if _DIVISOR_OR_CHALLENGE.search(component) or own_subparts(component) != {"total"}:
        return component
    return component_parts(component)[0]


@functools.lru_cache(maxsize=1)
def analyte_subparts() -> dict[str, frozenset]:
    """Folded analyte → the own subparts its built-in codes carry, less the analyte's own words
    ("calcium" → {"ionized"}, "bilirubin" → {"direct", "indirect", "total"}), learned from the
    shipped long names: the subparts a row can state of that analyte. Only components without a
    divisor or challenge teach it: "Cholesterol.total/Cholesterol in HDL" is a ratio, and
    "Cholesterol" alone is already the total, so "total" is no subpart a row states of it."""
    learned: dict[str, set] = {}
    for component in builtin_components():
        if _DIVISOR_OR_CHALLENGE.search(component):
            continue
        analyte = fold(component_parts(component)[0]).strip()
        if analyte and (subparts := own_subparts(component) - set(analyte.split())):
            learned.setdefault(analyte, set()).update(subparts)
    return {analyte: frozenset(words) for analyte, words in learned.items()}


@functools.lru_cache(maxsize=1)
def _variant_places() -> dict[tuple, frozenset]:
    """(place, the component's other words with "*" in that place) → the words the built-in
    components write there, where they write two or more: two components that differ in one
    word at one place are sibling tests ("rubella virus igg ab", "rubella virus igm ab")."""
    places: dict[tuple, set] = defaultdict(set)
    for component in builtin_components():
        words = fold(component).split()
        if len(words) >= 2:  # one-word components differ in everything
            for at, word in enumerate(words):
                places[_place(words, at)].add(word)
    return {key: frozenset(found) for key, found in places.items() if len(found) > 1}


def _place(words: list[str], at: int) -> tuple:
    return (at, *words[:at], "*", *words[at + 1:])


@functools.lru_cache(maxsize=1)
def all_variant_words() -> frozenset:
    """Every word of _variant_places, together: a row that writes none states no variant."""
    return frozenset().union(*_variant_places().values())


@functools.lru_cache(maxsize=1 << 14)
def variant_words(component: str) -> tuple[tuple[str, frozenset, frozenset], ...]:
    """The words of a component (as a long name writes it) that tell it from a sibling test,
    learned from the built-in components (_variant_places): (its word, the siblings' words in
    that place, the component's words beside that place), one per place. "Rubella virus IgG
    Ab" → (("igg", {"igm"}, {"virus", "ab"}),). Its own subparts are left to own_subparts."""
    words = fold(component).split()
    own = own_subparts(component)
    found = []
    for at, word in enumerate(words):
        others = _variant_places().get(_place(words, at), frozenset()) - {word}
        if others and word not in own:
            found.append((word, others, frozenset(words[max(at - 1, 0):at] + words[at + 1:at + 2])))
    return tuple(found)


def component_from_name(long_name: str) -> str:
    """COMPONENT words of a long common name: what comes before "[" (a component may itself say
    "in": "Cholesterol in HDL [Mass/volume]"), else before " in " or " by "."""
    if " [" in long_name:
        return long_name.split(" [", 1)[0].strip()
    return re.split(r" in | by | --", long_name, maxsplit=1)[0].strip()


def _system_of(long_name: str) -> str:
    """SYSTEM words after the bracketed property when there is one (a component may itself say
    "in": "Cholesterol in HDL [Mass/volume] in Serum or Plasma"), else labs.system_from_name."""
    found = re.search(r"\] (?:in|of) (.+?)(?: by |$)", long_name)
    return found.group(1).strip() if found else system_from_name(long_name)


def long_name_system(concept: Mapping[str, object]) -> str:
    """The system as the concept's long name writes it, lower case ("serum or plasma"; "" when
    the name says none): one spelling for the built-in names, a LOINC import's and the ranked
    lists', whatever SYSTEM column a table also has ("Ser/Plas")."""
    name = str(concept.get("long_name", "") or concept.get("name", "") or "").split(" --")[0]
    return _system_of(name).lower()


def _method_from_name(long_name: str) -> str:
    found = re.search(r" by (.+?)(?: --|$)", long_name)
    return found.group(1).strip().lower() if found else ""


def _short_name_system(short_name: str) -> str:
    """"SerPl" of "Chol SerPl-mCnc": the word before the property suffix. Not short_name_parts:
    its system words are learned (short_name_readings) from concept_axes, which calls this."""
    return short_name_head(short_name)[1]


def short_name_parts(short_name: str, systems=None) -> tuple[str, str, str]:
    """(component words, system word, property suffix) of a LOINC short name: "Bilirub Direct
    SerPl-mCnc" → ("Bilirub Direct", "SerPl", "mCnc"); "Albumin Ur Ql" → ("Albumin", "Ur", "").
    The system word is the rightmost after the first that `systems` (folded word → system;
    short_name_readings' by default) knows; words after it name a method or scale."""
    systems = short_name_readings()[1] if systems is None else systems
    head, suffix = (short_name.rsplit("-", 1) if "-" in short_name else (short_name, ""))
    words = head.split()
    for i in range(len(words) - 1, 0, -1):
        if fold(words[i]).strip() in systems:
            return " ".join(words[:i]), words[i], suffix.strip()
    return head.strip(), "", suffix.strip()


def _most_voted(pairs, least: int = 1) -> dict[str, str]:
    """short → the long most pairs give it, where at least `least` pairs do."""
    votes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for short, long in pairs:
        if short and long:
            votes[short][long] += 1
    best = {short: max(found.items(), key=lambda item: (item[1], item[0]))
            for short, found in votes.items()}
    return {short: long for short, (long, n) in best.items() if n >= least}


@functools.lru_cache(maxsize=1)
def short_name_readings() -> tuple[dict[str, str], dict[str, str]]:
    """What the shipped codes' short names stand for, learned from their long names: folded
    system word → the long names' system ("ur" → "Urine", "serpl" → "Serum or Plasma"), a word
    after the first that spells the system in order; folded short-name component (the words
    before it) → long component ("bilirub" → "bilirubin.total"); each the spelling most codes
    agree on."""
    rows = ranked_codes().to_dict("records")
    system_votes = []
    for row in rows:
        system = _system_of(row["name"].split(" --")[0])
        words = [fold(w).strip() for w in row["short_name"].rsplit("-", 1)[0].split()]
        spelled = [w for w in words[1:] if w.isalpha() and _spells(w, system.lower())]
        if spelled:
            system_votes.append((spelled[-1], system))
    systems = _most_voted(system_votes, least=2)  # one odd long name ("… origin") is no system
    components = _most_voted(
        (fold(short_name_parts(row["short_name"], systems)[0]).strip(), concept_axes(row).component)
        for row in rows)
    return components, systems


def reads_as_short_names(names) -> bool:
    """Whether a table's names are LOINC short names ("Sodium Ur-sCnc") rather than long common
    names: most of them (of up to 500) have no bracketed property and end in a property
    suffix or a system word the shipped short names use."""
    names = [str(n) for n in list(names)[:500]]
    systems, suffixes = short_name_readings()[1], property_codes()
    parts = [short_name_parts(n, systems) for n in names if " [" not in n]
    short = sum(suffix.lower() in suffixes or fold(system).strip() in systems
                for _, system, suffix in parts)
    return bool(names) and short > len(names) / 2


def with_short_name_axes(concepts: pd.DataFrame) -> pd.DataFrame:
    """A LOINC table named by its short names, with the axes its long names would give: a code
    of the shipped Top-2000 lists takes its long name's axes; any other code its short name's,
    read through short_name_readings. Adds `short_name` (the table's name), `long_name` (what
    the axes are read from; the table's own names stay what is shown), `component` (one the
    table gives is kept: a release's COMPONENT), `system`, `property`."""
    known = ranked_codes().drop_duplicates("code").set_index("code")["name"]
    components, systems = short_name_readings()
    suffixes = property_codes()
    concepts = concepts.copy()
    concepts["short_name"] = concepts["name"]
    long_names, parts = [], []
    for code, name in zip(concepts["code"], concepts["name"]):
        long = known.get(code, "")
        if long:
            axes = concept_axes({"name": long})
            parts.append((axes.component, axes.system, next(iter(axes.properties), "")))
        else:
            component, system, suffix = short_name_parts(str(name), systems)
            component, system_long = _hours_apart(component, systems.get(fold(system).strip(), system))
            component, challenge = _challenge_apart(component)
            parts.append((components.get(fold(component).strip(), component.lower()),
                          system_long, suffixes.get(suffix.lower(), "")))
            long = f"{component} in {system_long}{challenge}" if system_long else ""
        long_names.append(long)
    concepts["long_name"] = long_names
    read = [p[0] for p in parts]
    if "component" in concepts.columns:  # a table that gives LOINC's COMPONENT: it wins over a reading
        given = concepts["component"].fillna("").astype(str).str.strip()
        read = [g.lower() if g else r for g, r in zip(given, read)]
    concepts["component"] = read
    concepts["system"], concepts["property"] = ([p[i] for p in parts] for i in (1, 2))
    return concepts


_SHORT_HOURS = re.compile(r"^(.*\S)\s+(\d{1,2})h$")


def _hours_apart(component: str, system: str) -> tuple[str, str]:
    """A short name's hours word before its system ("Mg 24h Ur") is the code's timing: the
    component without it, and the system as the long names write it ("24 hour Urine")."""
    found = _SHORT_HOURS.match(component.strip())
    if not found or not system:
        return component, system
    return found.group(1), f"{found.group(2)} hour {system}"


_SHORT_CHALLENGE = re.compile(r"^(.*\S)\s+(\d{1,2})h\s+p\b(.*)$", re.IGNORECASE)


def _challenge_apart(component: str) -> tuple[str, str]:
    """A short name's whole hours "p" something ("cycloSPORINE 2h p", "Glucose 1h p Glc") time a
    challenge: the component without them, and the challenge as a long name writes it after
    its "--" (" --2 hours post Glc"), where concept_axes reads its hours. Decimal hours ("1.5h
    p") are left in the component, as a row's are left unread."""
    found = _SHORT_CHALLENGE.match(component.strip())
    if not found:
        return component, ""
    hours = int(found.group(2))
    return found.group(1), f" --{hours} hour{'s' if hours != 1 else ''} post{found.group(3)}"


@functools.lru_cache(maxsize=1)
def specimen_table() -> SpecimenTable:
    """How a LOINC system names its specimen: the hand table's spellings (columns.SPECIMEN_GROUPS,
    local words no shipped file gives), then each system of the shipped long names that none of
    them names, as a group of its own ("Sweat", "Saliva", "Bone marrow": used by ≥ 2 codes, no
    analyte's word, not "unspecified"), before the body fluids and blood; and the words that
    qualify a group: words of its systems in ≥ QUALIFIER_CODES codes that are no group's
    spelling and no analyte's word ("arterial", "venous", "capillary", "cord")."""
    hand = dict(SPECIMEN_GROUPS)
    base = SpecimenTable(tuple((fold(s).strip(), Specimen(g)) for g in _TEXT_GROUP_ORDER
                               for s in hand[g]), {}, liquid=frozenset(BLOOD_LIQUID))
    systems = Counter(fold(_system_of(n.split(" --")[0])).strip() for n in ranked_codes()["name"])
    analyte, spelled = _analyte_words(), {w for s, _ in base.spellings for w in s.split()}
    own, qualifying = set(), Counter()
    for system, codes in systems.items():
        words = [w for w in system.split() if w not in _SYSTEM_STOPWORDS]
        group = system_specimen(f" {system} ", base).group
        if group:
            qualifying.update({(group, w): codes for w in words
                               if w.isalpha() and len(w) >= 3 and w not in spelled | analyte})
        elif codes >= 2 and words and not set(words) & analyte and "unspecified" not in system:
            own.add(" ".join(words))
    before = [s for s in base.spellings if s[1].group not in ("fluid", "blood")]
    after = [s for s in base.spellings if s[1].group in ("fluid", "blood")]
    return SpecimenTable(tuple(before + [(o, Specimen(o)) for o in sorted(own)] + after),
                         {w: g for (g, w), n in qualifying.items() if n >= QUALIFIER_CODES},
                         liquid=base.liquid)


@functools.lru_cache(maxsize=1)
def _analyte_words() -> frozenset:
    """Words of the shipped codes' components, where a bracketed property shows where the
    component ends ("Chloride [Moles/volume] in Sweat")."""
    return frozenset(w for n in ranked_codes()["name"] if " [" in n
                     for w in fold(n.split(" [")[0]).split())


@functools.lru_cache(maxsize=1)
def row_specimen_table() -> SpecimenTable:
    """What a row's words may state: specimen_table less the spellings that in a label name an
    analyte ("RBC"), then the short names' system words (short_name_readings: "ur", "swt") and
    the German variant's systems (variant_systems), each as the specimen of its English system."""
    table = specimen_table()
    learned = [(word, system) for word, system in short_name_readings()[1].items()
               if word not in _TEXT_NOT_SPECIMEN and word not in _analyte_words()]
    learned += [(german.strip(), english) for german, english in variant_systems().items()]
    learned += _by_group_order(foreign_spellings())
    read = [(word, system_specimen_of(system)) for word, system in learned]
    return SpecimenTable(tuple([s for s in table.spellings if s[0] not in _TEXT_NOT_SPECIMEN]
                               + [(w, s) for w, s in read if s.group]), table.qualifiers,
                         _analyte_words(), table.liquid)


def _by_group_order(words: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(word, English spelling) pairs in the order the table tries groups: body fluids and blood
    last, so "liquido cefalorraquideo" reads as CSF, not as a body fluid."""
    last = {"fluid": 1, "blood": 2}
    return sorted(words, key=lambda pair: last.get(system_specimen_of(pair[1]).group, 0))


@functools.lru_cache(maxsize=1)
def _shipped_groups() -> pd.Series:
    """Each shipped code's specimen group (of its system), in ranked_codes' order."""
    return ranked_codes()["name"].map(lambda n: system_specimen_of(_system_of(n.split(" --")[0])).group)


@functools.lru_cache(maxsize=1)
def _group_codes() -> Counter:
    """Built-in codes per specimen group of their system (what a cut word's reading weighs)."""
    return Counter(_shipped_groups())


@functools.lru_cache(maxsize=4096)
def system_specimen_of(system: str) -> Specimen:
    """The specimen of a LOINC system in any spelling ("Ser/Plas", "Arterial blood", "SerPl")."""
    return system_specimen(fold(system.replace("/", " ").replace("SerPl", "Ser Pl")), specimen_table())


def specimen_group_of_system(system: str) -> str:
    """Specimen group of a LOINC system in any spelling."""
    return system_specimen_of(system).group


# --- a row's text ---------------------------------------------------------------------------

@functools.lru_cache(maxsize=1 << 14)
def text_axes(text: str) -> Axes:
    """What a lab label says about the LOINC axes ("Glucose, 24 hr Urine" → urine, 24H)."""
    words = fold(text)
    specimen = text_specimen(words) or _cut_specimen(str(text)) or _class_specimen(words)
    read = {"system": (specimen.group, specimen.said), "property": _text_properties(str(text), words),
            "timing": _text_timing(words), "method": _text_methods(words),
            "scale": _text_scale(words)}
    said = {axis: cue for axis, (value, cue) in read.items() if value}
    (_, (properties, _), (timing, _), (methods, _), (scale, _)) = read.values()
    return Axes(group=specimen.group, qualifier=specimen.qualifier, part=specimen.part,
                properties=properties, timing=timing, methods=methods, said=said, scale=scale)


def text_specimen(words: str) -> Specimen:
    """The specimen the folded text states (row_specimen_table), "Red/White Blood Cells" read
    as cells, not as blood, a compound's specimen head as its own word ("Sammelurin"), a
    British spelling as its American one ("faecal": fecal)."""
    table = row_specimen_table()
    words = _AMERICAN.sub("e", _BLOOD_CELLS.sub(" ", words))
    return read_specimen(split_compounds(words, _compound_heads(), table.unbent), table)


# British English writes "ae", "oe" where LOINC's American English writes "e" ("faecal",
# "oedema", "haemolysed"): benchmarks/results/british-spellings/RULE.md.
_AMERICAN = re.compile(r"(?:ae|oe)(?=[a-z])")


@functools.lru_cache(maxsize=1)
def _compound_heads() -> tuple[str, ...]:
    return compound_heads(row_specimen_table())


CLASS_CODES = 10  # a class teaches its specimen from this many shipped codes or more


@functools.lru_cache(maxsize=1)
def class_specimens() -> dict[str, str]:
    """Folded LOINC class name → the specimen group ≥ DOMINANT of its shipped codes share
    ("ua" → urine, "sero" → blood): a row that names the class names that specimen."""
    classes = ranked_codes()["class"].map(lambda c: fold(c).strip())
    found = {}
    for name, of_class in _shipped_groups().groupby(classes):
        counts = of_class.value_counts()
        if name and len(of_class) >= CLASS_CODES and counts.index[0] \
                and counts.iloc[0] >= DOMINANT * len(of_class):
            found[name] = counts.index[0]
    return found


def _class_specimen(words: str) -> Specimen:
    """The specimen of a class the row names beside other words ("RBC:UA"; a row that is only
    "UA" may mean uric acid). benchmarks/results/class-specimens/RULE.md"""
    tokens = words.split()
    if len(tokens) < 2:
        return Specimen()
    named = next((t for t in tokens if t in class_specimens()), "")
    return Specimen(class_specimens()[named], "", named.upper()) if named else Specimen()


def _cut_specimen(text: str) -> Specimen:
    """The specimen of a cut word ending the row ("Kalium i.U."), said as written."""
    spelling, written = cut_spelling(text, row_specimen_table(), _group_codes().__getitem__)
    found = read_specimen(f" {spelling} ", row_specimen_table()) if spelling else Specimen()
    return Specimen(found.group, found.qualifier, written, found.part) if found else found


def _text_properties(text: str, words: str) -> tuple[frozenset, str]:
    for phrase in _BRACKETS.findall(text):  # a LOINC-style name states its property exactly
        code = bracket_properties().get(fold(phrase))
        if code:
            return frozenset({code}), f"[{phrase.strip()}]"
    tokens = words.split()
    for token, after in zip(tokens, tokens[1:] + [""]):
        # A property code ("mcnc" of "SerPl-mCnc") is the most precise cue; followed by a
        # numeral it names a subtype ("HSV type 1"), not the property.
        if (token in property_codes() and token not in _CUE_WORDS
                and token not in component_word_codes() and not _NUMERAL.fullmatch(after)):
            return frozenset({property_codes()[token]}), token
    written = text.split()
    for at, token in enumerate(written):
        # A unit written in the text, read as a unit column is ("mg/dL"); a screen's cutoff
        # ("cutoff 40 ng/mL") is no unit of the result.
        unit = token.strip("()[]{},;:")
        if any(w.strip("(").lower() in _CUTOFF_WORDS for w in written[max(0, at - 2):at]):
            continue
        if "/" in unit and (properties := parse_unit(unit).properties):
            return properties, unit
    found, cues = set(), []
    for spellings, properties, meaning in PROPERTY_CUES:
        hit = next((s for s in spellings if s in tokens), None)
        if hit:
            found |= properties
            cues.append(f"{hit} ({meaning})")
    return frozenset(found), ", ".join(cues)


@functools.lru_cache(maxsize=1)
def component_word_codes() -> frozenset:
    """Folded PROPERTY codes that LOINC also writes as a word of a component ("time" of
    "Prothrombin time (PT)", "type" of "Blood product type"), learned from the built-in long
    names. In a row's text such a word names the analyte or the method as often as the property
    ("HIV-1 RNA Real Time PCR", "B-Type Natriuretic Peptide"), and where it does name the
    property the analyte's own name says so: it states no property (only a bracket, a unit or
    a cue word does; benchmarks/results/component-words/RULE.md)."""
    words = {word for component in builtin_components() for word in fold(component).split()}
    return frozenset(code for code in property_codes() if code in words and code not in _CUE_WORDS)


@functools.lru_cache(maxsize=1)
def _hours() -> re.Pattern:
    """"24 hr", "24h", "24-hour", "24 horas"; also hours "post" or "after" something ("1h p 50 g
    Glc"): they time a challenge sample, and the timing axis compares them with a challenge
    code's challenge hours (benchmarks/results/challenge-hours/RULE-2.md)."""
    words = "|".join(sorted({*_HOUR_WORDS, *hour_words()}, key=len, reverse=True))
    # "1.0Hr" folds to "1 0hr": the zeros after a decimal point are no hours of their own; and
    # "1,5 Stunden" folds to "1 5 stunden": a number right after a number is a decimal's
    # fraction, no hours either.
    return re.compile(rf"(?<!\d\s)\b(\d{{1,2}})(?: 0+(?=\s*(?:{words})\b))?\s*-?\s*(?:{words})\b")


def _text_timing(words: str) -> tuple[str, str]:
    hours = _hours().search(words)
    if hours:
        return f"{int(hours.group(1))}H", hours.group(0).strip()
    point = next((w for w in words.split() if w in _POINT_WORDS), "")
    return ("Pt", point) if point else ("", "")


def _text_scale(words: str) -> tuple[str, str]:
    """A quantitative result stated as LOINC's short names write it ("Mumps IgG Ser Qn")."""
    word = next((w for w in words.split() if w in _QUANTITATIVE_WORDS), "")
    return ("Qn", word) if word else ("", "")


@functools.lru_cache(maxsize=1)
def property_scales() -> dict[str, str]:
    """PROPERTY → its scale, "Qn" or "Ord", learned by code from the German variant's SCALE
    (the only shipped source of it): a property whose codes (≥ 3) are ≥ 90 % quantitative, or
    ≥ 90 % ordinal, nominal, free text or document ("PrThr", "Imp"). Titers (semi-quantitative),
    susceptibilities (ordinal or quantitative) and rare properties say nothing."""
    variant = linguistic_variant()
    return _agreed(variant["code"].map(_english_properties()), variant["scale"].map(_VARIANT_SCALES))


def _text_methods(words: str) -> tuple[frozenset, str]:
    table = method_words()
    found, cues = set(), []
    for token in words.split():
        stem = METHOD_SYNONYMS.get(token, token)[:5]
        if len(token) >= 4 or token in METHOD_SYNONYMS:
            if stem in table:
                found |= table[stem]
                cues.append(token)
    return frozenset(found), " ".join(cues)
