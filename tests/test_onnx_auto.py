"""`--backend auto`: the default model is exported to ONNX once into the model cache and mapping
runs on it without importing torch; torch and ONNX vectors never share an index cache."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import openpyxl
import pytest
from typer.testing import CliRunner

from codemap.cli import app
from codemap.config import EncoderConfig
from codemap.embed import Encoder
from codemap.errors import CodemapError
from codemap.embed import Backend, resolve_model
from codemap.embed.onnx_cache import PARITY_TERMS, export_folder, runtime_model

from .conftest import DATA, EXAMPLES

SMALL_TARGET = DATA / "loinc_en_small.csv"  # 150 LOINC codes with synonyms: short index builds

pytest.importorskip("torch")
pytest.importorskip("onnx")

runner = CliRunner()

# Runs the real CLI with torch and transformers refused, as on a machine where they are not
# installed; every attempt to import them is written to the file named by CODEMAP_TEST_IMPORTS,
# so an import that some code caught and survived still fails the test.
NO_TORCH = """\
import os, sys
class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('torch', 'transformers'):
            with open(os.environ['CODEMAP_TEST_IMPORTS'], 'a') as f:
                f.write(name + '\\n')
            raise ModuleNotFoundError(name)
sys.meta_path.insert(0, NoTorch())
from codemap.cli import main; main()
"""


def run_without_torch(args: list[str], tmp_path: Path, model_cache: Path):
    imports = tmp_path / "imports.txt"
    imports.touch()
    env = {**os.environ, "CODEMAP_MODEL_CACHE": str(model_cache),
           "CODEMAP_TEST_IMPORTS": str(imports), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", NO_TORCH, *args], capture_output=True,
                          text=True, timeout=300, env=env)
    return done, imports.read_text().split()


@pytest.fixture(scope="module")
def auto_encoder(shared_model_cache, tmp_path_factory):
    """The default model through --backend auto: exported once into the session's model cache
    (the same folder every CLI test of the suite uses)."""
    return Encoder.load(EncoderConfig(), tmp_path_factory.mktemp("auto-cache"))


def test_default_model_is_exported_once_into_the_model_cache(auto_encoder, shared_model_cache):
    info = auto_encoder.info
    assert info.backend is Backend.ONNX and info.id == "default"
    assert info.path.parent == shared_model_cache / "onnx" and info.path.name.startswith("default-")
    assert info.path == export_folder(resolve_model("default"), shared_model_cache)
    report = json.loads((info.path / "parity.json").read_text())
    # The first run exports only what it runs, fp32, checked on a sample: it equals torch.
    assert report["passed"] and report["queries"] == PARITY_TERMS == report["corpus"]
    assert list(report["variants"]) == ["fp32"] and report["variants"]["fp32"]["cosine_min"] > 0.999
    assert auto_encoder.variant == "onnx-fp32" and auto_encoder.provider == "CPUExecutionProvider"
    stamp = (info.path / "codemap.json").stat().st_mtime_ns
    again = Encoder.load(EncoderConfig(), shared_model_cache.parent / "another-index-cache")
    assert again.info.path == info.path  # loaded, not exported again
    assert (info.path / "codemap.json").stat().st_mtime_ns == stamp
    exports = [p.name for p in (shared_model_cache / "onnx").iterdir()
               if p.name.rsplit("-", 1)[0] == "default"]  # other tests export default-base too
    assert exports == [info.path.name]


def test_auto_vectors_match_torch(auto_encoder):
    texts = ["Potassium", "Hemoglobin A1c/Hemoglobin.total in Blood", "Kalium im Serum", ""]
    torch_vectors = Encoder.load(EncoderConfig(backend="torch")).encode(texts)
    cosine = (auto_encoder.encode(texts) * torch_vectors).sum(axis=1)
    floor = 0.9999 if auto_encoder.variant == "onnx-fp32" else 0.97
    assert cosine.min() > floor


@pytest.fixture(scope="module")
def index_cache(tmp_path_factory) -> Path:
    """Shared by the map tests below, so the ONNX index of LOINC is built once."""
    return tmp_path_factory.mktemp("index-cache")


def test_map_records_backend_and_keeps_index_caches_apart(auto_encoder, index_cache, tmp_path):
    cache = index_cache
    runs = {}
    for backend in ("torch", "auto"):
        out = tmp_path / f"{backend}.xlsx"
        result = runner.invoke(app, ["map", str(EXAMPLES / "labs.csv"), "--target",
                                     str(SMALL_TARGET), "-o", str(out), "--top-k", "2",
                                     "--backend", backend,
                                     "--cache-dir", str(cache), "-q"])
        assert result.exit_code == 0, result.output
        book = openpyxl.load_workbook(out, read_only=True)
        runs[backend] = {r[0]: r[1] for r in book["run"].iter_rows(min_row=2, values_only=True)}
    assert runs["torch"]["backend"] == "torch on cpu (--backend torch)"
    assert runs["auto"]["backend"] == f"{auto_encoder.variant} on CPUExecutionProvider (--backend auto)"
    assert runs["torch"]["index_cache"] == runs["auto"]["index_cache"] == "built"
    folders = {runs[b]["index_folder"] for b in runs}
    assert len(folders) == 2
    torch_vectors = np.load(Path(runs["torch"]["index_folder"]) / "vectors.npy")
    onnx_vectors = np.load(Path(runs["auto"]["index_folder"]) / "vectors.npy")
    assert torch_vectors.shape == onnx_vectors.shape
    manifest = json.loads((Path(runs["auto"]["index_folder"]) / "manifest.json").read_text())
    assert manifest["variant"] == auto_encoder.variant


def test_map_default_model_without_torch_once_exported(auto_encoder, shared_model_cache,
                                                       index_cache, tmp_path):
    out = tmp_path / "labs.csv"
    done, attempted = run_without_torch(
        ["map", str(DATA / "labs_de_cp1252.csv"), "--target", str(SMALL_TARGET), "-o", str(out),
         "-q", "--top-k", "3", "--cache-dir", str(index_cache)], tmp_path, shared_model_cache)
    assert done.returncode == 0, done.stderr
    assert attempted == []  # not even a caught attempt to import torch or transformers
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("source_row,source_code,source_text") and len(lines) > 10


def test_no_torch_and_no_export_is_a_one_line_error(tmp_path):
    done, _ = run_without_torch(
        ["map", str(EXAMPLES / "labs.csv"), "--target", "LOINC", "-o", str(tmp_path / "x.csv"),
         "--cache-dir", str(tmp_path / "cache")], tmp_path, tmp_path / "empty-model-cache")
    assert done.returncode == 2
    # One error line and no traceback; the line naming the columns read (INFO) may come first.
    errors = [line for line in done.stderr.splitlines() if not line.startswith("INFO ")]
    assert len(errors) == 1 and errors[0].startswith("codemap: error:"), done.stderr
    assert "no ONNX export yet" in done.stderr and "pip install torch onnx" in done.stderr
    assert not (tmp_path / "x.csv").exists()


def test_backend_errors(tiny_model, tmp_path):
    info = resolve_model(str(tiny_model))
    with pytest.raises(CodemapError, match="--backend 'tensorrt'"):
        runtime_model(info, "tensorrt", tmp_path)
    export = runtime_model(info, "onnx", tmp_path)
    with pytest.raises(CodemapError, match="cannot run with --backend torch"):
        runtime_model(export, "torch", tmp_path)
    bad = runner.invoke(app, ["map", str(EXAMPLES / "labs.csv"), "--target", "LOINC",
                              "--model", str(export.path), "--backend", "torch"])
    assert bad.exit_code == 2 and "cannot run with --backend torch" in bad.output
    assert runner.invoke(app, ["eval", str(DATA / "mimic_labs_gold.tsv"), "--target", "LOINC",
                               "--gold-col", "loinc_code", "--backend", "gpu"]).exit_code == 2


def test_killed_export_leaves_nothing_to_load(tiny_model, tmp_path, monkeypatch):
    from codemap.export import parity

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # as if the user pressed Ctrl-C during the parity check

    monkeypatch.setattr(parity, "check_parity", killed)
    info = resolve_model(str(tiny_model))
    with pytest.raises(KeyboardInterrupt):
        runtime_model(info, "auto", tmp_path)
    # Only the lock file beside the export stays (never deleted: see codemap.files.locked).
    assert [p.name for p in (tmp_path / "onnx").iterdir() if not p.name.endswith(".lock")] == []
    monkeypatch.undo()
    assert runtime_model(info, "auto", tmp_path).path == export_folder(info, tmp_path)


def test_failed_optional_variant_is_dropped_not_fatal(tiny_model, tmp_path, monkeypatch):
    from codemap.export import parity

    monkeypatch.setattr(parity, "MAX_ACCURACY_DROP", -1.0)  # every int8 variant now fails
    info = resolve_model(str(tiny_model))
    with pytest.raises(CodemapError, match="has no int8 variant"):
        runtime_model(info, "int8", tmp_path)  # exported with int8, which failed and was dropped
    folder = export_folder(info, tmp_path, ("fp32", "int8"))
    report = json.loads((folder / "parity.json").read_text())
    assert report["dropped"] == ["int8"] and "int8" in report["variants"]
    assert not (folder / "model.int8.onnx").exists()
    assert runtime_model(info, "auto", tmp_path).onnx_file == "model.onnx"  # fp32 still runs


def test_int8_backend_stays_on_cpu(tiny_model, tmp_path, monkeypatch):
    import onnxruntime

    info = resolve_model(str(tiny_model))
    export = runtime_model(info, "int8", tmp_path)
    assert export.onnx_file == "model.int8.onnx"
    # made when first asked for, into its own folder: the auto export holds fp32 alone
    assert export.path != runtime_model(info, "auto", tmp_path).path
    # Even where onnxruntime-gpu lists CUDA, int8 runs on the CPU provider, and asking for the
    # GPU outright is a clean error.
    monkeypatch.setattr(onnxruntime, "get_available_providers",
                        lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
    encoder = Encoder(export, EncoderConfig(backend="int8"))
    assert (encoder.variant, encoder.provider) == ("onnx-int8", "CPUExecutionProvider")
    with pytest.raises(CodemapError, match="--backend int8 runs on CPU"):
        Encoder(export, EncoderConfig(backend="int8", device="cuda"))


def test_a_run_exports_only_the_variants_it_runs(monkeypatch):
    import onnxruntime

    from codemap.embed.onnx_cache import run_variants

    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: ["CPUExecutionProvider"])
    assert run_variants("auto") == ("fp32",) and run_variants("int8") == ("fp32", "int8")
    # onnxruntime-gpu: the fp16 variant is made for CUDA (OnnxBackend runs it with IO binding and
    # falls back to the CPU file when no GPU answers, see test_export.py).
    monkeypatch.setattr(onnxruntime, "get_available_providers",
                        lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert run_variants("auto") == ("fp32", "fp16")
