"""The names ranking scores: the target's own, and the local names reviewers approved.

A local name (codemap.vocab.local_names) is a name of its concept: a concept scores by its best
name, so a row written close to a text some site approved for a concept finds that concept by it.
A local name counts only for a row written as it is, up to case, punctuation and spacing (the
lexical index's reading of a text, codemap.rank.lexical.normalize_text). Looser, a site's texts
lift too much: they are nearer each other than any official name ("Iron Blood" and "Beta Blood"
share the site's way of writing, and the encoder reads the shared word). On the dev pairs
(benchmarks/quality/site_rounds.py), raw local scores cost the concepts site A never had 17
points of acc@1 on MIMIC labels and 7 on drug strings; a gate at n-gram cosine 0.6 to 0.9 still
cost some list (sweep and decision: benchmarks/results/site-rounds/RULE.md).

The local names are embedded apart (prepared as source texts are, since they are source texts;
their vectors cached by text), so adding or removing one never rebuilds the target's index.
`ScoredNames` puts both behind row numbers: 0 … n-1 the target's names (its index's rows), n …
the local ones.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ..embed.encoder import Encoder
from ..embed.name_cache import cached_vectors
from ..vocab.local_names import LocalNames
from .lexical import normalize_text



@dataclass(frozen=True)
class LocalIndex:
    """Approved local names, embedded: vectors (row i = names.approved row i) and, when the
    ranking has a lexical index, their n-gram rows in it."""

    names: LocalNames
    vectors: np.ndarray
    lexical: sp.csr_matrix  # n-gram rows, in the target's lexical index's terms
    embedder: Callable  # texts → their n-gram rows (the target's lexical index's)
    keys: np.ndarray  # each name as normalize_text reads it: a row near it reads the same

    @staticmethod
    def build(names: LocalNames, prepare: Callable[[str], str], encoder: Encoder,
              lexical, cache_dir: Path) -> "LocalIndex":
        """`lexical`: the target's lexical index (codemap.rank.lexical), which says how near a
        row's text is to each local name whatever the ranking method."""
        texts = [prepare(t) for t in names.approved["name"]]
        vectors = cached_vectors(encoder, texts, cache_dir, "embedding approved local names")
        return LocalIndex(names, vectors, lexical.embed(texts).tocsr(), lexical.embed,
                          np.array([normalize_text(t) for t in texts], dtype=object))

    @property
    def codes(self) -> np.ndarray:
        return self.names.approved["code"].to_numpy()

    def reason(self, i: int) -> str:
        """The explanation of a candidate whose best name is local name i."""
        row = self.names.approved.iloc[i]
        sites = list(row["sites"]) or ["an unnamed site"]
        who = (f"site {sites[0]}'s" if len(sites) == 1 else
               f"{len(sites)} sites' ({', '.join(sites)})")
        return f"matched {who} approved name '{row['name']}'"


@dataclass(frozen=True)
class ScoredNames:
    """The target's name index and lexical index, and the local names after them."""

    index: object  # codemap.embed.index.NameIndex
    lexical: object | None  # codemap.rank.lexical.LexicalIndex
    local: LocalIndex | None
    count: int  # the target's names: local name i is row count + i

    def encoder(self, queries: np.ndarray) -> np.ndarray:
        """Cosine of each query to every name (queries × names)."""
        scores = queries @ self.index.vectors.T
        return scores if self.local is None else np.hstack([scores, queries @ self.local.vectors.T])

    def lexical_scores(self, texts: list[str]) -> np.ndarray:
        scores = self.lexical.similarity(texts)
        return scores if self.local is None else np.hstack([scores, self._local_lexical(texts)])

    def _local_lexical(self, texts: list[str]) -> np.ndarray:
        return (self.local.embedder(texts) @ self.local.lexical.T).toarray().astype(np.float32)

    def keep_near(self, texts: list[str], matrices, rows: np.ndarray | None = None) -> None:
        """Hide (-inf) in each of `matrices` (queries × name columns; `rows`: the columns' name
        rows, None for all names in order) the local names not near the query's text."""
        if self.local is None:
            return
        rows = np.arange(self.count + len(self.local.vectors)) if rows is None else rows
        local = np.flatnonzero(rows >= self.count)
        if not len(local):
            return
        keys = np.array([normalize_text(t) for t in texts], dtype=object)
        far = keys[:, None] != self.local.keys[rows[local] - self.count][None, :]
        for matrix in matrices:
            if matrix is not None:
                block = matrix[:, local]
                block[far] = -np.inf
                matrix[:, local] = block

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        """The vectors of name rows, in their order."""
        if self.local is None:
            return self.index.vectors[rows]
        own = rows < self.count
        out = np.empty((len(rows), self.index.vectors.shape[1]), np.float32)
        out[own] = self.index.vectors[rows[own]]
        out[~own] = self.local.vectors[rows[~own] - self.count]
        return out

    def lexical_rows(self, rows: np.ndarray) -> sp.csr_matrix:
        """The n-gram rows of name rows, in their order."""
        if self.local is None:
            return self.lexical.matrix[rows]
        own = np.flatnonzero(rows < self.count)
        local = np.flatnonzero(rows >= self.count)
        stacked = sp.vstack([self.lexical.matrix[rows[own]],
                             self.local.lexical[rows[local] - self.count]]).tocsr()
        return stacked[np.argsort(np.concatenate([own, local]))]

    def near_local(self, texts: list[str]) -> list[np.ndarray]:
        """Per text, the rows of the local names near it (none without local names)."""
        if self.local is None or not len(self.local.vectors):
            return [np.zeros(0, np.int64) for _ in texts]
        return [self.count + np.flatnonzero(self.local.keys == normalize_text(t)) for t in texts]

    def is_local(self, row: int) -> bool:
        return row >= self.count

    def reason(self, row: int) -> str:
        return self.local.reason(row - self.count)


def mark_conflicts(shown: list[list], rows: list[np.ndarray], scores: list[np.ndarray],
                   names: ScoredNames) -> None:
    """Where texts near a row were approved for different concepts, say so on each of them.

    `shown`: a row's candidates, the last item of each its reasons; `rows` and `scores`: each
    candidate's name rows and their name scores for the row. A local name is near the row when
    it scores at least as well as every name the target itself has among the candidates: the
    row reads more like that site's text than like any official name. Two or more concepts
    with a near local name are a conflict, shown, never resolved silently.
    """
    official = max((float(s[r < names.count].max()) for r, s in zip(rows, scores)
                    if (r < names.count).any()), default=-np.inf)
    near = [i for i, (r, s) in enumerate(zip(rows, scores))
            if (r >= names.count).any() and float(s[r >= names.count].max()) >= official]
    codes = [shown[i][2] for i in near]
    if len(set(codes)) < 2:
        return
    for i, code in zip(near, codes):
        others = ", ".join(sorted({c for c in codes if c != code}))
        shown[i][-1].append(f"conflict: texts near this one were approved for {others} too")


def rejected_reason(sites: tuple) -> str:
    where = f" at {', '.join(sites)}" if sites else ""
    return f"✘ rejected for this text{where}"
