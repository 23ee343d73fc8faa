"""Shared file helpers of the training-graph loaders."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from codemap.errors import CodemapError
from codemap.read import read_table


def one_file(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    if not found:
        raise CodemapError(f"{folder}: no {pattern} file; --data-dir must hold the public data folders")
    return found[-1]


def read_data(path: Path, header: bool = True) -> pd.DataFrame:
    if not path.exists():
        raise CodemapError(f"{path}: missing; --data-dir must hold the public data folders")
    if header:
        return read_table(path)
    return pd.read_csv(path, sep="\t", header=None, dtype=str, keep_default_na=False)
