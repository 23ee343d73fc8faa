"""`codemap map`: options in one help panel per pipeline stage, each panel turned into its config
object by one helper, then one library call (codemap.engines.map_sources)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, List, Optional

import typer

from ..config import (BLOCK_ROWS, EncoderConfig, IndexConfig, InputLimits, MapConfig, RankConfig,
                      RayConfig, ReadOptions, default_cache_dir)
from .command import progress_bars, setup_logging, user_errors
from .options import (DECISIONS, ENGINE, EXPERIMENTAL, INPUT, OUTPUT, RANKING, Backend,
                      BackendChoice, BatchSize, CacheDir, Device, Engine, EngineOption,
                      EncoderWeight, Filters, Langs, Model, NumGpus, RayAddress, Rerank, RerankTop,
                      StandardOnly, Store, Target, TextCols, TwoStageAbove, UnitSystem,
                      MethodsOption, Workers, encoder_config, rank_config, ray_config, stated,
                      target_settings)

app = typer.Typer()

Sources = Annotated[List[Path], typer.Argument(
    metavar="SOURCE...",
    help="Code list: CSV, TSV or Excel workbook (several with --engine ray).")]
Sheet = Annotated[Optional[str], typer.Option("--sheet", rich_help_panel=INPUT,
                                              show_default="first", help="Workbook sheet.")]
Encoding = Annotated[Optional[str], typer.Option("--encoding", rich_help_panel=INPUT,
                                                 show_default="detected",
                                                 help="Text file encoding.")]
CodeCol = Annotated[Optional[str], typer.Option("--code-col", rich_help_panel=INPUT,
                                                help="Column holding the source code.")]
UnitCol = Annotated[Optional[str], typer.Option("--unit-col", rich_help_panel=INPUT,
                                                help="Column holding units.")]
SpecimenCol = Annotated[Optional[str], typer.Option("--specimen-col", rich_help_panel=INPUT,
                                                    help="Column holding specimen / fluid.")]
NoHeader = Annotated[bool, typer.Option(
    "--no-header", rich_help_panel=INPUT,
    help="The first row is data: columns are then named by position, 1, 2, 3… (--text-col 2).")]
Limits = Annotated[Optional[List[str]], typer.Option(
    "--limit", rich_help_panel=INPUT, metavar="NAME=N",
    help="Raise a bound on the input (checked before it is read): columns (1024), cell-chars "
         "(10000), rows (1048576 per sheet), cells (20000000 per sheet), unpacked-mb (256); "
         "repeat for several.")]
SourceLang = Annotated[Optional[str], typer.Option(
    "--source-lang", rich_help_panel=INPUT,
    show_default="detected from its texts", help="Language of the code list (ISO 639-1, e.g. de).")]

TopK = Annotated[int, typer.Option("--top-k", "-k", min=1, max=1000, rich_help_panel=RANKING,
                                   help="Candidates per source row.")]
Method = Annotated[str, typer.Option(
    "--method", rich_help_panel=RANKING,
    help="Ranking: hybrid (embedding + lexical + evidence), encoder or lexical.")]
HideContradicted = Annotated[bool, typer.Option(
    "--hide-contradicted", rich_help_panel=RANKING,
    help="Drop candidates whose LOINC property contradicts the unit.")]
ExpandAbbreviations = Annotated[bool, typer.Option(
    "--expand-abbreviations/--no-expand-abbreviations", rich_help_panel=RANKING,
    help="Also read each text with its abbreviations followed by their sense in the target's "
         "domain (\"Hb\" → \"Hb hemoglobin\", \"PT\" → prothrombin time for labs); a name scores by "
         "the better reading.")]
CompleteWords = Annotated[bool, typer.Option(
    "--complete-words/--no-complete-words", rich_help_panel=RANKING,
    help="Complete cut words of the texts (\"Perc Endo\", \"Synth Sub\") from the target's own "
         "words.")]
Hubness = Annotated[bool, typer.Option(
    "--hubness/--no-hubness", rich_help_panel=RANKING,
    help="Lower the encoder score of a concept that is close to many rows of the list (CSLS): "
         "a row's candidates then depend on the list it is mapped in.")]
ApproximateAbove = Annotated[int, typer.Option(
    "--approximate-above", min=0, rich_help_panel=RANKING,
    help="Use an approximate (IVF) name index above this many target names.")]
Nprobe = Annotated[int, typer.Option(
    "--nprobe", min=1, rich_help_panel=RANKING,
    help="IVF lists searched per row (more: slower, closer to exact).")]
Fp16Index = Annotated[bool, typer.Option(
    "--fp16-index", rich_help_panel=RANKING,
    help="Keep the name index's vectors as float16 (half the memory).")]

Calibration = Annotated[Optional[Path], typer.Option(
    "--calibration", rich_help_panel=DECISIONS,
    show_default="the shipped one for the model and target domain, if any",
    help="Confidence calibration from `codemap calibrate`.")]
AutoAccept = Annotated[Optional[float], typer.Option(
    "--auto-accept", min=0.5, max=1.0, rich_help_panel=DECISIONS,
    help="Approve top candidates whose confidence reaches this held-out top-1 precision "
         "(still reviewable); without it, rows reaching 0.95 are only suggested pre-approve.")]
NoMatchBelow = Annotated[Optional[float], typer.Option(
    "--no-match-below", min=0.0, max=1.0, rich_help_panel=DECISIONS,
    show_default="the calibration's",
    help="Suggest no_match when the top confidence is below this.")]
BroaderBelow = Annotated[float, typer.Option(
    "--broader-below", min=0.0, max=1.0, rich_help_panel=DECISIONS,
    help="Propose the nearest broader concept (is-a hierarchy) when the top confidence is below "
         "this; 0 turns it off.")]
Memory = Annotated[Optional[Path], typer.Option(
    "--memory", rich_help_panel=DECISIONS,
    help="Mapping memory (.db), written by `codemap apply --memory`: pre-fill sources reviewed "
         "before; for a LOINC target, the site's approvals also set --unit-system and --methods "
         "where you give neither (5 or more approvals that settle each).")]
SiteOption = Annotated[Optional[str], typer.Option(
    "--site", rich_help_panel=DECISIONS,
    show_default="the memory's only site, else the list's file name before its first dot",
    help="With --memory: the site whose earlier decisions pre-fill the workbook (as `apply "
         "--site` stored them); other sites' differing decisions are noted, never filled.")]
LlmUrl = Annotated[Optional[str], typer.Option(
    "--llm-url", rich_help_panel=DECISIONS,
    help="OpenAI-compatible endpoint of a local LLM (e.g. http://localhost:8080/v1) asked to pick "
         "among the top candidates of uncertain rows; logged to OUTPUT.llm.jsonl. Off by "
         "default.")]
LlmModel = Annotated[str, typer.Option("--llm-model", rich_help_panel=DECISIONS,
                                       help="Model name sent to --llm-url.")]

Output = Annotated[Optional[Path], typer.Option(
    "--output", "-o", rich_help_panel=OUTPUT,
    show_default="SOURCE.codemap.xlsx beside the input",
    help="Output .xlsx (review workbook), .csv, .tsv or .parquet.")]
BlockRows = Annotated[int, typer.Option(
    "--block-rows", min=1, rich_help_panel=OUTPUT,
    help="Source rows mapped per block; finished blocks are kept, so a killed run resumes after "
         "them.")]
Force = Annotated[bool, typer.Option(
    "--force", rich_help_panel=OUTPUT,
    help="Replace an existing review workbook even if it holds review decisions or was made from "
         "another list.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", rich_help_panel=OUTPUT,
                                     help="No progress bars or summary.")]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", rich_help_panel=OUTPUT,
                                       help="Debug logging.")]
BatchRows = Annotated[int, typer.Option("--batch-rows", min=1, rich_help_panel=ENGINE,
                                        help="ray: source rows per block and per Parquet part.")]

# Built and measured, not adopted (docs/experiments/): off, or without effect, by default.
LearnedRanking = Annotated[bool, typer.Option(
    "--learned-ranking", rich_help_panel=EXPERIMENTAL,
    help="Order candidates with a model fitted on the target's own pseudo-queries (cached) and "
         "write its calibrated confidence, for any target. Not adopted: it loses to the fixed "
         "ranking at acc@1 (docs/ranking.md).")]
SecondStageOption = Annotated[bool, typer.Option(
    "--second-stage/--no-second-stage", rich_help_panel=EXPERIMENTAL,
    help="Re-read each row with its top candidates by a shipped second stage (a trained "
         "cross-encoder and combiner) for the order and the confidence, where one ships for the "
         "model and target kind; --no-second-stage: the first stage alone. Not adopted: none "
         "ships yet (docs/decision-support.md).")]
LocalNamesOption = Annotated[bool, typer.Option(
    "--local-names/--no-local-names", rich_help_panel=EXPERIMENTAL,
    help="With --memory: also rank with the texts approved at any site as names of their "
         "concepts (same text up to case and punctuation), rejected concepts last. Not adopted: "
         "measured, it did not help (docs/review.md).")]


@app.command("map")
@user_errors
def map_command(
    # input
    sources: Sources, sheet: Sheet = None, encoding: Encoding = None, code_col: CodeCol = None,
    text_col: TextCols = None, unit_col: UnitCol = None, specimen_col: SpecimenCol = None,
    unit_system: UnitSystem = None, methods: MethodsOption = None,
    no_header: NoHeader = False, limit: Limits = None, source_lang: SourceLang = None,
    # target
    target: Target = ..., filters: Filters = None, standard_only: StandardOnly = False,
    lang: Langs = None, store: Store = None,
    # model
    model: Model = EncoderConfig.model, backend: Backend = BackendChoice(EncoderConfig.backend),
    device: Device = EncoderConfig.device, batch_size: BatchSize = EncoderConfig.batch_size,
    cache_dir: CacheDir = None,
    # ranking
    top_k: TopK = RankConfig.top_k, method: Method = RankConfig.method,
    encoder_weight: EncoderWeight = None,
    hide_contradicted: HideContradicted = RankConfig.hide_contradicted,
    expand_abbreviations: ExpandAbbreviations = RankConfig.expand_abbreviations,
    complete_words: CompleteWords = RankConfig.complete_words,
    hubness: Hubness = RankConfig.hubness,
    two_stage_above: TwoStageAbove = IndexConfig.two_stage_above,
    approximate_above: ApproximateAbove = IndexConfig.approximate_above,
    nprobe: Nprobe = IndexConfig.nprobe, fp16_index: Fp16Index = IndexConfig.float16,
    # decisions
    calibration: Calibration = None, auto_accept: AutoAccept = None,
    no_match_below: NoMatchBelow = None, broader_below: BroaderBelow = MapConfig.broader_below,
    memory: Memory = None, site: SiteOption = None, llm_url: LlmUrl = None,
    llm_model: LlmModel = "local",
    # output
    output: Output = None, block_rows: BlockRows = BLOCK_ROWS, force: Force = False,
    quiet: Quiet = False, verbose: Verbose = False,
    # engine
    engine: EngineOption = Engine.local, ray_address: RayAddress = None,
    workers: Workers = RayConfig.workers, num_gpus: NumGpus = RayConfig.num_gpus,
    batch_rows: BatchRows = RayConfig.batch_rows,
    # experimental (measured, not adopted)
    learned_ranking: LearnedRanking = RankConfig.learned, rerank: Rerank = None,
    rerank_top: RerankTop = RankConfig.rerank_top,
    second_stage: SecondStageOption = MapConfig.second_stage,
    local_names: LocalNamesOption = MapConfig.local_names,
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
    # The library loads here, not at import: `codemap --help` starts without torch or faiss.
    from ..engines.run import map_sources
    from .summary import print_map_result

    setup_logging(verbose, quiet)
    config = MapConfig(
        source=sources[0], source_lang=source_lang,
        read=_read_options(sheet, encoding, code_col, text_col, unit_col, specimen_col,
                           no_header, limit),
        **target_settings(target, filters, standard_only, lang, store),
        encoder=encoder_config(model, batch_size, device, backend),
        cache_dir=cache_dir or default_cache_dir(), progress=progress_bars(quiet),
        **_ranking(encoder_weight, top_k, method, hide_contradicted, expand_abbreviations,
                   complete_words, hubness, approximate_above, nprobe, fp16_index,
                   two_stage_above, learned=learned_ranking, rerank_top=rerank_top,
                   unit_system=stated(unit_system), methods=stated(methods)),
        **_decisions(calibration, auto_accept, no_match_below, broader_below, memory, site,
                     llm_url, llm_model),
        rerank=rerank, second_stage=second_stage, local_names=local_names)
    result, written = map_sources(config, sources, output,
                                  ray_config(engine, ray_address, workers, num_gpus, batch_rows),
                                  block_rows, force)
    if not quiet:
        print_map_result(result, written)


def _read_options(sheet: str | None, encoding: str | None, code_col: str | None,
                  text_cols: list[str] | None, unit_col: str | None,
                  specimen_col: str | None, no_header: bool = False,
                  limits: list[str] | None = None) -> ReadOptions:
    """The Input panel: how the code list is read."""
    return ReadOptions(sheet=sheet, encoding=encoding, code_col=code_col,
                       text_cols=tuple(text_cols or ()), unit_col=unit_col,
                       specimen_col=specimen_col, header=not no_header,
                       limits=InputLimits.parse(limits))


def _ranking(encoder_weight: float | None, top_k: int, method: str, hide_contradicted: bool,
             expand_abbreviations: bool, complete_words: bool, hubness: bool,
             approximate_above: int, nprobe: int, fp16_index: bool,
             two_stage_above: int = IndexConfig.two_stage_above,
             learned: bool = RankConfig.learned, rerank_top: int = RankConfig.rerank_top,
             unit_system: str = RankConfig.unit_system, methods: str = RankConfig.methods) -> dict:
    """The Ranking panel: MapConfig's rank and index settings, with the Experimental panel's
    rank settings (`learned`, `rerank_top`)."""
    return {"rank": rank_config(encoder_weight, top_k=top_k, method=method, learned=learned,
                                hide_contradicted=hide_contradicted,
                                expand_abbreviations=expand_abbreviations,
                                complete_words=complete_words, hubness=hubness,
                                rerank_top=rerank_top, unit_system=unit_system, methods=methods),
            "index": IndexConfig(approximate_above=approximate_above, nprobe=nprobe,
                                 two_stage_above=two_stage_above,
                                 float16=fp16_index)}


def _decisions(calibration: Path | None, auto_accept: float | None,
               no_match_below: float | None, broader_below: float, memory: Path | None,
               site: str | None, llm_url: str | None, llm_model: str) -> dict:
    """The Decisions panel: MapConfig's confidence, triage, memory and LLM settings."""
    from ..decide.llm_select import LLMConfig  # at run time, as the library is (see above)

    return {"calibration": calibration, "auto_accept": auto_accept,
            "no_match_below": no_match_below, "broader_below": broader_below, "memory": memory,
            "site": site,
            "llm": None if llm_url is None else LLMConfig(url=llm_url, model=llm_model)}
