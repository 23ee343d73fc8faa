"""How much of a row's text a candidate accounts for, and how much the candidate says besides.

Scores say how close a candidate is, not whether it explains the row: with a lab's right code
absent from the target, the top candidate is often a sibling that names more than the row does
("Albumin/Globulin" for "Albumin", "Creatine kinase.MB" for "Creatine kinase") or leaves one
of its words unexplained ("Calcium.ionized" for "Calcium, total"). The calibrator reads the two
shares computed here (codemap.decide.confidence; rule and measurement:
benchmarks/results/confidence/RULE-coverage.md).

A word is found when it is equal to one of the other side's words, when one is a prefix of the
other of at least PREFIX letters (abbreviations: "chol" / "cholesterol"), or, for words of at
least TYPO letters, when the two differ by one edit (typos: "asparate" / "aspartate").
"""
from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[^\W_]+")  # letters and digits of any script
PREFIX = 3
TYPO = 5


@lru_cache(maxsize=200_000)
def words(text: str) -> frozenset:
    """The lower-cased words of a text."""
    return frozenset(_WORD.findall(str(text).lower()))


def covered(these: frozenset, by: frozenset) -> float:
    """The share of `these` words found among `by` (1.0 for no words: nothing is unexplained)."""
    if not these:
        return 1.0
    missing = these - by
    found = len(these) - len(missing)
    found += sum(1 for word in missing if any(_close(word, other) for other in by))
    return found / len(these)


@lru_cache(maxsize=500_000)
def _close(a: str, b: str) -> bool:
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if len(short) >= PREFIX and long_.startswith(short):
        return True
    return len(short) >= TYPO and len(long_) - len(short) <= 1 and _one_edit(short, long_)


def _one_edit(short: str, long_: str) -> bool:
    """One substitution (same length) or one insertion (long_ one letter longer) apart."""
    if len(short) == len(long_):
        return sum(x != y for x, y in zip(short, long_)) <= 1
    i = next((k for k, (x, y) in enumerate(zip(short, long_)) if x != y), len(short))
    return short[i:] == long_[i + 1:]
