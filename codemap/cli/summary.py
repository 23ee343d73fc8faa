"""What the CLI prints after a run: one screen, for a person."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import typer
from rich.console import Console
from rich.table import Table

from ..decide.triage import NO_CANDIDATES, SUGGESTIONS

SCORE_BANDS = (0.9, 0.8, 0.7, 0.5)


def summary_console() -> Console:
    """Where summaries print: lines never wrapped by rich (a log or a pipe gets each line whole,
    not "2,377 \\nconcepts" at column 80); tables as wide as they need where nothing says how
    wide the screen is."""
    return Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)


def tier_line(tiers: dict) -> str:
    """"review tiers (sources): …" — the same line for the local and the Ray engine."""
    names = [*SUGGESTIONS, NO_CANDIDATES] if NO_CANDIDATES in tiers else SUGGESTIONS
    return "review tiers (sources): " + ", ".join(f"{name} {tiers.get(name, 0):,}" for name in names)


def print_map_result(result, output: Path) -> None:
    """What `codemap map` did: the local engine's MapResult or the Ray engine's counts."""
    if isinstance(result, dict):
        print_ray_summary(result, output)
    else:
        print_map_summary(result, output)


def print_ray_summary(counts: dict, output: Path) -> None:
    """Rows and parts of a Ray run, and its review tiers."""
    typer.echo(f"{counts['rows']:,} rows of {counts['sources']} list(s) → {counts['parts']} "
               f"parts in {output} ({counts['skipped']} already finished, "
               f"{counts['mapped']} mapped in {counts['seconds']:.1f} s)")
    if counts["tiers"]:
        typer.echo(tier_line(counts["tiers"]))


def print_map_summary(result, output: Path, console: Console | None = None) -> None:
    """Rows read / mapped, the top-score distribution, timings and cache use."""
    console = console or summary_console()
    run = result.run
    frame = result.candidates
    top = frame[frame["rank"] == 1]["score"].to_numpy(dtype=float)
    console.print(f"[bold]codemap map[/bold]  {run['source']} → {run['target']} "
                  f"({run['target_version']}, {run['target_concepts']:,} concepts)")
    console.print(f"model {run['model']} ({run['backend']}, {run['pooling']} pooling); "
                  f"index {run['index_cache']} in {result.timings['index']:.1f}s")
    if str(run.get("index_kind", "")).startswith("two-stage"):
        console.print(f"large target: {run['index_choice']}; {run['index_kind']}")
    elif "another language" in str(run.get("index_choice", "")):
        console.print(f"large target: {run['index_choice']}")
    console.print(f"rows read {run['rows_read']:,}; mapped {len(top):,}; "
                  f"empty text {run['rows_empty']:,}; language {run['source_language']}")
    if _needs_multilingual(result):
        console.print(f"[yellow]note:[/yellow] the source looks {result.language.lang}, and "
                      f"the {run['model']} model reads English best; try --model default "
                      f"(multilingual)")
    if len(top):
        bands = ", ".join(f"≥{b:.1f}: {np.mean(top >= b):.0%}" for b in SCORE_BANDS)
        console.print(f"top-1 score median {np.median(top):.3f}; {bands}")
    if result.tiers:
        console.print(tier_line(result.tiers))
        if run.get("broader_proposals"):
            console.print(f"broader (uphill) proposals: {run['broader_proposals']:,} sources")
    console.print(f"confidence: {run.get('confidence', 'none')}")
    if str(run.get("conventions", "none")).startswith("from site"):
        console.print(f"conventions: {run['conventions']} (--unit-system {run.get('unit_system')}, "
                      f"--methods {run.get('methods')})")
    if run.get("local_names") not in (None, "none") and not str(run["local_names"]).startswith("off"):
        console.print(f"local names (approved at sites): {run['local_names']}")
    for name in ("pre_approve", "auto_accept"):  # "N rows ≥ p: expected precision P"
        if run.get(name):
            console.print(f"{name.replace('_', '-')}: {result.tiers.get('pre-approve', 0):,} "
                          f"sources at {run[name]}")
    total = result.timings["total"] + result.timings.get("write", 0.0)
    console.print(f"time {total:.1f}s (model {result.timings['load_model']:.1f}s, "
                  f"index {result.timings['index']:.1f}s, mapping {result.timings['map']:.1f}s, "
                  f"writing {result.timings.get('write', 0.0):.1f}s)")
    if run.get("target_notice"):
        console.print(f"[yellow]note:[/yellow] {run['target_notice']}")
    console.print(f"wrote {output}")


def print_eval_table(report: dict, console: Console | None = None) -> None:
    """A table of acc@k and MRR per ranking method."""
    console = console or summary_console()
    console.print(f"target {report['target']}; model {report['model']} "
                  f"({report.get('backend', 'torch')}); "
                  f"{report['n_in_target']} of {report['n_pairs']} gold pairs have their code "
                  f"in the target")
    if "encoder_weight" in report:
        console.print(f"queries in {report['source_language']}; hybrid fusion: encoder weight "
                      f"{report['encoder_weight']}")
    if report.get("dropped_codes"):
        console.print(f"{report['dropped_codes']} gold codes removed from the target: "
                      f"{report['dropped_queries']} queries have no right answer (misses in acc@k)")
    aurocs = report.get("auroc", {})
    table = Table("method", "n", "acc@1", "acc@5", "acc@10", "MRR", "conf AUROC")
    for method, scores in report["scores"].items():
        row = scores.as_row()
        auroc = aurocs.get(method)
        table.add_row(method, str(row["n"]), f"{row['acc@1']:.3f}", f"{row['acc@5']:.3f}",
                      f"{row['acc@10']:.3f}", f"{row['mrr']:.3f}",
                      "" if auroc is None else f"{auroc:.3f}")
    console.print(table)
    if report.get("learned"):
        console.print(report["learned"])
        console.print("conf AUROC: top candidate right vs wrong or absent; the learned row's "
                      "calibrated confidence, the others' raw top score")
    if report.get("default_confidence"):
        found = report["default_confidence"]
        console.print(f"default ranking's calibrated confidence (what map writes): AUROC "
                      f"{found['auroc']}; calibration: {found['calibration']}")
        if "preapproved_share" in found:
            precision = found["preapproved_precision"]
            console.print(f"suggested pre-approve (precision {found['suggest_at']:g} asked): "
                          f"{found['preapproved_share']:.1%} of rows, "
                          f"{'-' if precision is None else f'{precision:.1%}'} right; suggested "
                          f"no_match: {found['no_match_share']:.1%} of rows, "
                          f"{found['no_match_right_share']:.1%} with their first candidate right")
    if report.get("rerank_ms_per_row") is not None:
        console.print(f"re-ranking cost: {report['rerank_ms_per_row']:.1f} ms per row "
                      f"(cross-encoder over the top candidates)")


def print_calibration(calibrator, report: dict, output: Path, console: Console | None = None) -> None:
    """The cross-fitted figures of a fitted calibrator."""
    console = console or summary_console()
    console.print(f"{report['queries']} dev queries ({report['missing_queries']} without their gold "
                  f"concept), {report['candidates']} candidates; top-1 correct "
                  f"{report['top1_accuracy']:.3f}; model {calibrator.model}, {calibrator.domain} "
                  f"target, ranking {calibrator.ranking}")
    console.print(f"cross-fitted ECE {report['ece_all']:.4f} (all candidates), "
                  f"{report['ece_top1']:.4f} (top-1); AUROC of top-1 confidence "
                  f"{report['auroc_top1']}")
    for name, auroc in report.get("per_list_auroc_top1", {}).items():
        console.print(f"  {name}: AUROC of top-1 confidence {auroc}")
    table = Table("precision asked", "pre-approved share", "precision reached", "approved")
    for asked, got in report["preapproval"].items():
        reached = "-" if got["precision"] is None else f"{got['precision']:.3f}"
        table.add_row(asked, f"{got['share']:.3f}", reached, f"{got['approved']} / {got['queries']}")
    console.print(table)
    console.print(f"wrote {output}")


def _needs_multilingual(result) -> bool:
    """A confidently non-English source mapped with an English-only model (`--model coder-en`,
    `default-base`) onto names in another language. A target with names in the list's language
    (the built-in LOINC's German ones) it matches well enough
    (benchmarks/results/train-coder-long/RULE-multilingual-hint.md)."""
    language = result.language
    return (language is not None and language.method != "uncertain" and language.lang not in ("", "en")
            and result.run.get("model_languages") == "English"
            and result.run.get("target_language") != language.lang)
