"""Name vectors embedded when first asked for, each name once across runs (a large target's
second stage, codemap.rank.two_stage).

Row i is vocab.names row i, as in a full index. The vectors live in a float16 file on disk of the
full size (a sparse file: rows never asked for take no space on the usual file systems) beside a
mask of the rows written; the mask is saved after the vectors, atomically, so a killed run loses
at most the rows it was embedding. Processes may share a store (the Ray engine's actors, once the
driver made it): each saves the mask it knows, so a row another process wrote meanwhile may be
embedded again, but a row is never read before it was written.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..files import atomic_path
from .encoder import Encoder

FORMAT = 1


class LazyVectors:
    """vectors[rows] as a full index's would give them, embedding the rows not yet embedded."""

    def __init__(self, folder: Path, names: list[str], encoder: Encoder):
        self.folder, self.names, self.encoder = Path(folder), names, encoder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.shape = (len(names), encoder.dim)
        path, mask = self.folder / "vectors.f16", self.folder / "done.npy"
        meta = self.folder / "lazy.json"
        fits = (meta.exists() and path.exists() and mask.exists()
                and json.loads(meta.read_text()) == self._meta())
        self.store = np.memmap(path, np.float16, "r+" if fits else "w+", shape=self.shape)
        self.done = np.load(mask, allow_pickle=False) if fits else np.zeros(len(names), bool)
        if not fits:
            with atomic_path(meta) as tmp:
                tmp.write_text(json.dumps(self._meta()))
        self.embedded_now = 0  # rows this process embedded

    def _meta(self) -> dict:
        return {"format": FORMAT, "count": self.shape[0], "dim": self.shape[1]}

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def embedded(self) -> int:
        return int(self.done.sum())

    def __getitem__(self, rows) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64)
        missing = np.unique(rows[~self.done[rows]])
        if len(missing):
            self.store[missing] = self.encoder.encode([self.names[i] for i in missing])
            self.store.flush()
            self.done[missing] = True
            with atomic_path(self.folder / "done.npy") as tmp:
                with open(tmp, "wb") as handle:
                    np.save(handle, self.done)
            self.embedded_now += len(missing)
        return np.asarray(self.store[rows], dtype=np.float32)
