"""Atomic writes and content hashes: every output and cache file goes through here."""
from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Iterator


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it over `path` only if the block succeeds.

    A run killed half-way leaves the temporary file (removed on a clean exception) but never a
    half-written `path`: the rename is atomic on one file system.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def remove_stale_temps(path: str | os.PathLike) -> list[Path]:
    """Remove the temporary files a killed write of `path` left (`.NAME.*.part`, see atomic_path),
    or, for a folder, every such file in it. Call it only where no other process writes `path`."""
    target = Path(path)
    pattern = ".*.part" if target.is_dir() else f".{target.name}.*.part"
    stale = list((target if target.is_dir() else target.parent).glob(pattern))
    for tmp in stale:
        tmp.unlink(missing_ok=True)
    return stale


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes, read in chunks so big weight files do not fill memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def sha256_text(*parts: str) -> str:
    """Hex sha256 of text parts, each terminated so that ("ab", "c") != ("a", "bc")."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()
