"""`codemap eval` and `codemap calibrate`: the ranking measured, and confidence fitted, on gold
(query, code) pairs."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ..config import EncoderConfig, EvalConfig, RankConfig, default_cache_dir
from .command import progress_bars, setup_logging, user_errors
from .options import (INPUT, OUTPUT, Backend, BackendChoice, BatchSize, CacheDir, Device,
                      EncoderWeight, Filters, Langs, Model, Rerank, RerankTop, StandardOnly, Store,
                      MethodsOption, Target, TextCols, UnitSystem, encoder_config, rank_config,
                      stated, target_settings)

app = typer.Typer()

Gold = Annotated[Path, typer.Argument(
    help="Gold pairs: a table with query text and gold code.")]
GoldCol = Annotated[str, typer.Option("--gold-col", rich_help_panel=INPUT,
                                      help="Column holding the right target code.")]
Folds = Annotated[int, typer.Option(
    "--folds", min=0, max=20,
    help="Cross-validate the learned ranker on the dev pairs: fit on the other folds' pairs + "
         "pseudo-queries, score each fold (0: fitted on pseudo-queries only).")]
DropGoldShare = Annotated[float, typer.Option(
    "--drop-gold-share", min=0.0, max=0.9,
    help="Remove this share of the gold codes' concepts from the target (queries with no right "
         "answer) before ranking.")]


@app.command("eval")
@user_errors
def eval_command(
    gold: Gold, target: Target, gold_col: GoldCol, text_col: TextCols = None,
    unit_system: UnitSystem = None, methods: MethodsOption = None,
    model: Model = EncoderConfig.model, batch_size: BatchSize = EncoderConfig.batch_size,
    device: Device = EncoderConfig.device, backend: Backend = BackendChoice(EncoderConfig.backend),
    cache_dir: CacheDir = None, filters: Filters = None, standard_only: StandardOnly = False,
    lang: Langs = None, store: Store = None, encoder_weight: EncoderWeight = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", rich_help_panel=OUTPUT,
                                        help="No progress bars.")] = False,
    rerank: Rerank = None, rerank_top: RerankTop = RankConfig.rerank_top,
    folds: Folds = 0, drop_gold_share: DropGoldShare = 0.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the folds and the dropped "
                                                     "codes.")] = 0,
) -> None:
    """Measure acc@1/5/10, MRR and confidence AUROC of the rankings on gold (query, code) pairs.

    Rows whose gold code is not in the target are counted and left out of the scores.

    Example: codemap eval tests/data/mimic_labs_gold.tsv --target LOINC --gold-col loinc_code
    """
    # The library loads here, not at import: `codemap --help` starts without torch or faiss.
    from ..decide.learned_eval import evaluate_with_learned
    from .summary import print_eval_table

    setup_logging(False, quiet)
    config = EvalConfig(gold=gold, gold_col=gold_col, text_cols=tuple(text_col or ()),
                        **target_settings(target, filters, standard_only, lang, store),
                        encoder=encoder_config(model, batch_size, device, backend),
                        rank=rank_config(encoder_weight, rerank_top=rerank_top,
                                          unit_system=stated(unit_system),
                                          methods=stated(methods)), rerank=rerank,
                        cache_dir=cache_dir or default_cache_dir(), progress=progress_bars(quiet),
                        folds=folds if folds >= 2 else 0, drop_gold_share=drop_gold_share,
                        seed=seed)
    print_eval_table(evaluate_with_learned(config))


@app.command("calibrate")
@user_errors
def calibrate_command(
    gold: Annotated[list[Path], typer.Argument(
        help="Dev gold pairs: a table with query text and gold code; several tables (the same "
             "gold column, each its text columns found or named alike) are pooled, each "
             "weighing the same.")],
    target: Target, gold_col: GoldCol,
    output: Annotated[Path, typer.Option(
        "--output", "-o", rich_help_panel=OUTPUT,
        help="Calibration JSON to write (pass it to `codemap map --calibration`).")],
    text_col: TextCols = None, model: Model = EncoderConfig.model,
    missing_share: Annotated[float, typer.Option(
        "--missing-share", min=0.0, max=0.9,
        help="Share of queries whose gold concepts are removed from the dictionary (terms with "
             "no right target).")] = 0.3,
    folds: Annotated[int, typer.Option("--folds", min=2, max=10,
                                       help="Cross-fitting folds.")] = 2,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the missing share and the "
                                                     "folds.")] = 0,
    plot: Annotated[Optional[Path], typer.Option(
        "--plot", rich_help_panel=OUTPUT,
        help="Reliability diagram and precision-coverage curve (PNG).")] = None,
    batch_size: BatchSize = EncoderConfig.batch_size, device: Device = EncoderConfig.device,
    cache_dir: CacheDir = None, filters: Filters = None, standard_only: StandardOnly = False,
    lang: Langs = None, store: Store = None,
) -> None:
    """Fit the confidence calibrator on dev gold pairs and report it cross-fitted: ECE,
    AUROC of the top candidate, top-1 share pre-approvable at each precision.

    Example: codemap calibrate tests/data/mimic_labs_gold.tsv --target LOINC --gold-col loinc_code -o calib.json
    """
    from ..decide.calibrate import CalibrateConfig, calibrate
    from .summary import print_calibration

    setup_logging(False, True)
    settings = target_settings(target, filters, standard_only, lang, store)
    golds = tuple(EvalConfig(gold=path, gold_col=gold_col, text_cols=tuple(text_col or ()),
                             **settings, encoder=encoder_config(model, batch_size, device),
                             cache_dir=cache_dir or default_cache_dir(),
                             progress=progress_bars(False)) for path in gold)
    calibrator, report = calibrate(CalibrateConfig(golds=golds, output=output, plot=plot,
                                                   missing_share=missing_share, folds=folds,
                                                   seed=seed))
    print_calibration(calibrator, report, output)


@app.command("similarity")
@user_errors
def similarity_command(
    ratings: Annotated[list[Path], typer.Argument(
        help="Rated term pairs: MayoSRS-style CSV (TERM1, TERM2, Mean) or UMNSRS-style "
             "tab-separated term1, term2, rating; one or more files.")],
    model: Model = EncoderConfig.model, batch_size: BatchSize = EncoderConfig.batch_size,
    device: Device = EncoderConfig.device, backend: Backend = BackendChoice(EncoderConfig.backend),
    cache_dir: CacheDir = None,
) -> None:
    """Spearman correlation between the model's cosine and human similarity ratings: how the
    CODER and BNE papers measure an embedding space (MayoSRS, UMNSRS-sim, UMNSRS-rel).

    The rating sets are research data for evaluation only; codemap ships none.

    Example: codemap similarity MayoSRS.csv umnsrs-sim.txt umnsrs-rel.txt --model default
    """
    from ..embed import Encoder
    from ..evaluate.similarity import score_similarity

    setup_logging(False, True)
    encoder = Encoder.load(encoder_config(model, batch_size, device, backend),
                           cache_dir or default_cache_dir())
    typer.echo(f"model {encoder.info.id}")
    typer.echo("set\tpairs\tspearman")
    for path in ratings:
        row = score_similarity(encoder, path).as_row()
        typer.echo(f"{row['set']}\t{row['pairs']}\t{row['spearman']:.3f}")

