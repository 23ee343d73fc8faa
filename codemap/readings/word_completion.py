"""Cut-short words in source texts, completed from the target's own words.

Local lists shorten words by cutting them: "Perc Endo Approach", "Synth Sub", "Alk Phos",
"Creat". The n-gram index half-matches a cut word and the encoder reads it as unknown word
pieces, while the target vocabulary spells the same words out. So a source token that is not a
word of the target's names but begins some of them is completed to one of those words, the one
that the target names holding the row's other words hold most often: "Sub"
reads as "substitute" beside "Synth" in a procedure list. A row with no other known word takes
the target's most frequent completion.

Left alone, because they are not cuts or a completion would guess: ALL-CAPS tokens (acronyms:
"NOS", "HCl"), tokens under 3 or over 6 letters, tokens one letter short of a word of the target
(a word form: "unit" beside "units"), and, in a row with other known words, tokens none of whose
completions ever occurs with them ("Neb" beside "Ipratropium" does not become a drug name).
Nothing here names a word; everything is read off the target. Measured in
docs/experiments/2026-11-24-word-completion.md.
"""
from __future__ import annotations

import bisect
import functools
import re
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ..terms import binary_matrix
from ..vocab.vocabulary import Vocabulary
from ..vocab.vocabulary import SHORT_NAME_TYPES

# Letters of any script written with spaces between words ("Prot" of "Protéines" is no cut
# word); not Chinese or Japanese, where a run of letters is a phrase that no cut word can be.
_WORD = re.compile(r"[^\W\d_\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+")
MIN_CUT, MAX_CUT = 3, 6  # letters of a token that may be a cut word
MIN_ADDED = 2  # a completion adds at least this many letters (one more is a plural or inflection)
MAX_CHOICES = 30
# A completion must be in at least this share of the target names that hold the row's other
# words (rarity-weighted): "Perc" beside "Drainage" is "percutaneous", "Neb" beside
# "Budesonide" is no drug name that starts with "neb".
MIN_SHARE = 0.02  # completions weighed per token: the most frequent ones


class WordCompleter:
    """Completes cut words in texts from one vocabulary's names (see the module docstring)."""

    def __init__(self, names: list[str], known: set[str] = frozenset()):
        matrix, self.number = binary_matrix(names, lambda name: _WORD.findall(name.lower()))
        self.columns = sp.csc_matrix(matrix)  # names × words: which names hold each word
        self.words = list(self.number)  # in sorted order: _choices bisects them
        self.known = {w.lower() for w in known} | set(self.words)
        self.frequency = np.asarray(self.columns.sum(axis=0)).ravel()
        self.size = max(1, len(names))

    def complete(self, text: str) -> str:
        """`text` with its cut words completed; every other character as it was."""
        if not text or not self.words:
            return text
        tokens = _WORD.findall(text)
        context = sorted({self.number[t.lower()] for t in tokens if t.lower() in self.number})
        return _WORD.sub(lambda m: self._word(m.group(0), tuple(context)), text)

    def _word(self, token: str, context: tuple[int, ...]) -> str:
        choices = self._choices(token)
        if not choices:
            return token
        if not context:
            return self.words[choices[0]]
        context = list(context)
        together = (self.columns[:, list(choices)].T @ self.columns[:, context]).toarray()
        # How often the names holding each context word also hold the completion, averaged with
        # the context words' rarity as weights: a word every name has ("mg") says little.
        share = together / self.frequency[context]
        rarity = np.log(self.size / self.frequency[context])
        weight = share @ rarity / max(rarity.sum(), 1e-9)
        if weight.max() < MIN_SHARE:
            return token
        return self.words[choices[int(np.argmax(weight))]]

    @functools.lru_cache(maxsize=65536)
    def _choices(self, token: str) -> tuple[int, ...]:
        """Word numbers the token may be cut from, most frequent first; () when it is no cut."""
        low = token.lower()
        if not MIN_CUT <= len(low) <= MAX_CUT or token.isupper() or low in self.known:
            return ()
        start = bisect.bisect_left(self.words, low)
        found = []
        for i in range(start, len(self.words)):
            if not self.words[i].startswith(low):
                break
            if len(self.words[i]) < len(low) + MIN_ADDED:
                return ()  # a word form of a target word, not a cut
            found.append(i)
        found.sort(key=lambda i: -self.frequency[i])
        return tuple(found[:MAX_CHOICES])


_COMPLETERS: dict[str, WordCompleter] = {}


def word_completer(vocab: Vocabulary) -> Callable[[str], str]:
    """The completer of this vocabulary's names (built once per vocabulary content). Completions
    come from its long names; a word of its short names ("Creat", "Ser") is the target's own
    abbreviation, which its short names and the lab evidence already read, so it is left alone."""
    key = vocab.typed_hash  # which names are short depends on their types
    if key not in _COMPLETERS:
        _COMPLETERS.clear()  # one target per run; do not keep old ones alive
        names = vocab.names
        short = (names["name_type"].isin(SHORT_NAME_TYPES) if "name_type" in names.columns
                 else np.zeros(len(names), bool))
        known = {w for name in names.loc[short, "name"].astype(str) for w in _WORD.findall(name)}
        _COMPLETERS[key] = WordCompleter(names.loc[~short, "name"].astype(str).tolist(), known)
    return _COMPLETERS[key].complete
