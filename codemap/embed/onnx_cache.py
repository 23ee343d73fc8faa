"""Which runtime embeds for `--backend auto|torch|onnx|int8`, and the ONNX exports made on first use.

With `auto` (the default) a Hugging Face folder model (`--model default`, a `codemap train` run,
a hub id) is exported once to ONNX into the model cache and run with ONNX Runtime from then on:
2x faster on CPU than PyTorch, and no torch import once the export exists. The first run makes
only what it runs: fp32 (and fp16 where onnxruntime has CUDA), checked against torch on
PARITY_TERMS real terms (fp32 must equal torch; the full retrieval check of every variant is
`codemap export`'s). `int8` is exported when a run first asks for it (`--backend int8`), into
its own folder, with the full parity check: its top-1 may change between near-identical names
(export/parity.py). Each folder is keyed by the weights' hash, its variants and the export code,
so a retrained model or a changed exporter gets a fresh export. The export is built in a
temporary folder and renamed into place after its parity check, so a killed export leaves
nothing that a later run would load.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import logging
import re
import shutil
from pathlib import Path

from ..errors import CodemapError
from ..files import build_once, publish_dir, sha256_text, temp_dir_beside
from ..progress import elapsed
from .manifest import MANIFEST, RANKING_KEYS, Backend, ModelInfo, read_manifest
from .onnx_backend import CUDA

log = logging.getLogger(__name__)

BACKENDS = ("auto", "torch", "onnx", "int8")
EXPORT_PACKAGES = ("torch", "transformers", "onnx")  # what a first export needs
# Queries (LOINC short names) and as many corpus names of the first-use fp32 check: enough to
# catch a wrong graph (cosine with torch), a few seconds instead of minutes.
PARITY_TERMS = 128


def runtime_model(info: ModelInfo, backend: str, model_dir: Path,
                  progress: bool = False) -> ModelInfo:
    """The model to embed with: `info` itself (torch, or already an export) or its cached export
    (made here the first time; `progress` shows its elapsed time on a terminal).

    Raises CodemapError for an unknown backend, `--backend torch` on an export folder, and a model
    that has no export yet on a machine that cannot make one (`onnx`, or `auto` without torch).
    """
    if backend not in BACKENDS:
        raise CodemapError(f"--backend {backend!r}: use one of {', '.join(BACKENDS)}")
    if info.backend is Backend.ONNX:
        if backend == "torch":
            raise CodemapError(f"{info.path}: an ONNX export cannot run with --backend torch; "
                               f"pass the checkpoint it was exported from")
        return _int8(info) if backend == "int8" else info
    if backend == "torch":
        return info
    variants = run_variants(backend)
    folder = export_folder(info, model_dir, variants)
    if not (folder / MANIFEST).exists():
        missing = [name for name in EXPORT_PACKAGES if not installed(name)]
        if missing and (backend != "auto" or "torch" in missing):
            raise CodemapError(
                f"model {info.id!r} has no ONNX export yet and {', '.join(missing)} "
                f"{'is' if len(missing) == 1 else 'are'} not installed: pip install torch onnx "
                f"(needed once, to export it; see README), or pass an export folder with --model")
        if missing:
            log.warning("onnx is not installed: running %s with PyTorch (pip install onnx to "
                        "export it once and embed faster)", info.id)
            return info
        build_once(folder, lambda: folder if (folder / MANIFEST).exists() else None,
                   lambda: _export_into(info, folder, variants, progress),
                   f"exporting {info.id} to ONNX")
    exported = read_manifest(folder, info.id)
    # The export is keyed by the weights; how the model ranks (its fusion weights, set by a later
    # rule) is read from the model itself, not from an export made before.
    ranking = {key: info.extra[key] for key in RANKING_KEYS if key in info.extra}
    exported = dataclasses.replace(exported, extra={**exported.extra, **ranking,
                                                    "source_path": str(info.path)})
    return _int8(exported) if backend == "int8" else exported


def export_made(info: ModelInfo, backend: str, model_dir: Path) -> bool:
    """Whether runtime_model(info, backend) finds its export without making one."""
    if info.backend is Backend.ONNX:
        return backend != "int8" or "int8" in info.extra.get("variants", {})
    return backend == "torch" or (export_folder(info, model_dir, run_variants(backend)) / MANIFEST).exists()


def _int8(export: ModelInfo) -> ModelInfo:
    """`export` set to run its int8 file (a CPU format: OnnxBackend keeps it off CUDA)."""
    variants = export.extra.get("variants", {})
    if "int8" not in variants:
        raise CodemapError(f"{export.path}: this export has no int8 variant (it failed its parity "
                           f"check or was not made); re-export with `codemap export ... --int8`, "
                           f"or drop --backend int8")
    return dataclasses.replace(export, onnx_file=variants["int8"],
                               extra={**export.extra, "cpu_only": True})


def installed(package: str) -> bool:
    """Whether `package` can be imported, without importing it (torch takes seconds)."""
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # blocked, or a None placeholder in sys.modules
        return False


def export_folder(info: ModelInfo, model_dir: Path, variants: tuple[str, ...] | None = None) -> Path:
    """The cache folder of `info`'s export with `variants` (run_variants("auto") when None):
    <model_dir>/onnx/<name>-<key>."""
    variants = run_variants("auto") if variants is None else variants
    key = sha256_text(info.fingerprint(), *variants, _export_code_hash())[:16]
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(info.id).name or "model").strip("-.")[:40]
    return Path(model_dir) / "onnx" / f"{name or 'model'}-{key}"


def run_variants(backend: str) -> tuple[str, ...]:
    """What a run's export holds: fp32 (the CPU file), fp16 too where onnxruntime can run CUDA,
    and int8 only for `--backend int8`."""
    import onnxruntime

    variants = ("fp32", "int8") if backend == "int8" else ("fp32",)
    return variants + ("fp16",) if CUDA in onnxruntime.get_available_providers() else variants


def _export_code_hash() -> str:
    """Hash of the exporter's source: a changed exporter (quantisation settings, graph) makes new
    exports instead of reusing ones made by older code."""
    spec = importlib.util.find_spec("codemap.export")
    if spec is None or not spec.submodule_search_locations:
        return ""
    folder = Path(list(spec.submodule_search_locations)[0])
    return sha256_text(*(p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.py"))))


def _export_into(info: ModelInfo, folder: Path, variants: tuple[str, ...],
                 progress: bool = False) -> Path:
    from ..export import ExportConfig, export_model  # needs torch: only on the first use

    # No duration promised: it depends on the machine and its load (193 s measured on a busy
    # 2-core one); a terminal shows the elapsed time instead.
    log.warning("exporting %s to ONNX once into %s (needs torch this one time; later runs load "
                "it)", info.id, folder)
    scratch = temp_dir_beside(folder)
    try:
        out = scratch / "export"
        with elapsed(f"exporting {info.id} to ONNX (once)", progress):
            # fp32 alone is checked on a sample (it equals torch or the graph is wrong); an int8
            # variant gets the full retrieval check that decides whether it may run.
            export_model(ExportConfig(model=info.id, out=out, int8="int8" in variants,
                                      fp16="fp16" in variants, drop_failed_variants=True,
                                      parity_terms=None if "int8" in variants else PARITY_TERMS,
                                      parity_corpus=None if "int8" in variants else PARITY_TERMS),
                         source=info)
        if folder.exists() and not (folder / MANIFEST).exists():
            shutil.rmtree(folder)  # an export without its manifest: not one a run can use
        publish_dir(out, folder)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return folder
