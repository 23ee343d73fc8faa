"""Vectors of texts kept by text, per model: a text is embedded at most once across runs.

For the few names that change between runs of the same target (the local names reviewers approve,
codemap.rank.local_names): re-embedding all of them every run would cost seconds per thousand,
and a full re-index is what they must never need. One file per model (fingerprint and runtime
variant), rewritten atomically with what a run added, so a killed run leaves the cache as it was.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from ..files import atomic_path, locked, sha256_text
from .encoder import Encoder

log = logging.getLogger(__name__)


def cached_vectors(encoder: Encoder, texts: list[str], cache_dir: Path,
                   desc: str = "embedding names") -> np.ndarray:
    """The encoder's vectors of `texts` (rows in order), embedding only those never embedded by
    this model before."""
    if not texts:
        return np.zeros((0, encoder.dim), np.float32)
    model = sha256_text(encoder.info.fingerprint(), encoder.variant)[:24]
    path = Path(cache_dir) / "name-vectors" / f"{model}.npz"
    known = _load(path, encoder.dim)
    keys = [sha256_text(t)[:32] for t in texts]
    missing = sorted({k: t for k, t in zip(keys, texts) if k not in known}.items())
    if missing:
        vectors = encoder.encode([t for _, t in missing], desc=desc)
        with locked(path, "adding to the name vector cache"):
            # What other processes added meanwhile is kept: the file is read again under the lock.
            known = {**_load(path, encoder.dim), **known,
                     **{k: v for (k, _), v in zip(missing, vectors)}}
            _save(path, known)
    return np.stack([known[k] for k in keys]).astype(np.float32)


def _load(path: Path, dim: int) -> dict[str, np.ndarray]:
    if not path.exists():
        return {}
    try:
        with np.load(path, allow_pickle=False) as stored:
            keys, vectors = stored["keys"], stored["vectors"]
    except (OSError, ValueError, KeyError, EOFError):
        log.warning("name vector cache %s is damaged; starting it again", path)
        return {}
    if vectors.ndim != 2 or vectors.shape[1] != dim or len(keys) != len(vectors):
        return {}
    return dict(zip(keys.tolist(), vectors))


def _save(path: Path, known: dict[str, np.ndarray]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    keys = np.array(list(known), dtype="U32")
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as handle:
            np.savez(handle, keys=keys, vectors=np.stack(list(known.values())).astype(np.float32))
