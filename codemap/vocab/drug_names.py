"""International and US nonproprietary names of one ingredient (paracetamol ↔ acetaminophen,
salbutamol ↔ albuterol), so a list written with one meets a drug target written with the other.

The pairs ship as codemap/data/drugs/inn_synonyms.tsv (from DrugCentral, CC BY-SA 4.0, licence
beside it; built by benchmarks/build_drug_synonyms.py, which learns from DrugCentral which of an
ingredient's synonyms are nonproprietary names). `with_other_names` adds, to every name of a drug
target that contains an ingredient with another name, the same name with the other one in its
place, as an extra name of the same concept.
"""
from __future__ import annotations

import csv
import functools
import re
from importlib import resources

import pandas as pd

from ..read.normalize import LETTERS
from .vocabulary import Vocabulary

TABLE = "data/drugs/inn_synonyms.tsv"


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
