"""The lexical index: character n-gram TF-IDF over a vocabulary's names (Usagi's method).

Row i of the matrix is `vocab.names` row i, so lexical hits point back to concepts exactly as
embedding hits do. The fitted vocabulary, IDF weights and matrix are cached beside the FAISS index,
keyed by the vocabulary's content hash and the settings.
"""
from __future__ import annotations

import functools
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..files import atomic_path, build_once, sha256_text
from ..terms import binary_matrix, char_wb_ngrams, smooth_idf, tfidf
from ..vocab.vocabulary import ENCODER_ONLY_EXPANDED, Vocabulary

log = logging.getLogger(__name__)

LEXICAL_FORMAT = 3  # 2: binary term frequency; 3: encoder-only name types left empty
# Names the encoder reads but the n-gram index does not: an expanded LOINC short name ("Glucose
# SerPl serum or plasma mCnc") shares the n-grams of a bare analyte query with every code of that
# analyte and outscores its long name (MIMIC-IV labels, lexical acc@1 0.424 → 0.384 with them).
ENCODER_ONLY_NAME_TYPES = {ENCODER_ONLY_EXPANDED}
NGRAMS = (2, 4)  # character n-gram lengths, within word boundaries
# Binary term frequency: a name that repeats a word ("Hemoglobin A/Hemoglobin.total") must not
# outscore the plain name ("Hemoglobin [Mass/volume] in Blood") on a bare "Hemoglobin".
# MIMIC-IV dev labels, hybrid: acc@1 0.514 → 0.537 (README, "Hybrid lab ranking").
_ngrams = functools.partial(char_wb_ngrams, sizes=NGRAMS)


def normalize_text(text: str) -> str:
    """Lower-case; punctuation and brackets to spaces, so "[Mass/volume]" ≈ "mass volume"."""
    return re.sub(r"[^\w#%]+", " ", text.lower()).strip()


@dataclass
class LexicalIndex:
    """TF-IDF vectors of a vocabulary's names (row i = vocab.names row i)."""

    vocabulary: dict[str, int]  # n-gram → column
    idf: np.ndarray  # per column (codemap.terms.smooth_idf)
    matrix: sp.csr_matrix  # names × n-grams, rows L2-normalised
    folder: Path

    def embed(self, texts: list[str]) -> sp.csr_matrix:
        counts, _ = binary_matrix((normalize_text(t) for t in texts), _ngrams, self.vocabulary)
        return tfidf(counts, self.idf)

    def similarity(self, texts: list[str]) -> np.ndarray:
        """Cosine similarity of each text to every name: a dense (texts × names) matrix."""
        return (self.embed(texts) @ self.matrix.T).toarray().astype(np.float32)


def load_or_build_lexical(vocab: Vocabulary, cache_dir: Path) -> LexicalIndex:
    """Load the cached TF-IDF index of `vocab`'s names, or fit and cache it."""
    # Keyed on the name types too: which names are left empty depends on them.
    key = sha256_text(str(LEXICAL_FORMAT), str(NGRAMS), vocab.typed_hash)[:24]
    folder = Path(cache_dir) / "lexical" / f"{vocab.id}-{key}"
    names = [("" if kind in ENCODER_ONLY_NAME_TYPES else normalize_text(n))
             for n, kind in zip(vocab.names["name"], vocab.names["name_type"])]
    return build_once(folder, lambda: _load_lexical(folder, len(names)),
                      lambda: _build_lexical(folder, names, vocab),
                      f"indexing the spellings of {vocab.id}")


def _load_lexical(folder: Path, count: int) -> LexicalIndex | None:
    if not (folder / "manifest.json").exists():
        return None
    try:
        terms = json.loads((folder / "terms.json").read_text(encoding="utf-8"))
        idf = np.load(folder / "idf.npy", allow_pickle=False)
        matrix = sp.load_npz(folder / "matrix.npz").tocsr()  # load_npz never unpickles
        if matrix.shape == (count, len(terms)) and len(idf) == len(terms):
            return LexicalIndex({t: i for i, t in enumerate(terms)}, idf, matrix, folder)
    except (OSError, ValueError, KeyError, EOFError):
        pass  # a damaged cache file: rebuilt
    log.warning("lexical cache %s does not match the vocabulary; rebuilding", folder)
    return None


def fit_lexical(names: list[str], folder: Path) -> LexicalIndex:
    """The n-gram index of `names` (normalised text), fitted in memory."""
    counts, vocabulary = binary_matrix(names, _ngrams)
    idf = smooth_idf(counts)
    return LexicalIndex(vocabulary, idf, tfidf(counts, idf), folder)


def _build_lexical(folder: Path, names: list[str], vocab: Vocabulary) -> LexicalIndex:
    fitted = fit_lexical(names, folder)
    vocabulary, idf, matrix = fitted.vocabulary, fitted.idf, fitted.matrix
    folder.mkdir(parents=True, exist_ok=True)
    with atomic_path(folder / "terms.json") as tmp:
        tmp.write_text(json.dumps(list(vocabulary)), encoding="utf-8")  # numbered in this order
    with atomic_path(folder / "idf.npy") as tmp:
        with open(tmp, "wb") as handle:
            np.save(handle, idf)
    with atomic_path(folder / "matrix.npz") as tmp:
        with open(tmp, "wb") as handle:
            sp.save_npz(handle, matrix)
    # Written last: its presence says the files beside it are complete.
    with atomic_path(folder / "manifest.json") as tmp:
        tmp.write_text(json.dumps({"format": LEXICAL_FORMAT, "ngrams": list(NGRAMS),
                                   "vocab_hash": vocab.content_hash, "count": len(names)}),
                       encoding="utf-8")
    return fitted
