"""A folder of Parquet parts plus a manifest: how codemap keeps mapped blocks, resumably.

One part holds the candidates of one block of source rows; the manifest (manifest.json) lists each
finished part with its row counts and sha256, and the run's key (sources, settings, model,
vocabulary). Parts are written atomically and the manifest is rewritten after each one, so a killed
run loses at most the parts in flight, and a rerun maps again only the parts that are missing or
no longer match their checksum. Two users of the one class:

- `codemap map` (local engine) keeps its finished blocks in a hidden working folder beside the
  output (`PartsFolder.beside`: `.STEM.parts/`, shared by every suffix of the output so a list too
  long for .xlsx can be rerun as .csv without mapping it again); a rerun with another key starts
  afresh there, and the folder is removed once the output is written.
- `codemap map --engine ray` writes its parts as the output itself; a rerun with another key is
  refused instead of mixing two runs in one folder. `writers.write_review_parts` turns such a
  folder into review workbooks (one xlsx sheet holds 1,048,576 rows, so big runs are reviewed per
  site or per chunk of source rows).
"""
from __future__ import annotations

import io
import json
import logging
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from ..errors import CodemapError
from ..files import atomic_path, remove_stale_temps, sha256_file

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
PARTS_FORMAT = 2


def part_name(source_number: int, source: Path, first_row: int) -> str:
    """`003-labs-r000002.parquet`: sorts in source order, then in row order."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(source).stem)[:60]
    return f"{source_number:03d}-{stem}-r{first_row:09d}.parquet"


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    """A part's file content; made where the candidates are (a worker), written by the driver."""
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


class PartsFolder:
    """The parts of one run: which are finished, recording new ones, reading them back in order."""

    def __init__(self, folder: str | Path, run_key: str, settings: dict | None = None, *,
                 restart: bool = False):
        """Open (or start) the parts of the run `run_key` in `folder`. A folder holding another
        run is emptied when `restart`, else refused with CodemapError."""
        self.folder = Path(folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise CodemapError(f"{self.folder}: is a file; --engine ray writes a folder of Parquet "
                               "parts, give -o a folder name")
        self.manifest = self._open(run_key, settings or {}, restart)
        self.folder.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(self.folder)

    @classmethod
    def beside(cls, output: str | Path, run_key: str) -> "PartsFolder":
        """The hidden working folder of a streamed run that writes `output`."""
        output = Path(output)
        return cls(output.with_name(f".{output.stem}.parts"), run_key, restart=True)

    def _open(self, run_key: str, settings: dict, restart: bool) -> dict:
        fresh = {"format": PARTS_FORMAT, "run_key": run_key, "settings": settings, "run": {},
                 "parts": {}}
        if restart:
            manifest = _read_json(self.folder / MANIFEST)
            if manifest.get("format") != PARTS_FORMAT or manifest.get("run_key") != run_key:
                shutil.rmtree(self.folder, ignore_errors=True)
                return fresh
        elif not (self.folder / MANIFEST).exists():
            if self.folder.is_dir() and any(self.folder.glob("*.parquet")):
                raise CodemapError(f"{self.folder}: holds Parquet files but no {MANIFEST}; "
                                   "use a new output folder")
            return fresh
        else:
            manifest = read_manifest(self.folder)
            if manifest.get("run_key") != run_key:
                raise CodemapError(f"{self.folder}: holds parts of a run with other sources or "
                                   "settings; use a new output folder (or delete this one) to "
                                   "start over")
        manifest["parts"] = {name: entry for name, entry in manifest.get("parts", {}).items()
                             if self._intact(name, entry)}
        return manifest

    def _intact(self, name: str, entry: dict) -> bool:
        path = self.folder / name
        if not path.exists():
            return False
        if sha256_file(path) != entry.get("sha256"):
            log.warning("%s does not match the manifest's checksum; mapping it again", path)
            return False
        return True

    @property
    def parts(self) -> dict:
        """Finished part name → its manifest entry (rows, candidates, bytes, sha256, …)."""
        return self.manifest["parts"]

    def finished(self, name: str) -> bool:
        return name in self.parts

    def add(self, name: str, data: bytes | pd.DataFrame, entry: dict | None = None) -> None:
        """Write one part atomically, then record it (the manifest is rewritten last)."""
        entry = dict(entry or {})
        if isinstance(data, pd.DataFrame):
            entry.setdefault("candidates", len(data))
            data = parquet_bytes(data)
        with atomic_path(self.folder / name) as tmp:
            tmp.write_bytes(data)
        self.parts[name] = {**entry, "bytes": len(data), "sha256": sha256_file(self.folder / name)}
        self.save()

    def save(self, **fields) -> None:
        self.manifest.update(fields)
        with atomic_path(self.folder / MANIFEST) as tmp:
            tmp.write_text(json.dumps(self.manifest, indent=1, ensure_ascii=False), encoding="utf-8")

    def read(self, name: str, columns: list[str] | None = None) -> pd.DataFrame:
        return pd.read_parquet(self.folder / name, columns=columns)

    def frames(self) -> Iterator[pd.DataFrame]:
        """The finished parts in name order (source, then row order), one at a time."""
        for name in sorted(self.parts):
            yield self.read(name)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def read_manifest(folder: Path) -> dict:
    path = Path(folder) / MANIFEST
    if not path.exists():
        raise CodemapError(f"{folder}: no {MANIFEST}; expected the output folder of "
                           "`codemap map --engine ray`")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError) as exc:
        raise CodemapError(f"{path}: unreadable manifest ({exc}); map again into a new folder") from None
    if not isinstance(manifest, dict) or manifest.get("format") != PARTS_FORMAT:
        raise CodemapError(f"{path}: not a codemap parts manifest (format {PARTS_FORMAT})")
    return manifest


def read_parts(folder: Path) -> pd.DataFrame:
    """Every finished part of a parts folder, in source and row order, checksums verified.

    Raises CodemapError when the folder is not a parts folder, a part is missing or changed, or the
    run is not complete (map again with the same command to finish it).
    """
    folder = Path(folder)
    manifest = read_manifest(folder)
    if not manifest.get("complete"):
        raise CodemapError(f"{folder}: the run is not finished ({len(manifest['parts'])} parts "
                           "done); run the same `codemap map` command again to finish it")
    frames = []
    for name, entry in sorted(manifest["parts"].items()):
        path = folder / name
        if not path.exists() or sha256_file(path) != entry["sha256"]:
            raise CodemapError(f"{path}: missing or changed since it was written (checksum); "
                               "delete it and run the same `codemap map` command again")
        frames.append(pd.read_parquet(path))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
