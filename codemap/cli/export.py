"""`codemap export` and `codemap bench`: a model exported to ONNX and parity-checked, and the
ways of embedding timed against each other (both need the `export` extra)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..config import EncoderConfig
from .command import setup_logging, user_errors
from .options import BatchSize, Model

app = typer.Typer()


@app.command("export")
@user_errors
def export_command(
    model: str = typer.Argument(..., help="'default', a checkpoint folder (e.g. a `codemap train` "
                                          "run) or a hub id."),
    out: Path = typer.Option(..., "--out", "-o", help="Export folder to write (used as --model)."),
    int8: bool = typer.Option(False, "--int8", help="Add a dynamically quantised int8 variant "
                                                    "(the CPU default only when its top-1 agrees "
                                                    "with torch on >= 99% of parity queries)."),
    fp16: bool = typer.Option(False, "--fp16", help="Add an fp16 variant for CUDA."),
    optimize: bool = typer.Option(False, "--optimize", help="Fuse the fp32 graph with "
                                                            "onnxruntime's transformer optimiser."),
    parity_terms: Optional[int] = typer.Option(None, "--parity-terms", min=100,
                                               show_default="all 2,362",
                                               help="Check parity on this many LOINC short names."),
) -> None:
    """Export a model to ONNX (pooling and normalisation in the graph), parity-checked on real
    LOINC terms; `codemap map --model OUT` then runs without torch (needs the `export` extra).

    Example: codemap export default --out models/minilm-onnx --int8
    """
    from ..export import ExportConfig, export_model  # codemap.export needs torch: import it late
    from ..export.parity import CLEAR_LEAD

    setup_logging(False, False)
    result = export_model(ExportConfig(model=model, out=out, int8=int8, fp16=fp16,
                                       optimize=optimize, parity_terms=parity_terms))
    for name, r in result.report["variants"].items():
        typer.echo(f"{name:5} {r['file']:18} cosine min {r['cosine_min']:.5f} mean "
                   f"{r['cosine_mean']:.5f}  top-1 agreement {r['top1_agreement']:.3f} "
                   f"({r['top1_agreement_clear']:.3f} where torch leads by ≥ {CLEAR_LEAD})")
    typer.echo(f"exported {model} → {result.folder} in {result.seconds:.0f} s")


@app.command("bench")
@user_errors
def bench_command(
    model: Model = EncoderConfig.model,
    terms: int = typer.Option(5000, "--terms", "-n", min=100, help="Real terms to embed per method."),
    batch_size: BatchSize = EncoderConfig.batch_size,
    export: Optional[Path] = typer.Option(None, "--export",
                                          show_default="the model cache's, exported once",
                                          help="An existing export of MODEL."),
    names: int = typer.Option(0, "--names", min=0, show_default="off",
                              help="Instead: index a generated target of this many names (the "
                                   "built-in LOINC's and their variants) in two stages and pool "
                                   "the example list in it: seconds and peak memory."),
) -> None:
    """Time one model four ways on the same real terms (torch unsorted, torch sorted, ONNX fp32,
    ONNX int8): terms/s, ratios, peak memory, top-1 agreement (needs the `export` extra); with
    --names, how long this machine takes to index a large target.

    Example: codemap bench --model default --terms 5000
    """
    setup_logging(False, True)
    if names:
        _scale_bench(model, names)
        return
    from ..embed.bench import BenchConfig, run_bench

    rows, run = run_bench(BenchConfig(model=model, terms=terms, batch_size=batch_size,
                                      export=export))
    typer.echo(f"{run['terms']:,} terms (top-1 agreement: {run['queries']:,} queries vs "
               f"{run['corpus']:,} names; (a) leads clearly on {run['clear_share']:.0%} of them), "
               f"batch {run['batch_size']}, model {run['model']}")
    typer.echo("| method | terms/s | vs (a) | vs (b) | peak RSS added (MB) | top-1 agreement with (a) "
               "| on clear leads |")
    typer.echo("|---|---|---|---|---|---|---|")
    for r in rows:
        typer.echo(f"| {r.method} | {r.terms_per_s:,.0f} | {r.vs_reference:.2f}x | "
                   f"{r.vs_sorted:.2f}x | {r.peak_rss_mb:,.0f} | {r.top1_agreement:.3f} | "
                   f"{r.top1_agreement_clear:.3f} |")


def _scale_bench(model: str, names: int) -> None:
    from ..rank.scale_bench import example_rows, run_scale

    r = run_scale(names, example_rows(), EncoderConfig(model=model))
    typer.echo(f"{r.names:,} names (the built-in LOINC's and their variants), model {model}: "
               f"n-gram index {r.lexical_s:.1f} s, static stage {r.static_s:.1f} s, together "
               f"{r.lexical_s + r.static_s:.1f} s; {r.rows} rows pooled and their {r.embedded:,} "
               f"pooled names embedded in {r.pool_s:.1f} s; peak memory {r.peak_rss_mb:,.0f} MB")
