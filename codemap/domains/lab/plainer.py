"""A test that adds words to a plainer test the row names, where the row writes none of them.

"Serum creatine kinase" names creatine kinase; LOINC also has "Creatine kinase.MB", whose name
is the plainer test's plus "MB". A row that writes none of the added words leaves that test
unstated, and the plainer test, the commoner one, should settle it (issue #52: "the commonest
code settles the rest"). Today the name scores decide between near twins ("Thyroxine (T4) free
index" for "Free T4", "Thyroglobulin Ab" for "Thyroglobulin").

Which tests are plainer is learned from the built-in components: a component whose words (as
loinc.whole_analyte gives them: "Bilirubin.total" is plain "Bilirubin") begin another's. The
added words are read in English and, for the built-in codes, in the German linguistic variant's
components; a row is judged only when it writes a word of the plainer test, so a row in a
language neither spells says nothing (benchmarks/results/plainer-test/RULE.md).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Mapping

from ..evidence import NO_EVIDENCE, Evidence
from ...read.normalize import spelled_from
from .loinc import builtin_components, fold, linguistic_variant, ranked_codes
from .loinc import whole_analyte
from .text import _BoundScorer, _loinc_axes


def _words(component: str) -> tuple[str, ...]:
    return tuple(fold(whole_analyte(component)).split())


@functools.lru_cache(maxsize=1)
def _german_words() -> dict[tuple, frozenset]:
    """A built-in component's words → the words its codes' German components write, learned
    by code from the shipped linguistic variant ("creatine kinase mb" → {"creatinkinase", "mb"})."""
    english = {code: _words(component)  # builtin_components is in ranked_codes' order
               for code, component in zip(ranked_codes()["code"], builtin_components())}
    found: dict[tuple, set] = {}
    for code, component in zip(linguistic_variant()["code"], linguistic_variant()["component"]):
        if code in english:
            found.setdefault(english[code], set()).update(fold(whole_analyte(component)).split())
    return {words: frozenset(german) for words, german in found.items()}


@functools.lru_cache(maxsize=1)
def _plain_tests() -> frozenset:
    """The built-in components' words: the tests a longer component can add words to."""
    return frozenset(_words(component) for component in builtin_components())


@functools.lru_cache(maxsize=1 << 14)
def plainer_tests(component: str) -> tuple[tuple[frozenset, frozenset], ...]:
    """For each built-in component whose words begin `component`'s: (the plainer test's words,
    English and German; the words `component` adds to it, English and German). "Creatine
    kinase.MB" → (({"creatine", "kinase", "creatinkinase"}, {"mb"}),)."""
    words = _words(component)
    if words not in _plain_tests():
        # A component read from a short name alone ("Serine Spec", "Gentamicin Dose" of a
        # short-name table) may carry its system's word: only built-in components are judged.
        return ()
    german = _german_words().get(words, frozenset())
    found = []
    for cut in range(1, len(words)):
        plain = words[:cut]
        if plain in _plain_tests():
            plain_german = _german_words().get(plain, frozenset())
            added = frozenset(words[cut:]) - set(plain) | (german - plain_german)
            if added:
                found.append((frozenset(plain) | plain_german, added))
    return tuple(found)


@dataclass(frozen=True)
class _RowText:
    """A row's folded words (its text and its second reading) and their initials, read once per
    row for every candidate."""

    words: frozenset
    initials: str

    @staticmethod
    def of(words: tuple) -> "_RowText":
        return _RowText(frozenset(words), "".join(w[0] for w in words))

    def writes(self, word: str) -> bool:
        """Whether the row writes `word`: the same word or its plural; for a word of two letters
        or more, a row word it abbreviates ("ab" of "antibody") or the initials of consecutive
        row words ("hdl" of "high density lipoprotein", as a second reading spells it out). Not
        a row word that abbreviates it: "MCH" would write "MCHC"."""
        if word in self.words or f"{word}s" in self.words:
            return True
        if len(word) < 2:
            return False
        if any(spelled_from(word, w) for w in self.words):
            return True
        return word.isalpha() and word in self.initials


@dataclass(frozen=True)
class PlainerTestScorer(_BoundScorer):
    """A candidate that adds words to a plainer built-in test the row names, where the row (its
    text and its second reading) writes none of the added words: a small malus, of the size of
    the usual-variant priors, marked as settled by commonness (~)."""

    name: str = "plainer_test"
    mismatch: float = -0.03

    def for_row(self, row: Mapping[str, str]):
        text = str(row.get("text", "") or "")
        reading = row.get("reading")
        if reading:
            text = f"{text} {reading[0]}"
        words = tuple(fold(text).split())
        return functools.partial(self._score, _RowText.of(words)) if words else None

    def _score(self, row: _RowText, concept: Mapping[str, object]) -> Evidence:
        axes = _loinc_axes(concept)
        if axes is None or not axes.component:
            return NO_EVIDENCE
        for plain, added in plainer_tests(axes.component):
            if any(row.writes(w) for w in plain) and not any(row.writes(w) for w in added):
                return Evidence(self.mismatch, f"text writes none of {', '.join(sorted(added))}, "
                                               f"which {axes.component} adds to a plainer test ~")
        return NO_EVIDENCE
