"""A static embedding distilled from the loaded encoder: the first stage of a large target.

Embedding every name of a million-name target with the transformer takes hours on a laptop CPU.
A static model (model2vec's idea, Tulkens & van Dongen 2024, written here on the libraries codemap
already has) embeds a text as the weighted mean of its tokens' vectors, where each token's vector
is the encoder's own vector of that token read alone: tens of thousands of names a second. Only
the tokens the target's names use are distilled (their vectors cached by token text,
codemap.embed.name_cache), projected onto their principal components (PCA_DIMS), and weighted by
their inverse document frequency among the names (a token every name has says nothing). It is
far weaker than the encoder alone; codemap.rank.two_stage pools candidates with it and the
lexical index, and the encoder then reads only the pooled names.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import CodemapError
from ..files import atomic_path
from .encoder import Encoder
from .name_cache import cached_vectors

PCA_DIMS = 128  # static vectors kept: a million names in 256 MB as float16
TOKENIZE_AT_ONCE = 50_000  # names tokenised per batch: bounds the token lists held at once


@dataclass
class StaticEmbedder:
    """Token id → row of `vectors` (projected, L2-normalised), with idf weights."""

    tokenizer: object  # tokenizers.Tokenizer, without padding or special tokens
    rows: dict  # token id → row
    vectors: np.ndarray  # (tokens, PCA_DIMS) float32
    weights: np.ndarray  # (tokens,) idf

    @staticmethod
    def distill(encoder: Encoder, names: list[str], cache_dir: Path,
                progress: bool = False) -> "StaticEmbedder":
        tokenizer = _tokenizer(encoder)
        # In batches: an Encoding keeps its tokens, offsets and masks (gigabytes at a million names)
        ids = [row for start in range(0, len(names), TOKENIZE_AT_ONCE)
               for row in _token_ids(tokenizer, names[start:start + TOKENIZE_AT_ONCE])]
        used, df = np.unique(np.concatenate(ids) if ids else np.zeros(0, np.int64), return_counts=True)
        texts = [_token_text(tokenizer.id_to_token(int(t))) for t in used]
        full = cached_vectors(encoder, texts, cache_dir, "distilling the static first stage")
        centred = full - full.mean(axis=0)
        dims = min(PCA_DIMS, *centred.shape)
        _, _, components = np.linalg.svd(centred, full_matrices=False)
        projected = centred @ components[:dims].T
        projected /= np.maximum(np.linalg.norm(projected, axis=1, keepdims=True), 1e-12)
        weights = np.log((1 + len(names)) / (1 + df)).astype(np.float32) + 1.0
        return StaticEmbedder(tokenizer, {int(t): i for i, t in enumerate(used)},
                              projected.astype(np.float32), weights)

    def save(self, path: Path) -> None:
        """The distilled arrays (not the tokenizer, which the model folder holds), atomically:
        a warm load of a large target must not re-tokenise its every name."""
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as handle:
                np.savez(handle, tokens=np.fromiter(self.rows, np.int64, len(self.rows)),
                         vectors=self.vectors, weights=self.weights)

    @staticmethod
    def load(encoder: Encoder, path: Path) -> "StaticEmbedder | None":
        """The embedder `save` wrote, or None when the file is missing or damaged."""
        try:
            with np.load(path, allow_pickle=False) as stored:
                tokens, vectors, weights = stored["tokens"], stored["vectors"], stored["weights"]
        except (OSError, ValueError, KeyError, EOFError):
            return None
        if not (len(tokens) == len(vectors) == len(weights)) or vectors.ndim != 2:
            return None
        return StaticEmbedder(_tokenizer(encoder), {int(t): i for i, t in enumerate(tokens)},
                              vectors.astype(np.float32), weights.astype(np.float32))

    def embed(self, texts: list[str]) -> np.ndarray:
        """(texts, PCA_DIMS) float32, L2-normalised; a text of unknown tokens only is zero."""
        out = []
        for start in range(0, len(texts), TOKENIZE_AT_ONCE):
            ids = _token_ids(self.tokenizer, texts[start:start + TOKENIZE_AT_ONCE])
            known = [[self.rows[t] for t in row if t in self.rows] for row in ids]
            lengths = np.array([len(k) for k in known])
            columns = np.concatenate([np.array(k, np.int64) for k in known]) if known else np.zeros(0, np.int64)
            matrix = sp.csr_matrix((self.weights[columns], columns, np.r_[0, np.cumsum(lengths)]),
                                   shape=(len(known), len(self.weights)))
            part = np.asarray(matrix @ self.vectors, dtype=np.float32)
            part /= np.maximum(np.linalg.norm(part, axis=1, keepdims=True), 1e-12)
            out.append(part)
        return np.concatenate(out) if out else np.zeros((0, self.vectors.shape[1]), np.float32)


def _tokenizer(encoder: Encoder):
    from tokenizers import Tokenizer  # installed with every backend (ONNX and torch)

    path = encoder.info.path / "tokenizer.json"
    if not path.exists():
        raise CodemapError(f"{encoder.info.path}: no tokenizer.json, which the two-stage index of a "
                           f"large target needs; set --two-stage-above above the target's name count to "
                           f"embed every name")
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _token_ids(tokenizer, texts: list[str]) -> list[np.ndarray]:
    return [np.array(e.ids, np.int64) for e in
            tokenizer.encode_batch([t.lower() for t in texts], add_special_tokens=False)]


def _token_text(token: str) -> str:
    """A token as a text to embed alone: SentencePiece's "▁" and WordPiece's "##" marks off."""
    return token.replace("▁", " ").removeprefix("##").strip() or token
