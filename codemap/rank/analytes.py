"""A large target's analytes searched as targets of their own, for the two stages' pools.

The two stages pool each row's nearest names (codemap.rank.two_stage). At a million names those
are crowded by near-copies of other tests' names, and a bare "Protein" or "Red Blood Cells" found
no name of its own analyte among them: pool recall 0.86 on MIMIC labels against a 1.4M-name
table (benchmarks/results/pool-scale/). An analyte is short and there are few of them (15,137 in
that table), so each row also searches them directly, by the model and by spelling, and every
code of its best analytes joins its pool: what issue #52 asks of a LOINC target ("every code of
the row's best-matching components enters the pool"), at the size where the names no longer
bring it.

The analytes are a domain's families (ComponentBackoff.family: a LOINC component before its
subpart, divisor and qualifier); their vectors are embedded once per (target, model) by the
model, and cached beside the two stages.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..embed.encoder import Encoder
from ..files import atomic_path, build_once, sha256_text
from .lexical import LexicalIndex, fit_lexical, normalize_text

# A row's best analytes by the encoder and by n-grams that join its pool: the fewest that keep
# the gold in the pool for 95 % of each lab dev set against a 1M-name table that carries LOINC's
# COMPONENT as a release does (benchmarks/results/pool-scale/RULE-analyte-cut.md; 5 and 1 before,
# chosen on a table whose codes outside the Top 2000 had no component).
BY_ENCODER = 8
BY_SPELLING = 5


@dataclass
class AnalyteIndex:
    """The analytes' model vectors and n-gram index, row i = keys[i]."""

    keys: list[str]
    vectors: np.ndarray
    lexical: LexicalIndex

    @staticmethod
    def load(keys: list[str], encoder: Encoder, folder: Path, progress: bool = False) -> "AnalyteIndex":
        """The index of `keys`, their vectors read from `folder` when embedded before."""
        path = Path(folder) / "analytes.npy"
        meta = Path(folder) / "analytes.json"
        digest = sha256_text(*keys)[:24]

        def cached():
            if meta.exists() and path.exists() and json.loads(meta.read_text())["keys"] == digest:
                return np.load(path, allow_pickle=False)
            return None

        def build():
            vectors = encoder.encode(keys, progress=progress, desc="embedding the target's analytes")
            folder.mkdir(parents=True, exist_ok=True)
            with atomic_path(path) as tmp:
                with open(tmp, "wb") as handle:
                    np.save(handle, vectors)
            with atomic_path(meta) as tmp:  # last: it says the vectors beside it are whole
                tmp.write_text(json.dumps({"keys": digest, "count": len(keys)}))
            return vectors

        vectors = build_once(path, cached, build, "embedding the target's analytes")
        return AnalyteIndex(keys, vectors, fit_lexical([normalize_text(k) for k in keys], folder))

    def best(self, queries: np.ndarray, texts: list[str], second=None) -> list[np.ndarray]:
        """Per row, the key numbers of its BY_ENCODER best analytes by the model and its
        BY_SPELLING best by n-grams (scores: see `scores`)."""
        encoder, spelling = self.scores(queries, texts, second)
        return [np.union1d(_top(e, BY_ENCODER), _top(s, BY_SPELLING, positive=True))
                for e, s in zip(encoder, spelling)]

    def scores(self, queries: np.ndarray, texts: list[str], second=None) -> tuple[np.ndarray, np.ndarray]:
        """Rows × analytes scores by the model and by n-grams, each the better of the row's two
        readings (`second`: codemap.rank.hybrid's _SecondReadings, or None)."""
        encoder = queries @ self.vectors.T
        spelling = self.lexical.similarity(texts)
        if second is not None:
            encoder[second.rows] = np.maximum(encoder[second.rows], second.vectors @ self.vectors.T)
            spelling[second.rows] = np.maximum(spelling[second.rows], self.lexical.similarity(second.texts))
        return encoder, spelling


def _top(scores: np.ndarray, k: int, positive: bool = False) -> np.ndarray:
    k = min(k, len(scores))
    if k == 0:
        return np.zeros(0, np.int64)
    top = np.argpartition(-scores, k - 1)[:k]
    return top[scores[top] > 0] if positive else top
