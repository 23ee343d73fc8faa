"""Frozen settings for each stage. Defaults live here; CLI options take theirs from these."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def default_cache_dir() -> Path:
    """$CODEMAP_CACHE_DIR, else $XDG_CACHE_HOME/codemap, else ~/.cache/codemap."""
    if os.environ.get("CODEMAP_CACHE_DIR"):
        return Path(os.environ["CODEMAP_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "codemap"


@dataclass(frozen=True)
class ReadOptions:
    """How to read a source code list (CSV, TSV or a workbook sheet)."""

    sheet: str | None = None  # workbook sheet name; first sheet when None
    encoding: str | None = None  # detected when None (UTF-8, UTF-8 with BOM, cp1252)
    code_col: str | None = None  # detected from common header names when None
    text_cols: tuple[str, ...] = ()  # joined with " " into the query text; detected when empty
    unit_col: str | None = None
    specimen_col: str | None = None


@dataclass(frozen=True)
class EncoderConfig:
    """Which model embeds terms, and how."""

    model: str = "default"  # "default", "multilingual", a folder, an ONNX export or a hub id
    batch_size: int = 64
    device: str = "auto"  # "auto", "cpu" or "cuda"


@dataclass(frozen=True)
class RankConfig:
    """How search hits become candidates."""

    top_k: int = 10
    # Names fetched per wanted candidate before collapsing to distinct concepts: a concept with
    # many near-identical names would otherwise crowd the others out of the top-k.
    names_per_candidate: int = 5


@dataclass(frozen=True)
class MapConfig:
    """One `codemap map` run."""

    source: Path
    target: str
    read: ReadOptions = field(default_factory=ReadOptions)
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    rank: RankConfig = field(default_factory=RankConfig)
    cache_dir: Path = Path.home() / ".cache" / "codemap"
    progress: bool = True


@dataclass(frozen=True)
class EvalConfig:
    """One `codemap eval` run: gold (query, code) pairs against a target."""

    gold: Path
    target: str
    gold_col: str
    text_cols: tuple[str, ...] = ()
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    rank: RankConfig = field(default_factory=RankConfig)
    cache_dir: Path = Path.home() / ".cache" / "codemap"
    progress: bool = True
