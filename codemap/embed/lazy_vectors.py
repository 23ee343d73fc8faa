"""Name vectors embedded when first asked for, each name once across runs (a large target's
second stage, codemap.rank.two_stage).

Row i is vocab.names row i, as in a full index. The vectors live in a float16 file on disk of the
full size (a sparse file: rows never asked for take no space on the usual file systems) beside a
mask of the rows written; the mask is saved after the vectors, atomically, so a killed run loses
at most the rows it was embedding. Processes may share a store (the Ray engine's actors, once the
driver made it, parallel `codemap map` runs): the store is made under a lock, and each process
adds its rows to the mask on disk under the same lock, so no row is lost from the mask and a
row is never read before it was written (a row another process wrote meanwhile may be embedded
again, with the same result).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..files import atomic_path, locked
from .encoder import Encoder

FORMAT = 1


class LazyVectors:
    """vectors[rows] as a full index's would give them, embedding the rows not yet embedded."""

    def __init__(self, folder: Path, names: list[str], encoder: Encoder):
        self.folder, self.names, self.encoder = Path(folder), names, encoder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.shape = (len(names), encoder.dim)
        path, self.mask = self.folder / "vectors.f16", self.folder / "done.npy"
        meta = self.folder / "lazy.json"
        with locked(self.mask, "writing name vectors"):
            fits = (meta.exists() and path.exists() and self.mask.exists()
                    and json.loads(meta.read_text()) == self._meta())
            if not fits:  # a new store: the meta file last, so a killed start is made again
                meta.unlink(missing_ok=True)
                self._save_mask(np.zeros(len(names), bool))
                np.memmap(path, np.float16, "w+", shape=self.shape).flush()
                with atomic_path(meta) as tmp:
                    tmp.write_text(json.dumps(self._meta()))
            self.done = np.load(self.mask, allow_pickle=False)
        self.store = np.memmap(path, np.float16, "r+", shape=self.shape)
        self.embedded_now = 0  # rows this process embedded

    def _save_mask(self, done: np.ndarray) -> None:
        with atomic_path(self.mask) as tmp:
            with open(tmp, "wb") as handle:
                np.save(handle, done)

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
            with locked(self.mask, "writing name vectors"):  # the rows others added are kept
                self.done = np.load(self.mask, allow_pickle=False) | self.done
                self.done[missing] = True
                self._save_mask(self.done)
            self.embedded_now += len(missing)
        return np.asarray(self.store[rows], dtype=np.float32)
