"""German lab words read in English: a second reading for a German list against English names.

A German list ranked against a LOINC table with English names only (a site's table of codes and
short names) meets it through the multilingual encoder alone, which misses the analytes whose
names look nothing alike in the two languages ("Natrium" → a nitrite strip test, no sodium code
in the top 10; "Zylinder" → a zinc test). The shipped German linguistic variant and the English
Top-2000 lists name the same codes axis by axis: learned by code from the two, each German
COMPONENT and SYSTEM phrase → its English one ("natrium" → "sodium", "urinsediment" → "urine
sediment"), and a row's second reading adds the English words of the phrases it contains
("Natrium im Urin" → "Natrium im Urin sodium urine"). Learned from the vocabulary; no test is
named. The second reading can only lift names it matches (codemap.rank.prepare.with_readings).

`held_out(codes)`: evaluation learns without a list's gold codes, whose German names the dev
sets are drawn from (benchmarks/quality/fusion_sweep.py); the product learns from every shipped code.
"""
from __future__ import annotations

import functools
import re
from collections import defaultdict
from typing import Callable

from .loinc import concept_axes, fold, linguistic_variant, long_name_system, ranked_codes

LANGUAGES = ("de",)  # the linguistic variants shipped with codemap/data/loinc
AGREEMENT = 0.9  # share of a phrase's codes that must agree on its English words
MIN_CHARS = 3  # shorter folded phrases ("ph", "ig") are too ambiguous to translate
_TIMED = re.compile(r"^\d+ hours? ", re.IGNORECASE)

_held_out: frozenset = frozenset()


def held_out(codes) -> None:
    """Learn without these codes from now on (evaluation: a list's gold codes must not teach the
    lexicon that reads it); an empty set restores the full lexicon."""
    global _held_out
    codes = frozenset(str(c).strip() for c in codes)
    if codes != _held_out:
        _held_out = codes
        lexicon.cache_clear()


@functools.lru_cache(maxsize=1)
def lexicon() -> dict[str, str]:
    """Folded German phrase (" natrium ") → English words ("sodium"): each German COMPONENT and
    SYSTEM value whose codes give one English phrase (AGREEMENT of them), where that phrase is
    not the German one already. A phrase that is both ("Erythrozyten") reads as the component:
    in a label it names the analyte."""
    english = {row["code"]: row for row in ranked_codes().to_dict("records")}
    components: dict = defaultdict(lambda: defaultdict(int))
    systems: dict = defaultdict(lambda: defaultdict(int))
    for row in linguistic_variant().to_dict("records"):
        source = english.get(row["code"])
        if source is None or row["code"] in _held_out:
            continue
        components[fold(row["component"])][fold(concept_axes(source).component).strip()] += 1
        # "24 hour Urine": the timing is an axis of its own, not a word of the German system
        system = _TIMED.sub("", long_name_system(source))
        systems[fold(row["system"])][fold(system).strip()] += 1
    return {**_agreed(systems), **_agreed(components)}


def _agreed(votes: dict) -> dict[str, str]:
    table = {}
    for german, found in votes.items():
        words, count = max(found.items(), key=lambda item: (item[1], item[0]))
        if (len(german.strip()) >= MIN_CHARS and words and f" {words} " != german
                and count >= AGREEMENT * sum(found.values())):
            table[german] = words
    return table


def part_reader(lang: str) -> Callable[[str], str] | None:
    """A text in `lang` → the same text followed by the English words of the LOINC parts it
    names, longest phrase first; None for a language without a shipped variant."""
    if lang.split("-")[0].lower() not in LANGUAGES:
        return None
    table = lexicon()
    longest = max((len(p.split()) for p in table), default=0)

    def read(text: str) -> str:
        said = fold(text)
        words, found, i = said.split(), [], 0
        while i < len(words):
            for j in range(min(len(words), i + longest), i, -1):
                english = table.get(" " + " ".join(words[i:j]) + " ")
                if english is not None:
                    found.append(english)
                    i = j
                    break
            else:
                i += 1
        added = [w for w in dict.fromkeys(found) if f" {w} " not in said]
        return f"{text} {' '.join(added)}" if added else text
    return read
