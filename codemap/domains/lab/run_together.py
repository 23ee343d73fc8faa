"""Aliases that run parts of words together by case ("TnT", "AnGap"), read as the built-in
LOINC component words their parts spell (benchmarks/results/camel-case/RULE.md).

A lab list writes "TnT" for troponin T and "AnGap" for the anion gap: no sense, short name or
cut word reads such a token, and the encoder sees word pieces. Its parts, split where a capital
follows ("Tn", "T"), spell consecutive words of a built-in component: a part of one letter is
the word itself, a longer one begins the word and spells it as the abbreviation learner's test
does. Those words join the row's second reading ("TnT troponin t"). Where several word runs fit
("TnI": troponin i, trypsinogen i), the one the most built-in codes hold is read. Nothing names
a test: the words are read off the shipped components.
"""
from __future__ import annotations

import functools
import re
from collections import Counter
from typing import Callable

from ...vocab.vocabulary import Vocabulary
from ...read.normalize import spelled_from
from .abbreviations import builtin_abbreviations
from .loinc import builtin_components, fold

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_PARTS = re.compile(r"[A-Z][a-z]*|[a-z]+|\d+")
MIN_LONGER = 2  # a spelled word is at least this many letters longer than its part


def run_together_parts(token: str) -> tuple[str, ...]:
    """The lower-cased parts of a token that runs parts of words together ("TnT" → ("tn", "t")),
    or () for any other token: a capital must follow the first part, and one part of two or more
    letters must hold a lower-case letter (so "MCV", "pH" and "B12" are none)."""
    parts = _PARTS.findall(token)
    if (len(parts) < 2 or "".join(parts) != token or not any(p[0].isupper() for p in parts[1:])
            or not any(len(p) >= 2 and any(c.islower() for c in p) for p in parts)):
        return ()
    return tuple(p.lower() for p in parts)


@functools.lru_cache(maxsize=1)
def _component_words() -> tuple[tuple[tuple[str, ...], int], ...]:
    """Each built-in component's folded words, with how many shipped codes carry it."""
    counts = Counter(tuple(fold(c).split()) for c in builtin_components())
    return tuple(counts.items())


def _spells(part: str, word: str) -> bool:
    if len(part) == 1:
        return part == word
    return part == word or (len(word) >= len(part) + MIN_LONGER and spelled_from(part, word))


@functools.lru_cache(maxsize=1 << 12)
def spelled_words(parts: tuple[str, ...]) -> str:
    """The component words `parts` spell at consecutive places ("troponin t"), the run the most
    built-in codes hold where several fit; "" when none does or the best ones tie."""
    held: Counter = Counter()
    for words, codes in _component_words():
        for at in range(len(words) - len(parts) + 1):
            run = words[at:at + len(parts)]
            if all(_spells(p, w) for p, w in zip(parts, run)):
                held[run] += codes
    ranked = held.most_common(2)
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return ""
    return " ".join(ranked[0][0])


def run_together_reader(vocab: Vocabulary) -> Callable[[str], str]:
    """`text` → `text` with each run-together token followed by the words it spells; a token
    the target writes as a word, or a learned abbreviation, is left alone."""

    @functools.lru_cache(maxsize=1)
    def known() -> frozenset:
        # Read off the target's names only once a row has a run-together token: most lists
        # have none, and a table of a million names takes seconds to read.
        return frozenset({w for name in vocab.names["name"].astype(str).str.lower()
                          for w in re.findall(r"[a-z0-9]+", name)} | set(builtin_abbreviations()))

    def read(text: str) -> str:
        lowered = text.lower()

        def one(match: re.Match) -> str:
            token = match.group(0)
            parts = run_together_parts(token)
            words = spelled_words(parts) if parts and token.lower() not in known() else ""
            return f"{token} {words}" if words and words not in lowered else token

        return _TOKEN.sub(one, text)

    return read
