"""Lab units → UCUM → the LOINC properties they can measure (mass vs substance concentration…).

Tables come from NLM/LHNCBC (codemap/data/units/SOURCE.md): local spellings → UCUM, and the
units each LOINC PROPERTY accepts. Units the tables do not know are parsed by dimension
(mass / volume → MCnc, mol / volume → SCnc, U / volume → CCnc, count / volume → NCnc, …), which is
how the usual local spellings (mg/dl, mmol/l, 10^3/uL, x10E9/L, sec, ratio) are read.
"""
from __future__ import annotations

import csv
import functools
import re
from dataclasses import dataclass
from importlib import resources

_DATA = "data/units"

# Dimension of a unit atom (after prefix removal). Why: a table can never list every spelling.
_MASS = {"g", "gm", "gram", "grams"}
_SUBSTANCE = {"mol", "eq"}
_VOLUME = {"l", "dl", "ml", "ul", "fl", "nl", "pl", "cl"}
_ACTIVITY = {"u", "iu", "[iu]", "kat", "units", "unit"}
_COUNT = {"#", "{#}", "{cells}", "cells", "{count}", "count", "{rbc}", "{wbc}", "1"}
_TIME = {"s", "sec", "secs", "second", "seconds", "min", "mins", "minute", "minutes", "h", "hr",
         "hrs", "hour", "hours", "d", "day", "days"}
_RATIO = {"ratio", "{ratio}", "{index}", "index", "{titer}", "titer", "{inr}", "inr"}
_PREFIXES = ("m", "u", "µ", "μ", "n", "p", "f", "k", "d", "c", "mc")
_MASS_PREFIXED = {p + "g" for p in _PREFIXES} | {"mcg"}
_SUBSTANCE_PREFIXED = {p + s for p in _PREFIXES for s in ("mol", "eq")}
_ACTIVITY_PREFIXED = {p + s for p in _PREFIXES for s in ("u", "iu", "[iu]", "kat")}
_VOLUME_PREFIXED = _VOLUME


@dataclass(frozen=True)
class ParsedUnit:
    """A source unit read: its UCUM form (best effort) and the LOINC properties it fits."""

    raw: str
    ucum: str
    properties: frozenset[str]
    # Of those, the ones only the LHNCBC table lists where the unit's own dimensions say what it
    # measures: "%" reads as a fraction, while the table lists every property some lab reported
    # in "%" (mass concentration too). Such a property neither fits nor contradicts the unit
    # (UnitScorer).
    loose: frozenset[str] = frozenset()


def normalize_unit(raw: str) -> str:
    """Local spelling → UCUM-like text: 10^3/uL and x10E9/L → 10*3/uL, 10*9/L; sec → s; µ → u."""
    text = raw.strip().replace("µ", "u").replace("μ", "u").replace(" ", "")
    text = re.sub(r"^(?:x|X)?10(?:\^|\*|e|E)(\d+)", r"10*\1", text)
    text = re.sub(r"(?i)^k/(u|m)l$", r"10*3/\1L", text)  # K/uL: thousands per µL
    text = re.sub(r"(?i)^m/(u|m)l$", r"10*6/\1L", text)  # M/uL: millions per µL
    text = re.sub(r"(?i)\bsecs?\b|\bseconds?\b", "s", text)
    # US spellings of UCUM atoms: mmHg, the "mc" micro prefix (mcL, mcg), mm3 (a microlitre),
    # cc, "/hr", and counts per microscope field (benchmarks/results/unit-spellings/RULE.md).
    text = re.sub(r"(?i)^mmhg$", "mm[Hg]", text)
    text = re.sub(r"(?<![a-z])mc(?=(?:g|l|mol|eq|u)\b)", "u", text, flags=re.IGNORECASE)
    text = re.sub(r"(?i)(?<![a-z])mm3$", "uL", text)
    text = re.sub(r"(?i)(?<![a-z])(?:cc|cm3)$", "mL", text)
    text = re.sub(r"(?i)/hrs?$", "/h", text)
    text = re.sub(r"(?i)^#?/(hpf|lpf)$", lambda m: f"/[{m.group(1).upper()}]", text)
    return text


def parse_unit(raw: str) -> ParsedUnit:
    """Read a unit; `properties` is empty when it is blank or not understood. A unit not
    understood whose first word is a ratio or "%" that is ("mg/L FEU", "mg/g creat", "% of
    total Hb") is read as that word: the rest annotates it, as UCUM's braces do."""
    raw = (raw or "").strip()
    if not raw or raw.lower() in {"unit", "units"}:  # a bare "units" names no dimension
        return ParsedUnit(raw, "", frozenset())
    read = _parse(raw)
    first = raw.split()[0]
    if not read.properties and first != raw and ("/" in first or first == "%"):
        annotated = _parse(first)
        if annotated.properties:
            return ParsedUnit(raw, annotated.ucum, annotated.properties, annotated.loose)
    return read


def _parse(raw: str) -> ParsedUnit:
    tables = _tables()
    ucum = tables.to_ucum.get(raw.lower()) or normalize_unit(raw)
    properties = tables.properties.get(ucum.lower()) or tables.properties.get(raw.lower())
    dimension = _by_dimension(ucum)
    found = set(properties or ()) | dimension
    return ParsedUnit(raw, ucum, frozenset(found), frozenset(found - dimension) if dimension else frozenset())


def _by_dimension(ucum: str) -> set[str]:
    """LOINC properties from a numerator/denominator reading of the unit."""
    text = ucum.lower()
    if text in {"%", "percent", "pct"}:
        return {"NFr", "MFr", "VFr", "SFr", "CFr", "ACnc", "RelRto"}
    if text in _RATIO or text == "":
        return {"Ratio", "RelRto", "Rto", "MRto", "SRto", "Titr"} if text else set()
    if text in _TIME:
        return {"Time"}
    top, _, bottom = text.partition("/")
    top = re.sub(r"^10\*\d+", "#", top) or "#"
    kind = _atom_kind(top)
    if not bottom:
        return {"Mass": {"Mass"}, "substance": {"Sub"}, "count": {"Num"}, "activity": {"CAct"},
                "volume": {"Vol"}}.get(kind, set())
    if kind == "count" and re.fullmatch(r"100(?:\{?[a-z]*\}?)", bottom):
        return {"NFr"}  # "#/100 WBC": of every hundred cells, a fraction, not a rate
    below = _atom_kind(re.sub(r"^10\*\d+", "", bottom))
    if below == "volume":
        return {"mass": {"MCnc"}, "substance": {"SCnc"}, "activity": {"CCnc", "ACnc"},
                "count": {"NCnc"}}.get(kind, set())
    if below == "time" or re.fullmatch(r"\(?\d+\.?\w*\)?|24h|24hr|d", bottom):
        return {"mass": {"MRat"}, "substance": {"SRat"}, "activity": {"CRat"},
                "count": {"NRat"}, "volume": {"VRat"}}.get(kind, set())
    if kind == below and kind:
        return {"mass": {"MFr", "MRto"}, "substance": {"SFr", "SRto"}}.get(kind, {"Ratio"})
    if below == "mass":
        return {"mass": {"MCnt"}, "substance": {"SCnt"}, "activity": {"CCnt"}}.get(kind, set())
    return set()


def _atom_kind(atom: str) -> str:
    atom = atom.strip("()")
    if atom in _MASS or atom in _MASS_PREFIXED:
        return "mass"
    if atom in _SUBSTANCE or atom in _SUBSTANCE_PREFIXED:
        return "substance"
    if atom in _ACTIVITY or atom in _ACTIVITY_PREFIXED or atom.endswith("[iu]"):
        return "activity"
    if atom in _VOLUME_PREFIXED:
        return "volume"
    if atom in _COUNT:
        return "count"
    if atom in _TIME:
        return "time"
    return ""


@dataclass(frozen=True)
class _Tables:
    to_ucum: dict[str, str]  # lower-cased local spelling → UCUM
    properties: dict[str, frozenset[str]]  # lower-cased UCUM or local unit → LOINC properties


@functools.lru_cache(maxsize=1)
def _tables() -> _Tables:
    folder = resources.files("codemap") / _DATA
    to_ucum: dict[str, str] = {}
    with (folder / "unit_to_ucum.csv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            to_ucum.setdefault(row["UNIT"].strip().lower(), row["UCUM"].strip())
    properties: dict[str, set[str]] = {}
    with (folder / "unit_ucum_properties.csv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            prop = row["LOINC_PROPERTY"].strip()
            # The table lists the UCUM units a property accepts; its raw column holds looser
            # examples (mg/dL under MCnc beside g/L), so only the UCUM column is trusted.
            unit = row["ucum unit"].strip().lower()
            if prop and unit:
                properties.setdefault(unit, set()).add(prop)
    return _Tables(to_ucum, {u: frozenset(p) for u, p in properties.items()})


@functools.lru_cache(maxsize=1)
def example_units() -> dict[str, tuple[str, ...]]:
    """LOINC code → its example UCUM units (built-in subset only, LOINC 2.67)."""
    folder = resources.files("codemap") / _DATA
    found: dict[str, tuple[str, ...]] = {}
    with (folder / "loinc_example_units.tsv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            found[row["code"]] = tuple(u for u in row["units"].split("|") if u)
    return found
