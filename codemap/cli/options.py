"""Options that several commands share, declared once, each in the help panel of its pipeline
stage; and the helpers that turn a panel's options into the library's config objects. Defaults
come from the config dataclasses."""
from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, List, Optional

import typer

from ..config import EncoderConfig, RankConfig, RayConfig, VocabFilter

# Help panels in pipeline order: `codemap map --help` reads one group at a time.
INPUT, TARGET, MODEL, RANKING = "Input", "Target", "Model", "Ranking"
DECISIONS, OUTPUT, ENGINE = "Decisions", "Output", "Engine"
# Switches of what was built, measured and not adopted (docs/experiments/), kept apart in one
# panel so that the ones above are what a run is made of.
EXPERIMENTAL = "Experimental (measured, not adopted)"


class BackendChoice(str, Enum):
    auto = "auto"
    torch = "torch"
    onnx = "onnx"
    int8 = "int8"


class Engine(str, Enum):
    local = "local"
    ray = "ray"


# --- input ---------------------------------------------------------------------------------------
TextCols = Annotated[Optional[List[str]], typer.Option(
    "--text-col", rich_help_panel=INPUT,
    help="Column holding the text to map; repeat to join several.")]

# --- target --------------------------------------------------------------------------------------
Target = Annotated[str, typer.Option(
    "--target", "-t", rich_help_panel=TARGET,
    help="Built in: LOINC (lab tests, Top 2000+ subset) or DRUGS (medications, RxNorm drug "
         "concepts); or a vocabulary imported into the store; or a vocabulary file (CSV/TSV/xlsx "
         "with code, name, optional synonyms). `codemap vocab list` shows them all.")]
Filters = Annotated[Optional[List[str]], typer.Option(
    "--filter", rich_help_panel=TARGET,
    help="Keep target concepts whose attribute has this value, as key=value (e.g. class=CHEM, "
         "domain=Measurement); repeat: values of one key are alternatives, different keys must "
         "all hold.")]
StandardOnly = Annotated[bool, typer.Option(
    "--standard-only", rich_help_panel=TARGET,
    help="Keep only standard (active) target concepts.")]
Langs = Annotated[Optional[List[str]], typer.Option(
    "--lang", rich_help_panel=TARGET,
    help="Keep target names in this language (de also keeps de-AT); repeat for several.")]
Store = Annotated[Optional[Path], typer.Option(
    "--store", rich_help_panel=TARGET,
    show_default="<cache dir>/store", help="Vocabulary store folder.")]

# --- model ---------------------------------------------------------------------------------------
Model = Annotated[str, typer.Option(
    "--model", "-m", rich_help_panel=MODEL,
    help="'default' or 'multilingual' (coder-multilingual: multilingual-e5-small CODER-trained, "
         "many languages), 'coder-en' (all-MiniLM-L6-v2 CODER-trained, English, 2.4x faster), "
         "'multilingual-base' / 'default-base' (always the untrained multilingual-e5-small / "
         "all-MiniLM-L6-v2), a local model folder, an ONNX export folder or a Hugging Face hub id.")]
Backend = Annotated[BackendChoice, typer.Option(
    "--backend", rich_help_panel=MODEL,
    help="auto: ONNX Runtime (a model folder is exported to ONNX once into the model cache, "
         "needing torch that one time), else PyTorch; torch or onnx to insist on one; int8: the "
         "export's int8 variant on CPU (about 2x fp32; may pick another of two near-identical "
         "names).")]
Device = Annotated[str, typer.Option("--device", rich_help_panel=MODEL, help="auto, cpu or cuda.")]
BatchSize = Annotated[int, typer.Option("--batch-size", min=1, rich_help_panel=MODEL,
                                        help="Texts per batch.")]
CacheDir = Annotated[Optional[Path], typer.Option(
    "--cache-dir", rich_help_panel=MODEL,
    show_default="$CODEMAP_CACHE_DIR, else $XDG_CACHE_HOME/codemap, else ~/.cache/codemap",
    help="Cache folder, made and reused across runs: index/ (name vectors per model and "
         "target), lexical/ (n-gram indexes), store/ (imported vocabularies, unless --store) and "
         "models/ (the ONNX exports made on first use, unless $CODEMAP_MODEL_CACHE points "
         "elsewhere, and the converted multilingual model). A fresh folder re-exports the model "
         "(minutes): reuse one.")]

# --- ranking -------------------------------------------------------------------------------------
EncoderWeight = Annotated[Optional[float], typer.Option(
    "--encoder-weight", min=0.0, max=1.0, rich_help_panel=RANKING,
    show_default="0.7; 1.0 with a trained model on targets other than LOINC and drugs; 0.9 with a "
                 "multilingual model when the source and target languages differ",
    help="Weight of the embedding score in hybrid fusion (the rest is lexical); one weight for "
         "every target, language and model.")]
TwoStageAbove = Annotated[int, typer.Option(  # `map`, `vocab embed`
    "--two-stage-above", min=0, rich_help_panel=RANKING,
    help="Above this many target names, pool each row's candidates with a static embedding and "
         "the lexical index, and embed only the pooled names (each once, kept); 0: always.")]

# --- experimental (`map`, `eval`) ----------------------------------------------------------------
Rerank = Annotated[Optional[Path], typer.Option(
    "--rerank", rich_help_panel=EXPERIMENTAL, show_default="off",
    help="Re-order the top candidates with the old cross-encoder re-ranker, a folder from "
         "`codemap train-reranker` (OUT/model); eval adds its rows. Not adopted: it loses on "
         "every dev set (docs/decision-support.md).")]
RerankTop = Annotated[int, typer.Option(
    "--rerank-top", min=2, max=1000, rich_help_panel=EXPERIMENTAL,
    help="With --rerank: candidates per row the re-ranker re-orders.")]

# --- engine (`map`, `vocab embed`) ---------------------------------------------------------------
EngineOption = Annotated[Engine, typer.Option(
    "--engine", rich_help_panel=ENGINE,
    help="local (this process) or ray (a pool of Ray actors; needs the `ray` extra).")]
RayAddress = Annotated[Optional[str], typer.Option(
    "--ray-address", rich_help_panel=ENGINE,
    show_default="start Ray on this machine", help="ray: cluster to join ('auto' or host:port).")]
Workers = Annotated[int, typer.Option("--workers", min=1, rich_help_panel=ENGINE,
                                      help="ray: actors, each loading the model once.")]
NumGpus = Annotated[float, typer.Option("--num-gpus", min=0.0, rich_help_panel=ENGINE,
                                        help="ray: GPUs per actor.")]


def target_settings(target: str, filters: list[str] | None, standard_only: bool,
                    langs: list[str] | None, store: Path | None) -> dict:
    """The Target panel as MapConfig's / EvalConfig's target, vocab_filter and store_dir."""
    return {"target": target, "store_dir": store,
            "vocab_filter": VocabFilter.from_options(filters, standard_only, langs)}


def encoder_config(model: str, batch_size: int, device: str,
                   backend: BackendChoice = BackendChoice.auto) -> EncoderConfig:
    return EncoderConfig(model=model, batch_size=batch_size, device=device, backend=backend.value)


def rank_config(encoder_weight: float | None, **settings) -> RankConfig:
    """RankConfig from CLI options; an explicit --encoder-weight holds for every language pair
    and every model."""
    if encoder_weight is not None:
        settings.update(encoder_weight=encoder_weight, crosslingual_encoder_weight=encoder_weight,
                        model_weights=False)
    return RankConfig(**settings)


def ray_config(engine: Engine, address: str | None, workers: int, num_gpus: float,
               batch_rows: int = RayConfig.batch_rows) -> RayConfig | None:
    """The Ray engine's settings, or None for the local engine."""
    if engine is Engine.local:
        return None
    return RayConfig(address=address, workers=workers, num_gpus=num_gpus, batch_rows=batch_rows)


class UnitSystemChoice(str, Enum):
    us = "us"
    si = "si"


UnitSystem = Annotated[UnitSystemChoice | None, typer.Option(
    "--unit-system", rich_help_panel=INPUT, case_sensitive=False,
    show_default="us, or what the site's approvals in --memory say",
    help="The units your lab reports in where a row states none: us (mass: mg/dL) or si "
         "(moles: mmol/L). Decides between a LOINC code and its molar twin when the row does not "
         "tell them apart (\"Kreatinine\" → 2160-0 or 14682-9); a stated unit decides by itself.")]


def stated(choice: Enum | None) -> str:
    """An optional choice's value; "" when not given (a RankConfig field then left to what the
    site's approvals say, else its default)."""
    return choice.value if choice is not None else ""


class MethodsChoice(str, Enum):
    usual = "usual"
    none = "none"


MethodsOption = Annotated[MethodsChoice | None, typer.Option(
    "--methods", rich_help_panel=INPUT, case_sensitive=False,
    show_default="usual, or what the site's approvals in --memory say",
    help="The method your lab's LOINC codes carry where a row states none: usual (the test's "
         "commonest method: platelets → 777-3, by automated count) or none (the method-less "
         "code: 26515-7). A stated method decides by itself.")]

