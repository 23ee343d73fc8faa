"""International and US nonproprietary names of one ingredient (paracetamol ↔ acetaminophen,
salbutamol ↔ albuterol), so a list written with one meets a drug target written with the other.

The pairs ship as codemap/data/drugs/inn_synonyms.tsv (from DrugCentral, CC BY-SA 4.0, licence
beside it; built by recipes/build_drug_synonyms.py, which learns from DrugCentral which of an
ingredient's synonyms are nonproprietary names). `with_other_names` adds, to every name of a drug
target that contains an ingredient with another name, the same name with the other one in its
place, as an extra name of the same concept. `one_spelling` and `in_one_spelling` write both sides
of a comparison (a source string, a concept's ingredients) with one name per ingredient.
"""
from __future__ import annotations

import csv
import functools
import re
from importlib import resources
from typing import Sequence

import pandas as pd

from ...read.normalize import LETTERS
from ...vocab.vocabulary import Vocabulary

TABLE = "data/drugs/inn_synonyms.tsv"
LONGEST = 2  # words of the longest ingredient name looked up ("glyceryl trinitrate")


def ingredient_words(name: str) -> list[str]:
    """The one- and two-word lower-case phrases of a drug name, where an ingredient name can be."""
    words = LETTERS.findall(name.lower())
    return words + [f"{a} {b}" for a, b in zip(words, words[1:])]


@functools.lru_cache(maxsize=1)
def other_names() -> dict[str, tuple[str, ...]]:
    """Lower-cased nonproprietary name → the ingredient's other nonproprietary names."""
    found: dict[str, list[str]] = {}
    with (resources.files("codemap") / TABLE).open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            found.setdefault(row["name"], []).append(row["other_name"])
    return {name: tuple(others) for name, others in found.items()}


@functools.lru_cache(maxsize=4)
def one_spelling(salts: frozenset = frozenset()) -> dict[str, str]:
    """Lower-cased nonproprietary name, of either column → the one spelling its ingredient is
    compared in: the shortest of the names the table links, without `salts` words ("paracetamol"
    and "acetaminophen" → "paracetamol"; "leuprolide", "leuprolide acetate" and "leuprorelin" →
    "leuprolide"). A name is also found without its salt words ("ulobetasol" as "ulobetasol
    propionate"), since either side may leave the salt out."""
    groups: list[set[str]] = []
    for name, others in other_names().items():  # names linked through a shared other name
        linked = {name, *others}
        for group in [g for g in groups if g & linked]:
            groups.remove(group)
            linked |= group
        groups.append(linked)
    spelling: dict[str, str] = {}
    for group in groups:
        bare = {name: " ".join(w for w in name.split() if w not in salts) or name for name in group}
        one = min(bare.values(), key=lambda n: (len(n), n))
        spelling.update(dict.fromkeys(group, one))
        for name in bare.values():
            spelling.setdefault(name, one)
    return spelling


def in_one_spelling(words: Sequence[str], spelling: dict[str, str]) -> tuple[str, ...]:
    """Lower-case `words` of a drug name, in order, with each name `spelling` (one_spelling) knows
    written in its one spelling, longer names first: ("acetaminophen", "500") → ("paracetamol",
    "500")."""
    out: list[str] = []
    i = 0
    while i < len(words):
        size = next((n for n in range(LONGEST, 0, -1)
                     if i + n <= len(words) and " ".join(words[i:i + n]) in spelling), 0)
        out.extend(spelling[" ".join(words[i:i + size])].split() if size else [words[i]])
        i += size or 1
    return tuple(out)


def renamed(name: str, table: dict[str, tuple[str, ...]]) -> list[str]:
    """`name` with each ingredient that has other names written with each of them, one at a time
    ("Acetaminophen 325 MG" → ["paracetamol 325 MG"])."""
    out = []
    for phrase in dict.fromkeys(ingredient_words(name)):
        for other in table.get(phrase, ()):
            pattern = re.compile(r"\b" + re.escape(phrase).replace(r"\ ", r"\W+") + r"\b",
                                 re.IGNORECASE)
            out.append(pattern.sub(other, name, count=1))
    return out


def with_other_names(vocab, table: dict[str, tuple[str, ...]] | None = None):
    """A copy of drug target `vocab` with each name's other-name variants added (name_type
    "other name"); the copy's content hash differs, so it gets its own index cache."""

    table = other_names() if table is None else table
    names = vocab.names
    extra = [(code, variant, lang) for code, name, lang in
             zip(names["code"], names["name"], names["lang"]) for variant in renamed(name, table)]
    if not extra:
        return vocab
    added = pd.DataFrame(extra, columns=["code", "name", "lang"]).assign(name_type="other name")
    merged = pd.concat([names, added[names.columns]], ignore_index=True).drop_duplicates(
        subset=["code", "name"])
    return Vocabulary(vocab.id, vocab.version, vocab.concepts, merged, vocab.notice, vocab.source,
                      vocab.relations)
