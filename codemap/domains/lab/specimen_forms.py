"""How a row writes its specimen besides the specimen table's own words: in another language's
word, as the head of a compound, or cut short (issue #52, benchmarks/results/specimen-words/).

- **Words of other languages** learned from the WHO ICD-10's parallel titles
  (recipes/build_specimen_words.py, `data/loinc/specimen_words.tsv`): "orina" turns up in the
  Spanish titles of the codes whose English titles say "urine", so it is read as "urine"; "horas"
  and "heures" likewise as "hours".
- **Compound heads**: German and Dutch join a specimen word to what qualifies it ("Sammelurin",
  "Vollblut", "verzamelurine"); a word that ends with a specimen spelling after a few letters
  reads as that spelling, unless it is a word of a LOINC component (an organism, "Toxoplasma", or
  a drug, "Thiopurine": the recipe lists them from every LOINC code). The words learned from
  other languages are no heads: Spanish and Portuguese do not compound, and "recto" ends
  "correcto".
- **Cut words**: "Kalium i.U.", "Glucose i.Liq." cut the specimen word to its first letters
  after a cut preposition. The last token of a row, one to four letters from a capital ending
  with a dot, right after a one-letter lower-case abbreviation (and any other such cuts:
  "i.Sp.U."), reads as the spellings it begins when one specimen group holds nearly all the
  built-in codes that those spellings name ("U." → urine, "S." → serum: the blood group holds
  far more codes than sputum, stool and sweat; "Liq." → liquor). The words learned from other
  languages do not compete: the "i.X." form is German, and "líquido" would make "Liq." a body
  fluid as often as CSF. Elsewhere a short token with a dot is too often an element ("Na.", "K."),
  a vitamin ("Vit. D.") or an acronym ("M.C.V."), so it is not read.

Nothing names a test; the tables are read off the ICD-10 titles, LOINC's components and the
specimen table.
"""
from __future__ import annotations

import csv
import functools
import re
from importlib import resources
from typing import Callable, Iterable

from .specimens import SpecimenTable

MIN_HEAD, MIN_REST = 4, 3  # letters of a compound's specimen head, and before it
DOMINANT = 0.9  # a cut is read when one group holds this share of the codes its spellings name
# The row's last token, a capitalised cut of one to four letters, after a one-letter lower-case
# cut ("i.U.", "i.Sp.U."); not within a run of capital initials ("e.G.F.R.").
_CUT = re.compile(r"(?<![\w.])[a-z]\.(?:[A-Z][a-z]{0,3}\.)*([A-Z][a-z]{0,3})\.\s*$")
_INITIALS = re.compile(r"(?:[A-Z]\.){2,}\s*$")
# Or a last comma field of one capital letter, as US report names write it ("Creatinine,U").
_COMMA_CUT = re.compile(r",\s*([A-Z])\s*$")


@functools.lru_cache(maxsize=1)
def _learned() -> dict[str, list[tuple[str, str]]]:
    """kind → [(word, english)] of the shipped table (specimen, hours, not_compound)."""
    out: dict[str, list[tuple[str, str]]] = {}
    with (resources.files("codemap") / "data" / "loinc" / "specimen_words.tsv").open(
            encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            out.setdefault(row["kind"], []).append((row["word"], row["english"]))
    return out


def foreign_spellings() -> list[tuple[str, str]]:
    """(word of another language, the English specimen spelling it translates), as learned."""
    return list(_learned().get("specimen", []))


@functools.lru_cache(maxsize=1)
def foreign_words() -> frozenset[str]:
    """The words of foreign_spellings: never a compound's head nor a cut's completion."""
    return frozenset(word for word, _ in foreign_spellings())


@functools.lru_cache(maxsize=1)
def hour_words() -> frozenset[str]:
    """Words of other languages for "hours" ("horas", "heures", "stunden"), as learned."""
    return frozenset(word for word, _ in _learned().get("hours", []))


@functools.lru_cache(maxsize=1)
def _not_compounds() -> frozenset[str]:
    return frozenset(word for word, _ in _learned().get("not_compound", []))


def single_word_spellings(table: SpecimenTable) -> set[str]:
    """The table's spellings that are one word of MIN_HEAD letters or more."""
    return {s for s, _ in table.spellings if s.isalpha() and len(s) >= MIN_HEAD}


def compound_heads(table: SpecimenTable) -> tuple[str, ...]:
    """The spellings a compound may end with, longest first: the table's single words less the
    words learned from other languages."""
    return tuple(sorted(single_word_spellings(table) - foreign_words(), key=len, reverse=True))


def split_compounds(words: str, heads: tuple[str, ...], analytes: frozenset) -> str:
    """Folded `words` with each compound's specimen head (of `heads`) written apart ("sammel
    urin"); `analytes` (words of components) are never compounds."""
    return " ".join(_split(token, heads, analytes) for token in words.split()).join("  ")


def _split(token: str, heads: tuple[str, ...], analytes: Iterable[str]) -> str:
    if len(token) < MIN_HEAD + MIN_REST or not token.isalpha() or token in analytes \
            or token in _not_compounds():
        return token
    head = next((h for h in heads if token.endswith(h) and len(token) - len(h) >= MIN_REST), "")
    return f"{token[:-len(head)]} {head}" if head else token


def cut_spelling(text: str, table: SpecimenTable, codes_of_group: Callable[[str], int]) -> tuple[str, str]:
    """(the spelling a row's last token is cut from, the token as written), or ("", "")."""
    found = None if _INITIALS.search(text) else (_CUT.search(text) or _COMMA_CUT.search(text))
    if not found:
        return "", ""
    cut = found.group(1).lower()
    begun = [(s, spec.group) for s, spec in table.spellings  # "i.Liq." is German: no "líquido"
             if s.isalpha() and len(s) >= MIN_HEAD and s.startswith(cut) and s not in foreign_words()]
    groups = {group for _, group in begun}
    weight = {group: codes_of_group(group) for group in groups}
    total = sum(weight.values())
    if not total:
        return "", ""
    top = max(weight, key=weight.get)
    if weight[top] < DOMINANT * total:
        return "", ""
    return (next(s for s, group in begun if group == top),
            f"{found.group(1)}." if found.re is _CUT else found.group(1))
