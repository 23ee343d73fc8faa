"""`codemap bench --names N`: how long this machine takes to index a target of N names in two
stages (codemap.rank.two_stage), with what peak memory, and what the example list then costs.

The target is the built-in LOINC's names, then variants of them under codes of their own (a time
or a method added, the bracketed property dropped, lower case in alternate blocks of rounds) up to
N: a lab vocabulary's words at a release's size, so the static stage distils and the n-gram index
counts what a real release would give them. Everything is built in a fresh temporary cache (the
model's export excepted) and removed afterwards. benchmarks/speed/vocab_scale.py builds its
tables from the same variants, with real LOINC names from ../shared/data between.
"""
from __future__ import annotations

import re
import resource
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import EncoderConfig, default_cache_dir
from ..embed.bench import EXAMPLE_LABS
from ..embed.encoder import Encoder
from ..read.readers import read_table
from ..vocab.vocabulary import Vocabulary, builtin_loinc
from .lexical import load_or_build_lexical
from .two_stage import POOL_NAMES, TwoStageIndex

METHODS = ["", "by immunoassay", "by automated count", "by manual count", "by test strip",
           "by chromatography", "by electrophoresis", "by calculation", "by microscopy"]
TIMES = ["", "24 hour", "8 hour", "post dose", "pre dose", "1 hour post challenge", "random"]


def name_variant(name: str, k: int) -> str:
    """Round k's variant of a name: another test of the same kind, as a release names it."""
    plain = re.sub(r"\s*\[[^\]]*\]", "", name).strip() or name
    text = " ".join(x for x in (plain, TIMES[(k // len(METHODS)) % len(TIMES)],
                                METHODS[k % len(METHODS)]) if x)
    lower = (k // (len(METHODS) * len(TIMES))) % 2 or text == name
    return text.lower() if lower else text


def with_variants(names: pd.DataFrame, size: int) -> pd.DataFrame:
    """(code, name) rows: `names`, then rounds of their variants under codes V<round>-<row>
    until `size` rows."""
    parts, left, k = [names[["code", "name"]]], size - len(names), 0
    while left > 0:
        take = names["name"].iloc[:left]
        parts.append(pd.DataFrame({"code": [f"V{k}-{i}" for i in range(len(take))],
                                   "name": [name_variant(n, k) for n in take]}))
        left, k = left - len(take), k + 1
    return pd.concat(parts, ignore_index=True)


@dataclass(frozen=True)
class ScaleResult:
    names: int
    lexical_s: float  # the n-gram index of every name
    static_s: float  # the static stage: tokens distilled, every name embedded statically
    rows: int
    pool_s: float  # the rows pooled, the pooled names embedded by the model
    embedded: int  # names the model embedded for the rows
    peak_rss_mb: float  # the process's peak resident memory, the model's included


def example_rows() -> list[str]:
    """The example list's labels (150 MIMIC-IV labels) where the repository is at hand, else as
    many of the built-in LOINC's short names."""
    if EXAMPLE_LABS.exists():
        return read_table(EXAMPLE_LABS)["label"].tolist()
    names = builtin_loinc().names
    return names.loc[names["name_type"] == "short", "name"].tolist()[:150]


def run_scale(size: int, rows: list[str], encoder: EncoderConfig = EncoderConfig()) -> ScaleResult:
    """Index a generated target of `size` names in two stages, then pool `rows` in it."""
    base = builtin_loinc().names
    names = with_variants(base[base["lang"] == "en"], size)
    vocab = Vocabulary(f"bench-{size}", "generated", names.drop_duplicates("code"),
                       names.assign(name_type="preferred", lang="en"))
    model = Encoder.load(encoder, default_cache_dir())  # the usual export, made once
    cache = Path(tempfile.mkdtemp(prefix="codemap-bench-"))
    try:
        started = time.perf_counter()
        lexical = load_or_build_lexical(vocab, cache)
        indexed = time.perf_counter()
        index = TwoStageIndex.load(vocab, model, lexical, cache)
        built = time.perf_counter()
        _, hits = index.search(None, POOL_NAMES, texts=rows)
        index.vectors[np.unique(hits[hits >= 0])]
        pooled = time.perf_counter()
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return ScaleResult(len(names), indexed - started, built - indexed, len(rows), pooled - built,
                       index.vectors.embedded_now,
                       resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
