"""Hubness: a concept close to many rows of a list is a weak answer for any one of them.

Nearest-neighbour search in an embedding space has hubs: a few target concepts (a short generic
name, "Abnormality of the eye", a panel, a drug class) sit close to very many texts and come first
for rows that mean something else. A mapping list is close to one-to-one, so a concept that many
rows of the same list reach is more likely a hub than every row's answer. CSLS (cross-domain
similarity local scaling; Conneau, Lample et al., "Word translation without parallel data",
ICLR 2018) corrects for it in batch translation: 2·cos(q, c) − r(q) − r(c), where r(c) is the mean
of the k = 10 highest cosines between c and the texts being translated. For one row r(q) is a
constant, so its candidates are ordered by cos(q, c) − r(c)/2: both constants are the paper's,
not fitted here (docs/experiments/2026-11-25-hubness.md).

The texts are the list's own distinct rows (an even sample of REFERENCE_ROWS of a longer list),
embedded as the rows are, so a row's candidates depend on the list it is mapped in, never on how
that list is cut into blocks or spread over workers. A list of one row is ranked as without it
(r(c) is then its own cosine).
"""
from __future__ import annotations

import numpy as np

from .hybrid import _ConceptLayout

HUB_K = 10  # rows whose cosines make a concept's hubness (CSLS: k = 10)
HUB_WEIGHT = 0.5  # cos − r(c)/2: the CSLS score of one row, less its own constant
REFERENCE_ROWS = 5_000  # a longer list is represented by an even sample of its distinct rows
_NAMES_AT_ONCE = 4096  # names scored against the reference at once: bounds the dense matrix


def reference_texts(texts: list[str], limit: int = REFERENCE_ROWS) -> list[str]:
    """The list's distinct non-empty texts (first-seen order), evenly thinned to `limit`: a
    text repeated on many rows makes its concept no more of a hub."""
    distinct = list(dict.fromkeys(t for t in texts if t))
    if len(distinct) <= limit:
        return distinct
    return [distinct[i] for i in np.linspace(0, len(distinct) - 1, limit).round().astype(int)]


class ListHubness:
    """Each concept's hubness for one list: the mean of its HUB_K best encoder scores (a concept
    scores by its best name) over the list's reference rows. Computed for the concepts asked
    about, and kept: a list against a million names only ever asks about its candidates' pools."""

    def __init__(self, vocab, vectors: np.ndarray, reference: np.ndarray, k: int = HUB_K):
        self.layout = _ConceptLayout.of(vocab)
        self.vectors = vectors  # the name index's vectors, row i = vocab.names row i
        self.reference = np.ascontiguousarray(reference, dtype=np.float32)
        self.k = max(1, min(k, len(self.reference)))
        self.values = np.full(len(self.layout.concept_codes), np.nan, dtype=np.float32)

    def of(self, concepts: np.ndarray) -> np.ndarray:
        """Hubness of the given concept numbers (codemap.rank.hybrid's concept order)."""
        concepts = np.asarray(concepts, dtype=np.int64)
        missing = np.unique(concepts[np.isnan(self.values[concepts])])
        bounds = self.layout.starts_end
        ends = np.cumsum(bounds[missing + 1] - bounds[missing])  # names up to each concept
        start = 0
        while start < len(missing):  # pieces of about _NAMES_AT_ONCE names
            before = ends[start - 1] if start else 0
            stop = max(start + 1, int(np.searchsorted(ends, before + _NAMES_AT_ONCE)))
            self._compute(missing[start:stop])
            start = stop
        return self.values[concepts]

    def penalty(self, concepts: np.ndarray) -> np.ndarray:
        """What the given concepts' encoder scores lose: HUB_WEIGHT × their hubness."""
        return HUB_WEIGHT * self.of(concepts)

    def _compute(self, concepts: np.ndarray) -> None:
        bounds = self.layout.starts_end
        starts, ends = bounds[concepts], bounds[concepts + 1]
        rows = np.concatenate([self.layout.order[s:e] for s, e in zip(starts, ends)])
        scores = self.reference @ np.asarray(self.vectors[rows], dtype=np.float32).T
        offsets = np.concatenate([[0], np.cumsum(ends - starts)[:-1]])
        best = np.maximum.reduceat(scores, offsets, axis=1)  # reference rows × concepts
        top = -np.partition(-best, self.k - 1, axis=0)[:self.k]
        self.values[concepts] = top.mean(axis=0)


def list_hubness(index, vocab, encode, texts: list[str]) -> ListHubness | None:
    """The hubness of `vocab`'s concepts for a list whose rows read `texts` (as read), or None
    for a list without text. `encode` turns texts of the list into the index's vectors,
    prepared as its rows are ranked."""
    reference = reference_texts(texts)
    if not reference:
        return None
    return ListHubness(vocab, index.vectors, encode(reference))


def embedded_hubness(index, vocab, texts: list[str], vectors: np.ndarray) -> ListHubness | None:
    """list_hubness for rows already embedded (`vectors[i]` is row i, whose text as read is
    `texts[i]`): a gold file's queries, pseudo-queries."""
    first: dict[str, int] = {}
    for i, text in enumerate(texts):
        first.setdefault(text, i)
    return list_hubness(index, vocab, lambda chosen: vectors[[first[t] for t in chosen]], texts)
