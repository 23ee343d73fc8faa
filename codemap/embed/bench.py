"""`codemap bench`: one model, the same real terms, four ways of embedding them, in one process.

(a) PyTorch fp32 in fixed batches in input order, as the CODER / SapBERT reference code embeds a
    dictionary; (b) PyTorch fp32 through Encoder.encode (length-sorted batches); (c) the ONNX fp32
    export and (d) its int8 variant through Encoder.encode (plus fp16 when CUDA runs it). Each row
    reports terms/s, its ratio to (a) and (b), the peak resident memory added while it ran, and how
    often its nearest LOINC long name for each query equals (a)'s.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..config import EncoderConfig, default_cache_dir, model_cache_dir
from ..errors import CodemapError
from ..read.readers import read_table
from ..vocab.vocabulary import builtin_loinc
from .encoder import Encoder
from .manifest import Backend
from .models import resolve_model
from .onnx_cache import runtime_model
from .torch_backend import TorchBackend

log = logging.getLogger(__name__)

# MIMIC-IV demo lab labels shipped as the example (ODbL); used when the repo is at hand.
EXAMPLE_LABS = Path(__file__).resolve().parents[2] / "examples" / "labs.csv"


@dataclass(frozen=True)
class BenchConfig:
    model: str = "default"  # a torch model (as --model); it is exported to ONNX for (c) and (d)
    terms: int = 5000
    batch_size: int = 64
    export: Path | None = None  # an existing export of `model`; the model cache's if None


@dataclass(frozen=True)
class BenchRow:
    method: str
    seconds: float
    terms_per_s: float
    vs_reference: float  # ratio to (a)
    vs_sorted: float  # ratio to (b)
    peak_rss_mb: float  # resident memory added while this method ran
    top1_agreement: float  # with (a)
    top1_agreement_clear: float  # with (a), on the queries whose (a) top-1 leads clearly


def bench_terms(n: int) -> tuple[list[str], slice, slice]:
    """(terms, queries, corpus): MIMIC labels + LOINC short names (queries), then LOINC long
    common names (corpus), repeated in order up to `n` when there are fewer unique names; the
    slices pick the unique queries and corpus out of `terms` for the agreement check."""
    names = builtin_loinc().names
    queries = names.loc[names["name_type"] == "short", "name"].tolist()
    if EXAMPLE_LABS.exists():
        queries = read_table(EXAMPLE_LABS)["label"].tolist() + queries
    corpus = names.loc[names["name_type"] == "preferred", "name"].tolist()
    unique = queries + corpus
    if n < 100:
        raise CodemapError(f"--terms {n}: use at least 100 terms for a meaningful timing")
    terms = (unique * (n // len(unique) + 1))[:n]
    n_queries = min(len(queries), n // 2)
    return terms, slice(0, n_queries), slice(n_queries, min(n, len(unique)))


def run_bench(config: BenchConfig) -> tuple[list[BenchRow], dict]:
    """Run (a)-(d) on the same terms; returns the rows and a description of the run."""
    info = resolve_model(config.model)
    if info.backend is Backend.ONNX:
        raise CodemapError(f"{info.path}: bench needs the PyTorch model (it exports it itself); "
                           f"pass the checkpoint, and the export with --export")
    terms, queries, corpus = bench_terms(config.terms)
    enc_config = EncoderConfig(model=config.model, batch_size=config.batch_size, device="cpu")
    # The export `--backend auto` uses (made once into the model cache if missing), unless given.
    onnx_info = (resolve_model(str(config.export)) if config.export
                 else runtime_model(info, "onnx", model_cache_dir(default_cache_dir())))
    torch_encoder = Encoder(info, enc_config)
    # The reference reads what the Encoder reads: each term with the model's prefix ("query: ").
    prefixed = [info.prefix + term for term in terms]
    runs = [("a torch fp32, fixed unsorted batches",
             lambda: _reference(torch_encoder._backend, prefixed, config.batch_size)),
            ("b torch fp32, length-sorted (Encoder)", lambda: torch_encoder.encode(terms))]
    for variant, filename in onnx_info.extra.get("variants", {}).items():
        if variant == "fp16":
            continue  # CPU bench; fp16 runs only on CUDA
        encoder = Encoder(dataclasses.replace(onnx_info, onnx_file=filename), enc_config)
        runs.append((f"{chr(ord('a') + len(runs))} onnx {variant}",
                     lambda e=encoder: e.encode(terms)))
    rows, clear_share = _measure(runs, terms, queries, corpus)
    return rows, {"terms": len(terms), "queries": queries.stop, "corpus": corpus.stop - corpus.start,
                  "clear_share": clear_share,
                  "batch_size": config.batch_size, "model": config.model,
                  "export": str(onnx_info.path)}


def _reference(backend: TorchBackend, terms: list[str], batch_size: int) -> np.ndarray:
    return np.concatenate([backend.embed(terms[i:i + batch_size])
                           for i in range(0, len(terms), batch_size)])


def _measure(runs, terms: list[str], queries: slice, corpus: slice) -> tuple[list[BenchRow], float]:
    """The rows, and the share of queries whose (a) top-1 leads clearly (export.parity)."""
    results = []
    for name, run in runs:
        with _PeakRss() as peak:
            started = time.perf_counter()
            vectors = run()
            seconds = time.perf_counter() - started
        results.append((name, seconds, vectors, peak.added_mb))
    from ..export.parity import clear_leads, top_k

    reference, sorted_speed = results[0], len(terms) / results[1][1]
    ref_top = top_k(reference[2][queries], reference[2][corpus], 2)
    clear = clear_leads(reference[2][queries], reference[2][corpus], ref_top)
    rows = []
    for name, seconds, vectors, added in results:
        speed = len(terms) / seconds
        agree = top_k(vectors[queries], vectors[corpus], 2)[:, 0] == ref_top[:, 0]
        rows.append(BenchRow(method=name, seconds=seconds, terms_per_s=speed,
                             vs_reference=speed / (len(terms) / reference[1]),
                             vs_sorted=speed / sorted_speed, peak_rss_mb=added,
                             top1_agreement=float(agree.mean()),
                             top1_agreement_clear=float(agree[clear].mean()) if clear.any() else 1.0))
    return rows, float(clear.mean())


class _PeakRss:
    """Peak resident set size above the level at entry, sampled every 10 ms (Linux /proc)."""

    def __enter__(self):
        self.start = self.peak = _rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, _rss_mb())

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_mb())
        self.added_mb = self.peak - self.start


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return float("nan")
