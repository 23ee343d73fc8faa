"""A chemical symbol that leads a lab row's text, read as its element ("K+ SerPl" → potassium).

Lab lists write electrolytes and trace metals by their symbol ("K", "Na+", "Cl", "Mg", "Fe",
"Ca++"); LOINC names them in words ("Potassium [Moles/volume] in Serum or Plasma"). A symbol is
too short for the encoder and the n-gram index ("K" met creatine kinase, "Cl" a clearance), so
the element's name is written after it: "K+ SerPl" → "K+ potassium SerPl". Read only

- in the symbol's own case ("Mg", not "MG" or the unit "mg"), alone or with an ion's charge
  ("K+", "Ca++", "Ca2+", "Cl-");
- as the row's first token: a symbol later in the text is a letter of another name ("Vitamin K",
  "Hepatitis B", "Protein C");
- when every other word is an axis word (specimen, property, timing, method, as
  `loinc_parts.text_axes` reads them: "K+ SerPl", "Cl urine", "Na, serum, level"), so the symbol
  is the row's whole analyte: a leading letter is as often a genus initial ("K aerogenes DNA"),
  part of a compound ("Ca Carbonate Cry") or of a qualified analyte ("Ca-I" ionized calcium);
- when the element's name, or its halide ion's (IUPAC -ine → -ide: "Cl" → chloride), is a
  whole component of the target's codes; elements that are gases at room temperature count
  only as halides (labs write gases as formulas: pO2, CO2).

Giving the target short symbol names instead drew short texts of every kind to them (target
short names are hubs; benchmarks/results/lab-text/RULE-target-names.md). The symbols are the
public-domain periodic table (codemap/data/elements, recipes/build_element_symbols.py).
"""
from __future__ import annotations

import csv
import functools
import re
from importlib import resources
from typing import Callable

from ...read.normalize import LETTER_OR_DIGIT
from ...vocab.vocabulary import Vocabulary
from .loinc import concept_axes, fold, text_axes

TABLE = "data/elements/elements.tsv"
# The first token: one capital and at most one small letter, an optional ion charge, then no
# letter or digit of any script ("Cl-Urine" is chloride; "CEA", "Hb", "B12", the "Cr" of
# "Créatinine" are no symbols).
_LEADING = re.compile(rf"^(\s*)([A-Z][a-z]?)(\+\+?|[1-3]\+|-)?(?!{LETTER_OR_DIGIT})")


@functools.lru_cache(maxsize=1)
def element_names() -> dict[str, tuple[str, ...]]:
    """Chemical symbol → the lower-case names a component may give it: the element's name
    (solids and liquids) and, for a halogen, its ion's."""
    names: dict[str, tuple[str, ...]] = {}
    with (resources.files("codemap") / TABLE).open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            name = row["name"].lower()
            own = () if row["gas"] == "1" else (name,)
            ion = (name[:-3] + "ide",) if name.endswith("ine") else ()
            if own or ion:
                names[row["symbol"]] = own + ion
    return names


_TARGETS: dict[str, dict[str, str]] = {}


def target_elements(vocab: Vocabulary) -> dict[str, str]:
    """Symbol → the name the target's components give its element, for each element that is a
    whole component of some code ("K" → "potassium"); read once per vocabulary content, since
    every block of a long list asks again."""
    key = vocab.content_hash
    if key not in _TARGETS:
        _TARGETS.clear()  # one target per run; do not keep old ones alive
        _TARGETS[key] = _elements_of(vocab)
    return _TARGETS[key]


def _elements_of(vocab: Vocabulary) -> dict[str, str]:
    components = {concept_axes(c).component.strip() for c in vocab.concepts.to_dict("records")}
    found = {}
    for symbol, names in element_names().items():
        named = [n for n in names if n in components]
        if named:
            found[symbol] = named[0]
    return found


def symbol_reader(vocab: Vocabulary) -> Callable[[str], str]:
    """`text` → `text` with a leading element symbol followed by its element's name (see the
    module docstring); any other text as it was."""
    elements = target_elements(vocab)

    def read(text: str) -> str:
        found = _LEADING.match(text)
        name = elements.get(found.group(2)) if found else None
        if name is None or not only_axis_words(text[found.end():]):
            return text
        return f"{text[:found.end()]} {name}{text[found.end():]}"

    return read


def only_axis_words(text: str) -> bool:
    """Whether every word of `text` says a LOINC axis (a timing such as "24 hr" counts as one)."""
    words = fold(text)
    timing = text_axes(text).said.get("timing", "")
    if timing:
        words = words.replace(f" {fold(timing).strip()} ", " ")
    return all(_says_axis(word) for word in words.split())


@functools.lru_cache(maxsize=4096)
def _says_axis(word: str) -> bool:
    return bool(text_axes(word).said)  # `said` holds exactly the axes the text stated
