"""Binary term matrices: which of many texts hold which terms.

The lexical index counts character n-grams (codemap.rank.lexical), the word completer words
(codemap.readings.word_completion), both as scikit-learn's vectorizers count them (the index
caches they first wrote stay valid). Written here because importing scikit-learn cost half a
second of every `codemap map` run, a tenth of the warm run it has to fit in.
"""
from __future__ import annotations

import re
from array import array
from typing import Callable, Iterable

import numpy as np
import scipy.sparse as sp

_SPACES = re.compile(r"\s\s+")


def char_wb_ngrams(text: str, sizes: tuple[int, int]) -> list[str]:
    """The character n-grams of each word of `text` (lower-cased) padded with a space each side,
    n in `sizes`; a word no longer than n gives itself once (scikit-learn's "char_wb")."""
    low, high = sizes
    out: list[str] = []
    for word in _SPACES.sub(" ", text.lower()).split():
        word = f" {word} "
        for n in range(low, high + 1):
            out.extend(word[i:i + n] for i in range(max(1, len(word) - n + 1)))
            if len(word) <= n:
                break
    return out


def binary_matrix(texts: Iterable[str], analyse: Callable[[str], list[str]],
                  vocabulary: dict[str, int] | None = None) -> tuple[sp.csr_matrix, dict[str, int]]:
    """(texts × terms matrix of 1.0 where a text holds a term, the term → column numbers). With
    `vocabulary` its terms only; without, every term of the texts, numbered in sorted order.
    One text's terms are held at a time, and columns as 32-bit numbers: a million names hold
    some 85 million n-grams."""
    known = vocabulary if vocabulary is not None else {}
    indices, starts = array("i"), array("q", [0])
    for text in texts:
        held = set()
        for term in analyse(text):
            column = known.get(term)
            if column is None:
                if vocabulary is not None:
                    continue
                column = known[term] = len(known)
            held.add(column)
        indices.extend(sorted(held))
        starts.append(len(indices))
    columns = np.frombuffer(indices, np.int32) if len(indices) else np.zeros(0, np.int32)
    if vocabulary is None:  # numbered as first seen: renumbered in sorted term order
        terms = sorted(known)
        renumber = np.empty(len(terms), np.int32)
        renumber[[known[t] for t in terms]] = np.arange(len(terms), dtype=np.int32)
        columns, known = renumber[columns], {t: i for i, t in enumerate(terms)}
        del indices
    rows = np.frombuffer(starts, np.int64)
    if rows[-1] < np.iinfo(np.int32).max:  # one index type for both, or scipy copies to the wider
        rows = rows.astype(np.int32)
    else:
        columns = columns.astype(np.int64)
    matrix = sp.csr_matrix((np.ones(len(columns), np.float32), columns, rows),
                           shape=(len(starts) - 1, len(known)))
    matrix.sort_indices()
    return matrix, known


def tfidf(matrix: sp.csr_matrix, idf: np.ndarray) -> sp.csr_matrix:
    """Rows weighted by `idf`, L2-normalised (a row of no term stays zero). One new array of
    weights, the structure shared with `matrix`: no copies of a million names' n-grams."""
    weights = idf.astype(np.float32)[matrix.indices] * matrix.data
    squares = sp.csr_matrix((weights * weights, matrix.indices, matrix.indptr), shape=matrix.shape)
    norms = np.sqrt(np.asarray(squares.sum(axis=1), dtype=np.float32).ravel())
    del squares
    weights /= np.repeat(np.maximum(norms, 1e-12), np.diff(matrix.indptr))
    return sp.csr_matrix((weights, matrix.indices, matrix.indptr), shape=matrix.shape)


def smooth_idf(matrix: sp.csr_matrix) -> np.ndarray:
    """ln((1 + texts) / (1 + texts holding the term)) + 1, per term (float32)."""
    held = np.bincount(matrix.indices, minlength=matrix.shape[1])
    return (np.log((1 + matrix.shape[0]) / (1 + held)) + 1).astype(np.float32)
