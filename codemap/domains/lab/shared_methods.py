"""A method the row names by a word that some test also has in its name ("Screen", "High
sensitivity"), judged against each candidate's own test.

A row's method words are learned from the "by …" part of the shipped long names
(loinc.method_words), less the words of any component: in a label, "screen" may name a test
("Newborn hearing screen") as well as a method ("Benzodiazepines [Presence] in Urine by Screen
method"). Against one candidate the word is not ambiguous. Where the candidate's test has a
built-in code by that method (loinc.analyte_methods), a row that writes the word states that
method for it, and the test's codes by another method or by none contradict the row, binding as
a stated method does; the code by that method earns nothing. A candidate whose own test writes
the word, or whose test has no code by that method, is not judged
(benchmarks/results/shared-methods/RULE.md, RULE-2.md).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Mapping

from ..evidence import NO_EVIDENCE, Evidence
from .columns import contradiction_tier
from .loinc import METHOD_SYNONYMS, analyte_methods, fold, shared_method_words, whole_analyte
from .text import _BoundScorer, _first, _loinc_axes


@dataclass(frozen=True)
class SharedMethodScorer(_BoundScorer):
    """The malus of the text's stated method (text_method)."""

    name: str = "text_shared_method"
    mismatch: float = -0.03

    def for_row(self, row: Mapping[str, str]):
        """None for a row that writes no such word (most rows)."""
        shared = shared_method_words()
        named = {}
        for word in fold(str(row.get("text", "") or "")).split():
            stem = METHOD_SYNONYMS.get(word, word)[:5]
            if len(word) >= 4 and stem in shared:
                named.setdefault(stem, word)
        return functools.partial(self._score, tuple(sorted(named.items()))) if named else None

    def _score(self, named: tuple, concept: Mapping[str, object]) -> Evidence:
        axes = _loinc_axes(concept)
        if axes is None or not axes.component:
            return NO_EVIDENCE
        test = _test(axes.component)
        has = analyte_methods().get(test, frozenset())
        own_words = test.split()
        stated = {phrase for stem, _ in named
                  if not any(w.startswith(stem) for w in own_words)  # the test's own word
                  for phrase in shared_method_words()[stem] & has}
        if not stated:
            return NO_EVIDENCE
        method = _first(axes.methods)
        if method in stated:
            # No agreement bonus: it would lift a test the row does not name that has the
            # method ("Uric Acid": Microscopic observation by Acid fast stain; RULE-2.md).
            return NO_EVIDENCE
        said = ", ".join(word for stem, word in named)
        shown = f"by {method}" if method else "by no method"
        return Evidence(self.mismatch, f"text says {said}, a method of {test}; candidate is {shown} ✘",
                        contradicts=True, tier=contradiction_tier(self.name))


@functools.lru_cache(maxsize=1 << 14)  # per candidate; a component recurs across rows
def _test(component: str) -> str:
    """A component's test as loinc.analyte_methods keys it."""
    return fold(whole_analyte(component)).strip()
