"""`codemap.export`: a model folder → an ONNX export folder that `--model` loads like any model.

    python -m codemap.export runs/coder-minilm --out models/coder-minilm-onnx --int8 --optimize

Steps: trace the checkpoint with pooling + L2 normalisation inside the graph (fp32), optionally
fuse it with onnxruntime's optimiser, add an int8 (CPU) and/or fp16 (GPU) variant, check parity
of every variant with the torch model on real LOINC terms, then write the tokenizer, `codemap.json`,
`parity.json` and a model card. The folder is built beside `--out` and renamed into place only
when parity passes, so a failed export never replaces a working one.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from codemap.errors import CodemapError
from codemap.files import atomic_path
from codemap.embed import MANIFEST, Backend, ModelInfo, resolve_model, write_manifest

log = logging.getLogger(__name__)

PARITY_REPORT = "parity.json"
MODEL_CARD = "README.md"


@dataclass(frozen=True)
class ExportConfig:
    """One export: which model, where to, which variants."""

    model: str  # "default", a checkpoint folder or a hub id (as --model)
    out: Path
    fp16: bool = False  # add model.fp16.onnx, used on CUDA
    int8: bool = False  # add model.int8.onnx (the CPU default if it agrees with torch, see _cpu_file)
    optimize: bool = False  # fuse attention/LayerNorm/GELU with onnxruntime's optimiser
    parity_terms: int | None = None  # cap on parity queries (None: all LOINC short names)
    parity_corpus: int | None = None  # cap on the parity corpus (None: see parity.loinc_terms)
    # Drop an int8/fp16 variant that fails parity instead of failing the export (used by the
    # automatic export on first use, which must not stop a mapping run over an optional variant).
    drop_failed_variants: bool = False


@dataclass(frozen=True)
class ExportResult:
    folder: Path
    info: ModelInfo
    report: dict
    seconds: float


def export_model(config: ExportConfig, source: ModelInfo | None = None) -> ExportResult:
    """Export `config.model` (or the already resolved `source`) into `config.out`; see the module
    docstring.

    Raises CodemapError for a folder that is not a model, an unsupported architecture, an `--out`
    that holds something other than a codemap export, or a failed parity check (the staging
    folder with its parity.json is then kept for inspection).
    """
    from . import convert, parity

    started = time.perf_counter()
    source = source or resolve_model(config.model)
    if source.backend is Backend.ONNX:
        raise CodemapError(f"{source.path}: already an ONNX export; pass the PyTorch checkpoint")
    out = Path(config.out)
    _check_target(out)
    model, tokenizer = convert.load_checkpoint(source)
    staging = out.parent / f".{out.name}.part"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    variants = _write_variants(convert, model, tokenizer, source, staging, config)
    tokenizer.save_pretrained(str(staging))
    info = _export_info(source, staging, tokenizer, variants, config)
    write_manifest(staging, info)
    terms = parity.loinc_terms(config.parity_terms, config.parity_corpus)
    try:
        report = parity.check_parity(source, info, variants, terms)
    except CodemapError as error:
        report = getattr(error, "report", {})
        _write_json(staging / PARITY_REPORT, report)
        if not _droppable(report, config):
            raise CodemapError(f"{error} — report kept in {staging / PARITY_REPORT}") from None
        log.warning("%s; dropping the failed variant(s)", error)
        variants = _drop_failed(report, variants, staging)
    _write_json(staging / PARITY_REPORT, report)
    info = dataclasses.replace(info, onnx_file=_cpu_file(report, variants),
                               extra={**info.extra, "variants": variants,
                                      "parity": _summary(report)})
    write_manifest(staging, info)
    _write_card(staging / MODEL_CARD, source, info, report)
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    return ExportResult(folder=out, info=dataclasses.replace(info, path=out), report=report,
                        seconds=time.perf_counter() - started)


def _check_target(out: Path) -> None:
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MANIFEST).exists())):
        raise CodemapError(f"{out}: exists and is not a codemap export; choose an empty or new "
                           f"--out folder")


def _write_variants(convert, model, tokenizer, source: ModelInfo, folder: Path,
                    config: ExportConfig) -> dict:
    """Write model.onnx (+ fused, int8, fp16 files), each with its weights in a `.onnx_data` file
    beside it; returns variant name → file name."""
    from .smooth import export_smoothed

    fp32 = folder / "model.onnx"
    raw = folder / "model.raw.onnx"
    convert.export_fp32(model, source, raw)
    variants = {"fp32": fp32.name}
    if config.int8:  # a smoothed plain graph, quantised: see smooth.py and convert.quantize_int8
        smoothed = folder / "model.smoothed.onnx"
        export_smoothed(model, tokenizer, source, smoothed)
        convert.quantize_int8(smoothed, folder / "model.int8.onnx")
        smoothed.unlink()
        variants["int8"] = "model.int8.onnx"
    if config.optimize:
        convert.optimize_graph(raw, fp32, model.config)
        raw.unlink()
    else:
        raw.rename(fp32)
    if config.fp16:
        convert.convert_fp16(fp32, folder / "model.fp16.onnx")
        variants["fp16"] = "model.fp16.onnx"
    for name in variants.values():
        convert.external_weights(folder / name)
    return variants


def _export_info(source: ModelInfo, folder: Path, tokenizer, variants: dict,
                 config: ExportConfig) -> ModelInfo:
    # multilingual: the export has no config.json to read the vocabulary size from.
    extra = {**source.extra, "source_model": source.id, "variants": variants,
             "multilingual": source.multilingual(),
             "optimized": config.optimize, "pad_id": int(tokenizer.pad_token_id or 0),
             "pad_token": str(tokenizer.pad_token or "[PAD]")}
    # fp32 until parity has been measured; _cpu_file then picks the CPU file.
    return ModelInfo(id=str(folder), path=folder, backend=Backend.ONNX, pooling=source.pooling,
                     max_length=source.max_length, normalize=source.normalize,
                     prefix=source.prefix, onnx_file=variants["fp32"], extra=extra)


def _cpu_file(report: dict, variants: dict) -> str:
    """The file the CPU runtime runs: int8 (2-3x faster than fp32) only when its top-1 agrees
    with torch on parity.MIN_DEFAULT_AGREEMENT of the queries, else fp32 (equal to torch)."""
    from .parity import MIN_DEFAULT_AGREEMENT

    int8 = report["variants"].get("int8")
    if "int8" in variants and int8 and int8["top1_agreement"] >= MIN_DEFAULT_AGREEMENT:
        return variants["int8"]
    return variants["fp32"]


def _droppable(report: dict, config: ExportConfig) -> bool:
    results = report.get("variants", {})
    return (config.drop_failed_variants and "fp32" in results
            and not results["fp32"].get("failure"))


def _drop_failed(report: dict, variants: dict, folder: Path) -> dict:
    kept = {}
    for name, filename in variants.items():
        if report["variants"][name].get("failure"):
            (folder / filename).unlink(missing_ok=True)
        else:
            kept[name] = filename
    report["passed"] = True
    report["dropped"] = sorted(set(variants) - set(kept))
    return kept


def _summary(report: dict) -> dict:
    return {name: {k: round(v, 5) for k, v in result.items() if isinstance(v, float)}
            for name, result in report["variants"].items()}


def _write_json(path: Path, data: dict) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _write_card(path: Path, source: ModelInfo, info: ModelInfo, report: dict) -> None:
    from .parity import CLEAR_LEAD

    clear = next(iter(report["variants"].values()))["clear_share"]  # the same for every variant
    rows = "\n".join(
        f"| {name} | `{r['file']}` | {r['cosine_min']:.5f} | {r['cosine_mean']:.5f} | "
        f"{r['top1_agreement']:.3f} | {r['top1_agreement_clear']:.3f} | {r['top10_overlap']:.3f} | "
        f"{r['top1_accuracy']:.3f} | {r['top10_recall']:.3f} |"
        for name, r in report["variants"].items())
    card = f"""# ONNX export of {source.id}

Exported by `codemap export` from `{source.path}`. Pooling ({info.pooling.value}) and
L2 normalisation ({info.normalize}) are inside the graph: the output `embeddings` is the final
vector. Inputs `input_ids` and `attention_mask` (int64, dynamic batch and sequence axes);
max length {info.max_length}; text prefix {info.prefix!r}.

The CPU runtime uses `{info.onnx_file}`; on a GPU with onnxruntime-gpu it uses
`{info.extra['variants'].get('fp16', info.onnx_file)}`. Use it with
`codemap map LIST --target LOINC --model {path.parent}`.

## Parity with the PyTorch model
{report['queries']} LOINC short names (queries) against {report['corpus']} LOINC long common names
(corpus) from codemap's built-in subset, embedded through `Encoder.encode` on CPU. "On clear
leads": top-1 agreement on the {clear:.0%} of queries whose torch top-1 is at least {CLEAR_LEAD} of
cosine ahead of the runner-up (near-ties flip under any reduced precision).

| variant | file | cosine min | cosine mean | top-1 agreement | on clear leads | top-10 overlap | top-1 accuracy | top-10 recall |
|---|---|---|---|---|---|---|---|---|
{rows}

The base model's licence and card apply to these weights.
"""
    with atomic_path(path) as tmp:
        tmp.write_text(card, encoding="utf-8")
