"""Drug strings → structure: ingredients, strengths, dose form, brand, pack quantity.

Two kinds of text are parsed by the same rules: local pharmacy strings ("budesonide 0.5 mg/2 mL
Neb Suspension", "Lodosyn 5O MG", "Defibrotide <IND> 80 mg / mL - 2.5 mL Amp") and RxNorm-style
concept names ("Brimonidine tartrate 2 MG/ML / Timolol 5 MG/ML Ophthalmic Solution [Combigan]").

Strengths are normalised through pint so that "0.5 mg/2 mL" and "0.25 MG/ML" compare equal:
masses become MG, volumes ML, units (IU, "u") UNT, milliequivalents MEQ, doses/puffs ACTUAT,
time HR. A percentage stays "%" and is compared as w/v (1 % = 10 MG/ML) or w/w (1 % = 0.01 MG/MG)
by `strengths_agree`, because local strings never say which.
"""
from __future__ import annotations

import csv
import functools
import re
from dataclasses import dataclass
from importlib import resources

import pint

from ...read.normalize import LETTER, LETTER_OR_DIGIT
from .names import in_one_spelling, one_spelling

# --- units ----------------------------------------------------------------------------------------

# Written unit → pint unit. Keys are lower-case; anything not here is not a unit.
_UNIT_WORDS = {
    "mcg": "microgram", "µg": "microgram", "ug": "microgram", "microgram": "microgram",
    "micrograms": "microgram",
    "mg": "milligram", "milligram": "milligram", "milligrams": "milligram",
    "g": "gram", "gm": "gram", "gms": "gram", "gr": "gram", "gram": "gram", "grams": "gram",
    "kg": "kilogram",
    "ml": "milliliter", "cc": "milliliter", "l": "liter", "liter": "liter", "litre": "liter",
    "unit": "UNT", "units": "UNT", "u": "UNT", "iu": "UNT", "unt": "UNT", "usp": "UNT",
    "mu": "MUNT", "mil": "MUNT",  # million units ("Interferon Alfa 2A 3 mu")
    "meq": "MEQ", "mmol": "MMOL",
    "actuat": "ACTUAT", "actuation": "ACTUAT", "actuations": "ACTUAT", "dose": "ACTUAT",
    "doses": "ACTUAT", "puff": "ACTUAT", "puffs": "ACTUAT", "spray": "ACTUAT",
    "inhalation": "ACTUAT", "inh": "ACTUAT",
    "hr": "hour", "hrs": "hour", "hour": "hour", "hours": "hour", "h": "hour", "day": "day",
    "days": "day",
}
# Canonical unit per dimension, in the order tried: the first that converts wins.
_CANONICAL = [("milligram", "MG"), ("UNT", "UNT"), ("MEQ", "MEQ"), ("MMOL", "MMOL"),
              ("milliliter", "ML"), ("ACTUAT", "ACTUAT"), ("hour", "HR")]
_DENOMINATOR_UNITS = {"ML", "MG", "ACTUAT", "HR"}


@functools.lru_cache(maxsize=1)
def unit_registry() -> pint.UnitRegistry:
    """pint's registry plus the drug units RxNorm uses (built once: it takes a moment)."""
    registry = pint.UnitRegistry()
    registry.define("UNT = [drug_unit]")
    registry.define("MUNT = 1e6 * UNT")
    registry.define("MEQ = [milliequivalent]")
    registry.define("MMOL = [millimole]")
    registry.define("ACTUAT = [actuation]")
    return registry


def canonical_unit(word: str) -> tuple[float, str] | None:
    """(factor, canonical unit) for a written unit: "mcg" → (0.001, "MG"); None when not a unit."""
    pint_name = _UNIT_WORDS.get(word.lower())
    if pint_name is None:
        return None
    registry = unit_registry()
    quantity = registry.Quantity(1.0, pint_name)
    for target, label in _CANONICAL:
        try:
            return float(quantity.to(target).magnitude), label
        except pint.DimensionalityError:
            continue
    return None


@dataclass(frozen=True)
class Strength:
    """One ingredient's strength: `value` in `unit` ("MG", "MG/ML", "UNT/ML", "MG/ACTUAT", "%",
    or "" for a bare number such as "Tracleer 125"), and the text it came from."""

    value: float
    unit: str
    text: str = ""

    def __str__(self) -> str:
        return f"{self.value:g} {self.unit}".strip()


def make_strength(value: float, unit_word: str | None, denominator: tuple[float, str] | None,
                  text: str) -> Strength:
    """Normalise value+unit(/count+unit) with pint: (0.5, "mg", (2, "mL")) → 0.25 MG/ML."""
    if unit_word is None:
        return Strength(value, "", text)
    if unit_word == "%":
        return Strength(value, "%", text)
    factor, unit = canonical_unit(unit_word) or (1.0, unit_word.upper())
    value *= factor
    if denominator is not None:
        count, den_word = denominator
        den_factor, den_unit = canonical_unit(den_word) or (1.0, den_word.upper())
        value /= count * den_factor
        unit = f"{unit}/{den_unit}"
    return Strength(value, unit, text)


def _close(a: float, b: float, tolerance: float = 0.02) -> bool:
    """Equal within 2 %: RxNorm rounds (1.25 mg/3 mL is written 0.417 MG/ML)."""
    return abs(a - b) <= tolerance * max(abs(a), abs(b), 1e-12)


def strengths_agree(source: Strength, concept: Strength) -> bool:
    """Whether a source strength states the concept's strength.

    Units must match after normalisation; a percentage matches MG/ML (w/v) or MG/MG (w/w); a bare
    number matches the concept's numerator in MG or in MCG ("Symbicort 160/4.5" ~ 0.16 MG/ACTUAT).
    """
    if source.unit == concept.unit and source.unit != "%":
        return _close(source.value, concept.value)
    if source.unit and concept.unit == f"{source.unit}/ACTUAT":
        # An inhaler's or spray's amount is per actuation ("Astelin 137mcg" ~ 0.137 MG/ACTUAT).
        return _close(source.value, concept.value)
    if {source.unit, concept.unit} == {"MG/MG", "MG/ML"}:
        # RxNorm writes creams and gels in mg/g as MG/ML (density taken as 1 g/mL).
        scale = 1000.0 if source.unit == "MG/MG" else 0.001
        return _close(source.value * scale, concept.value)
    if source.unit == "%":
        return ((concept.unit.endswith("/ML") and _close(source.value * 10, concept.value))
                or (concept.unit == "MG/MG" and _close(source.value / 100, concept.value))
                or (concept.unit == "%" and _close(source.value, concept.value)))
    if source.unit == "":
        numerator = concept.unit.split("/")[0]
        scales = (1.0, 1000.0) if numerator == "MG" else (1.0,)
        return any(_close(source.value, concept.value * s) for s in scales)
    # An amount written for a concentration's numerator ("Budesonide 0.5mg" ~ 0.5 MG/ML) is not a
    # statement of the concentration: it neither agrees nor contradicts.
    return False


def strength_comparable(source: Strength, concept: Strength) -> bool:
    """Whether the two are in the same dimension, so disagreement is a contradiction."""
    if source.unit == "" or concept.unit == "":
        return True
    if {source.unit, concept.unit} == {"MG/MG", "MG/ML"}:
        return True
    if source.unit == "%":
        return concept.unit.endswith("/ML") or concept.unit in {"MG/MG", "%"}
    return source.unit == concept.unit


# --- dose forms and routes --------------------------------------------------------------------------

# Written form, route and release words and phrases → coarse form groups, from a shipped table
# whose header says where each comes from. A concept's RxNorm dose form ("Oral Tablet",
# "Injectable Solution") is read through the same table, so both sides meet in the groups.
FORM_TABLE = "data/drugs/dose_forms.tsv"
_PHRASE_JOINERS = re.compile(r"[\s-]+")


@functools.lru_cache(maxsize=1)
def form_words() -> dict[tuple[str, ...], frozenset[str]]:
    """Lower-case words of a written form ("susp",), ("gastro", "resistant") → its form groups."""
    with (resources.files("codemap") / FORM_TABLE).open(encoding="utf-8") as handle:
        rows = csv.DictReader((line for line in handle if not line.startswith("#")),
                              delimiter="\t")
        return {tuple(_PHRASE_JOINERS.split(row["written"])): frozenset(row["groups"].split())
                for row in rows}


# Groups that say what the product is; "oral", "extended" and "liquid" qualify a form but on
# their own do not contradict another group (an oral solution is still oral, an ER tab a tablet).
_QUALIFIER_GROUPS = {"oral", "extended", "delayed", "liquid", "chewable", "powder"}

# RxNorm dose form names, longest first, for finding the form at the end of a concept name.
RXNORM_DOSE_FORMS = sorted([
    "Oral Tablet", "Oral Capsule", "Extended Release Oral Tablet", "Extended Release Oral Capsule",
    "Delayed Release Oral Tablet", "Delayed Release Oral Capsule", "Chewable Tablet",
    "Disintegrating Oral Tablet", "Oral Solution", "Oral Suspension", "Oral Powder",
    "Powder for Oral Suspension", "Powder for Oral Solution", "Injectable Solution",
    "Injectable Suspension", "Injection", "Prefilled Syringe", "Pen Injector", "Cartridge",
    "Ophthalmic Solution", "Ophthalmic Suspension", "Ophthalmic Ointment", "Ophthalmic Gel",
    "Metered Dose Inhaler", "Dry Powder Inhaler", "Inhalant Powder", "Inhalant Solution",
    "Metered Dose Nasal Spray", "Nasal Spray", "Nasal Ointment", "Nasal Solution",
    "Topical Ointment", "Topical Cream", "Topical Gel", "Topical Lotion", "Topical Solution",
    "Topical Spray", "Topical Foam", "Medicated Patch", "Transdermal System", "Vaginal Cream",
    "Vaginal Gel", "Vaginal Tablet", "Vaginal System", "Vaginal Ring", "Rectal Suppository",
    "Enema", "Otic Solution", "Otic Suspension", "Mucosal Spray", "Sublingual Tablet",
    "Buccal Tablet", "Oral Gel", "Oral Lozenge", "Shampoo", "Mouthwash", "Oral Film",
], key=len, reverse=True)

# Salts and modifiers dropped from ingredient names on both sides ("Maprotiline HCl" ~
# "Maprotiline Hydrochloride" ~ "maprotiline").
_SALT_WORDS = frozenset({
    "hcl", "hydrochloride", "dihydrochloride", "sodium", "na", "potassium", "calcium",
    "magnesium", "sulfate", "sulphate", "tartrate", "bitartrate", "succinate", "succ", "maleate",
    "mesylate", "besylate", "acetate", "citrate", "phosphate", "fumarate", "bromide", "chloride",
    "hbr", "hydrobromide", "disodium", "dipropionate", "propionate", "furoate", "valerate",
    "monohydrate", "trihydrate", "anhydrous", "usp", "tromethamine", "etabonate", "medoxomil",
    "cilexetil", "dipivoxil", "hyclate", "lactate", "gluconate", "estolate", "ethylsuccinate",
    "decanoate", "pamoate", "xinafoate", "bisulfate", "nitrate", "oxalate", "hemifumarate",
    "disoproxil",
})
# Words that are packaging, ordering or study noise, never part of a drug name.
_NOISE_WORDS = {
    "ind", "nf", "ea", "each", "bulk", "premix", "frozen", "froz", "bottle", "bag", "vial",
    "amp", "kit", "send", "dummy", "pkg", "for", "and", "with", "in", "of", "the", "study",
    "drug", "replacement", "given", "or", "x", "ns", "pm", "soln", "solution", "drops", "drop",
    "sub", "q", "hour", "hr", "release", "immediate", "oncology", "critical", "care", "non",
    "formulary", "per", "dose", "inhalation", "desensitization", "sugar", "free", "sf",
    "disposable", "fortified", "pack", "gtt", "gtts", "diagnostic", "depot", "breath", "activated", "day", "days",
}
# Words after a bare number that make it a count of items, not a strength ("Combigan 1 Drop").
_COUNT_WORDS = {"drop", "drops", "gtt", "gtts", "ea", "each", "pack", "packet", "piece", "pieces"}
_GREEK = {"alpha": "alfa"}


def _name_key(word: str) -> str:
    word = word.lower()
    return _GREEK.get(word, word)


# --- parsing ---------------------------------------------------------------------------------------

_NUMBER = r"\d[\d,]*(?:\.\d+)?|\.\d+"
# Words of any script ("Paracétamol" is one word; µ is a letter).
_TOKEN = re.compile(rf"(?P<num>{_NUMBER})|(?P<pct>%)|(?P<word>{LETTER}{LETTER_OR_DIGIT}*)|(?P<sep>[/\-+:;])")
_TYPO_O = re.compile(rf"(?<=\d)[oO](?=\s|$|{LETTER}{{1,3}}\b|[/\-])")
_BRACKET = re.compile(r"\[([^\]]+)\]\s*$")
_PACK = re.compile(r"^\{(.*)\}\s*(pack|kit)\b", re.IGNORECASE)
# Counts, not strengths: a bare number in parentheses ("Cryselle (28)", "Emend 125 mg (1)") is a
# pack or dose count, and "x 2" a number of items.
_COUNTS = re.compile(rf"\(\s*\d+\s*\)|(?<![\w.])[xX]\s*\d+\b(?!\s*(?:[%.]|{LETTER}))")
_QUANT_PREFIX = re.compile(rf"^\s*(\d+(?:\.\d+)?)\s+(ML|ACTUAT|HR|DAY|MG|UNT)\s+(?={LETTER}|{{)")


@dataclass(frozen=True)
class DrugParse:
    """What a drug string says. Empty tuples / None where it says nothing."""

    text: str
    words: tuple[str, ...]  # lower-case name words (ingredients, brands) without units or noise
    ingredients: tuple[str, ...]  # concept side: salt-free ingredient names; source side: empty
    strengths: tuple[Strength, ...]
    forms: frozenset[str]  # coarse form groups ("tablet", "injection", "ophthalmic", …)
    dose_form: str = ""  # the RxNorm dose form named in a concept ("Oral Tablet"), if any
    brand: str = ""  # the [bracketed] brand of a concept name
    quantity: Strength | None = None  # pack or container size ("2.5 mL", "60 ACTUAT")

    @property
    def product_forms(self) -> frozenset[str]:
        """Form groups that name what the product is (without qualifiers like "oral")."""
        return self.forms - _QUALIFIER_GROUPS


def parse_drug(text: str, *, concept: bool = False) -> DrugParse:
    """Parse a local drug string, or with `concept=True` an RxNorm-style concept name (whose
    ingredients are then listed); never raises."""
    text = text or ""
    body = text.strip()
    brand = ""
    match = _BRACKET.search(body)
    if match:
        brand, body = match.group(1).strip(), body[:match.start()].strip()
    pack = _PACK.match(body)
    if pack:
        # A pack's strengths are its components'; "{21 (A 1 MG Oral Tablet) / 7 (Inert …) }".
        body = re.sub(r"\b\d+\s*\(", "(", pack.group(1)).replace("(", " ").replace(")", " ")
        body = re.sub(r"\bInert Ingredients\b.*?(?=/|$)", "", body)
    quantity = None
    quant = _QUANT_PREFIX.match(body)
    if quant:
        quantity = make_strength(float(quant.group(1)), quant.group(2).lower(), None, quant.group(0).strip())
        body = body[quant.end():]
    dose_form = _find_dose_form(body)
    ingredients: tuple[str, ...] = ()
    if concept:
        ingredients = _concept_ingredients(body, dose_form)
    body = _TYPO_O.sub("0", body.replace("<", " ").replace(">", " ").replace("*", " "))
    body = _COUNTS.sub(" ", body)
    tokens = [(m.lastgroup, m.group()) for m in _TOKEN.finditer(body)]
    strengths, volumes, used = _scan_strengths(tokens)
    if concept:
        # RxNorm writes every strength with its unit: a bare number belongs to a name
        # ("Vitamin B 12", "Polyethylene Glycol 400", "interferon beta-1b").
        strengths = [s for s in strengths if s.unit]
    if quantity is None and volumes:
        quantity = volumes[0]
    words, forms, in_form = [], set(), set()
    for position, (kind, value) in enumerate(tokens):
        if kind != "word" or position in used or position in in_form:
            continue
        span, groups = _form_at(tokens, position, used)
        forms |= groups
        in_form.update(range(position, position + span))
        lower = value.lower()
        if span or lower in _NOISE_WORDS or lower in _UNIT_WORDS or len(lower) < 2:
            continue
        words.append(_name_key(lower))
    if dose_form:
        forms |= {g for w in dose_form.lower().split() for g in form_words().get((w,), ())}
    return DrugParse(text=text, words=tuple(words), ingredients=ingredients,
                     strengths=tuple(strengths), forms=frozenset(forms), dose_form=dose_form,
                     brand=brand, quantity=quantity)


def ingredient_key(name: str) -> tuple[str, ...]:
    """Salt-free lower-case words of an ingredient name: "Maprotiline Hydrochloride" → ("maprotiline",)."""
    words = [_name_key(w) for w in re.findall(f"{LETTER}{LETTER_OR_DIGIT}*", name)]
    kept = tuple(w for w in words if w not in _SALT_WORDS and w not in _NOISE_WORDS and len(w) > 1)
    return kept or tuple(words)


def in_one_name(words: tuple[str, ...]) -> tuple[str, ...]:
    """Lower-case name words with an ingredient's international and US names written alike, salt
    words aside (codemap.domains.drug.names): ("acetaminophen",) and ("paracetamol",) read the same."""
    return in_one_spelling(words, one_spelling(_SALT_WORDS))


def written_words() -> frozenset[str]:
    """Lower-case words a drug string writes for units, dose forms, routes and release types
    ("mg", "tab", "susp", "gastro"): pharmacy words, not words of the list's own language."""
    return frozenset(_UNIT_WORDS) | {word for phrase in form_words() for word in phrase}


def _form_at(tokens: list[tuple[str, str]], start: int, used=frozenset()) -> tuple[int, frozenset]:
    """(tokens spanned, form groups) of the longest written form (form_words) that starts at token
    `start`: ("gastro", "-", "resistant") spans 3 tokens; (0, ∅) where none does."""
    table, words, ends, i = form_words(), [], [], start
    longest = max(map(len, table))
    while i < len(tokens) and tokens[i][0] == "word" and i not in used and len(words) < longest:
        words.append(tokens[i][1].lower())
        ends.append(i + 1)
        i += 2 if tokens[i + 1:i + 2] == [("sep", "-")] else 1
    for n in range(len(words), 0, -1):
        if tuple(words[:n]) in table:
            return ends[n - 1] - start, table[tuple(words[:n])]
    return 0, frozenset()


def _find_dose_form(body: str) -> str:
    lower = body.lower()
    for form in RXNORM_DOSE_FORMS:
        if lower.endswith(form.lower()):
            return form
    return ""


def _concept_ingredients(body: str, dose_form: str) -> tuple[str, ...]:
    if dose_form:
        body = body[: len(body) - len(dose_form)]
    parts = re.split(r"\s/\s", body)
    names = []
    for part in parts:
        name = re.split(rf"\s(?:{_NUMBER})\s", f" {part.strip()} ", maxsplit=1)[0].strip()
        if name and name not in names:
            names.append(name)
    return tuple(names)


def _denominator(word: str | None, counted: bool) -> bool:
    """Whether a written unit can be a strength's denominator: a volume, actuation, time, or a
    mass ("mg/g", "MG/MG"); but a mass under a gram with its own number ("5mcg/1mg") makes two
    strengths, not a ratio."""
    found = canonical_unit(word) if word and word != "%" else None
    if not found or found[1] not in _DENOMINATOR_UNITS:
        return False
    return found[1] != "MG" or found[0] >= 1000 or not counted


def _scan_strengths(tokens: list[tuple[str, str]]) -> tuple[list[Strength], list[Strength], set[int]]:
    """Find strength expressions in the token stream.

    Handles lists sharing a unit ("600-200-300 mg", "2.5/5 mg", "0.3-30 mg-mcg"), ratios
    ("0.5 mg/2 mL", "200-5mcg/actuation", "9.5 mg/24 hour"), and percentages ("0.2-0.5%"). A bare
    volume ("30ml", "- 2.5 mL") is a container size, returned separately.
    Returns (strengths, volumes, token positions used).
    """
    strengths: list[Strength] = []
    volumes: list[Strength] = []
    used: set[int] = set()
    i = 0
    n = len(tokens)

    def unit_at(j: int) -> str | None:
        if j < n and tokens[j][0] == "pct":
            return "%"
        if j < n and tokens[j][0] == "word" and tokens[j][1].lower() in _UNIT_WORDS:
            return tokens[j][1]
        return None

    while i < n:
        if tokens[i][0] != "num":
            i += 1
            continue
        start = i
        items: list[list] = []  # [value, unit or None]
        while i < n and tokens[i][0] == "num":
            value = float(tokens[i][1].replace(",", ""))
            unit = unit_at(i + 1)
            items.append([value, unit])
            i += 2 if unit else 1
            if i < n and tokens[i][0] == "sep" and tokens[i][1] in "-/" and i + 1 < n \
                    and tokens[i + 1][0] == "num":
                # "mg/2 mL" is a ratio, not another item: stop the list there.
                if tokens[i][1] == "/" and unit and unit != "%" and _denominator(unit_at(i + 2), True):
                    break
                i += 1
                continue
            break
        # One unit per item written after the list: "0.3-30 mg-mcg".
        if len(items) > 1 and items[-1][1] and not any(u for _, u in items[:-1]):
            units, j = [items[-1][1]], i
            while j + 1 < n and tokens[j] == ("sep", "-") and unit_at(j + 1):
                units.append(unit_at(j + 1))
                j += 2
            if len(units) == len(items):
                for item, unit in zip(items, units):
                    item[1] = unit
                i = j
        denominator = None
        if i + 1 < n and (tokens[i] == ("sep", "/") or (tokens[i][0] == "word" and tokens[i][1].lower() == "per")):
            count, j = 1.0, i + 1
            if tokens[j][0] == "num":
                count, j = float(tokens[j][1].replace(",", "")), j + 1
            den = unit_at(j)
            if _denominator(den, j > i + 2) and count > 0:
                denominator = (count, den)
                i = j + 1
        # Items without their own unit share the last one given ("600-200-300 mg").
        shared = next((u for _, u in reversed(items) if u), None)
        text = " ".join(v for _, v in tokens[start:i])
        counted = i < n and (_form_at(tokens, i)[0] > 0 or (
            tokens[i][0] == "word" and tokens[i][1].lower() in _COUNT_WORDS))
        for value, unit in items:
            unit = unit or shared
            if not unit and (counted or value == 0):
                continue  # "1 Capsule", "2 tab" count doses; "0" is an ordering artefact
            strength = make_strength(value, unit, denominator, text)
            if strength.unit == "ML" and denominator is None:
                volumes.append(strength)
            elif strength.unit in {"ACTUAT", "HR"}:
                continue
            else:
                strengths.append(strength)
        used.update(range(start, i))
        i = max(i, start + 1)
    return strengths, volumes, used
