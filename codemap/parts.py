"""A folder of Parquet parts plus a manifest: the output of big runs (`codemap map --engine ray`).

One part holds the candidates of one block of source rows. The manifest (manifest.json) lists each
finished part with its source file, first row, row counts and sha256, and the run's settings: a
rerun with the same settings and output folder skips the parts whose files still match, and a
rerun with other settings is refused instead of mixing two runs in one folder. Parts are written
atomically and the manifest is rewritten after each one, so a killed run loses at most the parts
in flight. `write_review_parts` turns the parts back into review workbooks (one xlsx sheet holds
1,048,576 rows, so big runs are reviewed per site or per chunk of source rows).

Needs pyarrow (the `ray` extra installs it); the core install does not import this module.
"""
from __future__ import annotations

import io
import json
import logging
import re
from pathlib import Path

import pandas as pd

from .errors import CodemapError
from .files import atomic_path, sha256_file

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
PARTS_FORMAT = 1
SOURCE_FILE_COLUMN = "source_file"  # added before the candidate columns: which list a row is from


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
    """The output folder of one run: which parts are finished, and recording new ones."""

    def __init__(self, folder: Path, run_key: str, settings: dict):
        self.folder = Path(folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise CodemapError(f"{self.folder}: is a file; --engine ray writes a folder of Parquet "
                               "parts, give -o a folder name")
        self.manifest = self._open(run_key, settings)

    def _open(self, run_key: str, settings: dict) -> dict:
        path = self.folder / MANIFEST
        fresh = {"format": PARTS_FORMAT, "run_key": run_key, "settings": settings, "run": {},
                 "parts": {}}
        if not path.exists():
            if self.folder.is_dir() and any(self.folder.glob("*.parquet")):
                raise CodemapError(f"{self.folder}: holds Parquet files but no {MANIFEST}; "
                                   "use a new output folder")
            return fresh
        manifest = read_manifest(self.folder)
        if manifest.get("run_key") != run_key:
            raise CodemapError(f"{self.folder}: holds parts of a run with other sources or "
                               "settings; use a new output folder (or delete this one) to start over")
        return manifest

    def finished(self, name: str) -> bool:
        """Listed in the manifest and its file still has the recorded checksum."""
        entry = self.manifest["parts"].get(name)
        path = self.folder / name
        if entry is None or not path.exists():
            return False
        if sha256_file(path) != entry["sha256"]:
            log.warning("%s does not match the manifest's checksum; mapping it again", path)
            return False
        return True

    def add(self, name: str, data: bytes, entry: dict) -> None:
        """Write one part atomically, then record it (the manifest is rewritten last)."""
        with atomic_path(self.folder / name) as tmp:
            tmp.write_bytes(data)
        self.manifest["parts"][name] = {**entry, "bytes": len(data),
                                        "sha256": sha256_file(self.folder / name)}
        self.save()

    def save(self, **fields) -> None:
        self.manifest.update(fields)
        with atomic_path(self.folder / MANIFEST) as tmp:
            tmp.write_text(json.dumps(self.manifest, indent=1, ensure_ascii=False), encoding="utf-8")


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


def write_review_parts(folder: Path, output: Path, *, site: str | None = None,
                       rows: int | None = None) -> list[Path]:
    """Review workbooks from a parts folder with the normal writer: one workbook, one per value of
    the `site` column (`labs.xlsx` → `labs-<value>.xlsx`), or one per `rows` source rows.

    Raises CodemapError for an unknown site column or a workbook that would not fit one sheet.
    """
    from .writers import write_candidates

    frame = read_parts(folder)
    run = {**read_manifest(folder).get("run", {}), "parts_folder": str(folder)}
    output = Path(output)
    if site is not None:
        if site not in frame.columns:
            raise CodemapError(f"{folder}: no column named {site!r} in the parts "
                               f"(columns: {', '.join(frame.columns)})")
        groups = [(str(value), group) for value, group in frame.groupby(site, sort=True)]
    elif rows is not None:
        # Split between source rows, never inside one row's candidates.
        keys = frame[SOURCE_FILE_COLUMN].astype(str) + "\x00" + frame["source_row"].astype(str)
        number = (keys != keys.shift()).cumsum() - 1
        groups = [(f"{n + 1:03d}", group) for n, group in frame.groupby(number // rows, sort=True)]
    else:
        return [write_candidates(frame, output, run)]
    written = []
    for label, group in groups:
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", label) or "blank"
        written.append(write_candidates(group.reset_index(drop=True),
                                        output.with_name(f"{output.stem}-{safe}{output.suffix}"),
                                        {**run, "part_of_review": label}))
    return written
