"""codemap.export and the ONNX runtime: tiny BertConfig models for the mechanics (shapes, errors,
providers), the real default model for parity and for `codemap map --model <export>`."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from codemap.cli import app
from codemap.config import EncoderConfig
from codemap.embed import Encoder
from codemap.errors import CodemapError
from codemap.embed import Backend, resolve_model

from .conftest import DATA, EXAMPLES

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from codemap.export import ExportConfig, export_model  # noqa: E402  (needs torch)
from codemap.embed.onnx_backend import CPU, CUDA, OnnxBackend  # noqa: E402

runner = CliRunner()


@pytest.fixture(scope="module")
def tiny_export(tiny_model, tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny-export") / "onnx"
    return export_model(ExportConfig(model=str(tiny_model), out=out, int8=True, parity_terms=200))


@pytest.fixture(scope="module")
def default_export(tmp_path_factory):
    """The real default model exported once (fp32 + int8) through the CLI."""
    out = tmp_path_factory.mktemp("default-export") / "minilm-onnx"
    # 1,000 of the 2,362 parity queries keep the test short; the full check is the CLI default.
    result = runner.invoke(app, ["export", "default", "--out", str(out), "--int8",
                                 "--parity-terms", "1000"])
    assert result.exit_code == 0, result.output
    return out, result.output


def test_tiny_export_matches_torch(tiny_model, tiny_export):
    report = tiny_export.report["variants"]
    assert report["fp32"]["cosine_min"] > 0.9999
    texts = ["Potassium", "Hemoglobin A1c/Hemoglobin.total in Blood", "x"]
    torch_vectors = Encoder(resolve_model(str(tiny_model)), EncoderConfig(device="cpu")).encode(texts)
    info = resolve_model(str(tiny_export.folder))
    fp32 = Encoder(info.__class__(**{**info.__dict__, "onnx_file": "model.onnx"})).encode(texts)
    np.testing.assert_allclose(fp32, torch_vectors, atol=1e-4)
    assert {"model.onnx", "model.int8.onnx", "tokenizer.json", "codemap.json", "parity.json",
            "README.md", "model.onnx_data"} <= {p.name for p in tiny_export.folder.iterdir()}
    assert (tiny_export.folder / "model.onnx").stat().st_size < 100_000  # the graph, no weights


@pytest.mark.parametrize("batch,length", [(1, 1), (1, 32), (300, 1), (300, 32)])
def test_dynamic_batch_and_sequence_axes(tiny_model, tiny_export, batch, length):
    backend = OnnxBackend(resolve_model(str(tiny_export.folder)), EncoderConfig(device="cpu"))
    session = backend.ort.InferenceSession(str(tiny_export.folder / "model.onnx"),
                                           providers=[CPU])
    ids = np.random.default_rng(length).integers(1000, 30000, size=(batch, length))
    mask = np.ones_like(ids)
    mask[::2, length // 2 + 1:] = 0  # every other row padded
    onnx_out = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
    model = transformers.AutoModel.from_pretrained(tiny_model).eval()
    with torch.no_grad():
        hidden = model(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask)).last_hidden_state
    m = torch.tensor(mask).unsqueeze(-1).float()
    expected = torch.nn.functional.normalize((hidden * m).sum(1) / m.sum(1), dim=-1).numpy()
    assert onnx_out.shape == (batch, 32)
    np.testing.assert_allclose(onnx_out, expected, atol=1e-4)


def test_manifest_round_trip(tiny_model, tiny_export):
    info = resolve_model(str(tiny_export.folder))
    source = resolve_model(str(tiny_model))
    saved = json.loads((tiny_export.folder / "parity.json").read_text())
    # int8 is the CPU file only when its top-1 agrees with torch on >= 99 % of the queries.
    agrees = saved["variants"]["int8"]["top1_agreement"] >= 0.99
    assert info.backend is Backend.ONNX
    assert info.onnx_file == ("model.int8.onnx" if agrees else "model.onnx")
    assert (info.pooling, info.max_length, info.normalize, info.prefix) == \
        (source.pooling, source.max_length, source.normalize, source.prefix)
    assert info.extra["variants"] == {"fp32": "model.onnx", "int8": "model.int8.onnx"}
    assert info.extra["source_model"] == str(tiny_model)
    assert saved["passed"] and set(saved["variants"]) == {"fp32", "int8"}
    assert info.fingerprint() != source.fingerprint()


def test_cpu_fallback_when_cuda_provider_absent_or_unusable(tiny_export, monkeypatch):
    info = resolve_model(str(tiny_export.folder))
    backend = OnnxBackend(info, EncoderConfig(device="auto"))
    if CUDA not in backend.ort.get_available_providers():
        assert backend.provider == CPU
        with pytest.raises(CodemapError, match="no CUDA provider"):
            OnnxBackend(info, EncoderConfig(device="cuda"))
    # onnxruntime-gpu on a machine without a GPU lists CUDA, then opens a CPU-only session.
    monkeypatch.setattr(backend.ort, "get_available_providers", lambda: [CUDA, CPU])
    monkeypatch.setattr(backend.ort, "InferenceSession", _cpu_only_session(backend.ort))
    fallback = OnnxBackend(info, EncoderConfig(device="auto"))
    assert fallback.provider == CPU
    assert fallback.embed(["Sodium"]).shape == (1, 32)


def _cpu_only_session(ort):
    real = ort.InferenceSession

    def make(path, sess_options=None, providers=None):
        return real(path, sess_options=sess_options, providers=[CPU])

    return make


def test_bad_inputs_are_clean_errors(tmp_path):
    not_model = tmp_path / "notes"
    not_model.mkdir()
    (not_model / "readme.txt").write_text("hello")
    with pytest.raises(CodemapError, match="not a model folder"):
        export_model(ExportConfig(model=str(not_model), out=tmp_path / "out"))
    gpt = tmp_path / "gpt"
    transformers.GPT2Config(n_layer=1, n_embd=16, n_head=2).save_pretrained(gpt)
    with pytest.raises(CodemapError, match="architecture 'gpt2' is not supported"):
        export_model(ExportConfig(model=str(gpt), out=tmp_path / "out"))
    result = runner.invoke(app, ["export", str(not_model), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "not a model folder" in result.output
    assert not (tmp_path / "out").exists()


def test_default_model_export_parity(default_export):
    out, output = default_export
    report = json.loads((out / "parity.json").read_text())
    assert report["passed"] and report["queries"] == 1000
    int8 = report["variants"]["int8"]
    assert int8["cosine_mean"] > 0.98 and int8["top10_recall_drop"] <= 0.02
    assert report["variants"]["fp32"]["cosine_min"] > 0.9999
    assert report["variants"]["fp32"]["top1_agreement"] == 1.0
    assert report["variants"]["fp32"]["top1_agreement_clear"] == 1.0
    assert int8["top1_agreement_clear"] >= int8["top1_agreement"]  # flips gather in near-ties
    assert "int8" in output and "exported default" in output
    assert "on clear leads" in (out / "README.md").read_text()


def test_agreement_on_clear_leads_counts_only_decisive_queries():
    from codemap.export.parity import CLEAR_LEAD, ParityTerms, compare

    def unit(*rows):
        v = np.array(rows, dtype=float)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    terms = ParityTerms(queries=["tie", "clear"], corpus=["x", "y", "z"],
                        query_codes=["1", "3"], corpus_codes=["1", "2", "3"])
    corpus = np.eye(3)
    # "tie" sits between x and y (x ahead by far less than CLEAR_LEAD); "clear" is on z.
    reference = np.vstack([unit([1 + CLEAR_LEAD / 10, 1, 0], [0, 0.2, 1]), corpus])
    tie_flips = np.vstack([unit([1, 1 + CLEAR_LEAD / 10, 0], [0, 0.2, 1]), corpus])
    clear_flips = np.vstack([unit([1 + CLEAR_LEAD / 10, 1, 0], [0, 1, 0.2]), corpus])
    near = compare(reference, tie_flips, terms)
    assert (near["top1_agreement"], near["top1_agreement_clear"], near["clear_share"]) == (0.5, 1.0, 0.5)
    real = compare(reference, clear_flips, terms)
    assert (real["top1_agreement"], real["top1_agreement_clear"]) == (0.5, 0.0)


def test_smoothing_keeps_the_models_function(tiny_model):
    from codemap.export.convert import load_checkpoint
    from codemap.export.smooth import SmoothedLinear, calibration_texts, smooth_linears

    model, tokenizer = load_checkpoint(resolve_model(str(tiny_model)))
    batch = tokenizer(["Potassium [Moles/volume] in Serum or Plasma", "K+ SerPl", "x"],
                      padding=True, return_tensors="pt")
    with torch.no_grad():
        before = model(**batch).last_hidden_state
        assert smooth_linears(model, tokenizer, calibration_texts()[:100], alpha=0.75) == 2 * 6
        after = model(**batch).last_hidden_state
    assert sum(isinstance(m, SmoothedLinear) for m in model.modules()) == 12
    torch.testing.assert_close(after, before, atol=1e-5, rtol=1e-4)


def test_smoothed_int8_is_closer_to_torch_than_plain_int8(default_export, tmp_path):
    """The shipped int8 (smoothed) against the plain graph quantised the same way, on the same
    parity queries: smoothing must bring the int8 vectors closer to torch."""
    from codemap.export import convert, parity

    out, _ = default_export
    plain = tmp_path / "plain.int8.onnx"
    convert.quantize_int8(out / "model.onnx", plain)
    shipped = json.loads((out / "parity.json").read_text())["variants"]["int8"]
    try:
        report = parity.check_parity(resolve_model("default"), resolve_model(str(out)),
                                     {"plain": str(plain)}, parity.loinc_terms(1000))
    except CodemapError as failed:  # the plain int8 may fail parity outright (e5-small: it does)
        report = failed.report
    assert shipped["cosine_mean"] > report["variants"]["plain"]["cosine_mean"]
    assert shipped["top1_agreement"] > report["variants"]["plain"]["top1_agreement"]


@pytest.fixture(scope="module")
def export_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("export-index-cache")


def test_map_with_export_runs_without_torch(default_export, export_cache, tmp_path):
    out, _ = default_export
    table = tmp_path / "de.csv"
    # A finder that refuses torch/transformers, as on a machine where they are not installed.
    script = ("import sys\n"
              "class NoTorch:\n"
              "    def find_spec(self, name, path=None, target=None):\n"
              "        if name.split('.')[0] in ('torch', 'transformers'):\n"
              "            raise ImportError(name)\n"
              "sys.meta_path.insert(0, NoTorch())\n"
              "from codemap.cli import main; main()")
    # A 150-code slice of LOINC: the index of a model of its own is built for this test alone.
    done = subprocess.run([sys.executable, "-c", script, "map", str(DATA / "labs_de_cp1252.csv"),
                           "--target", str(DATA / "loinc_en_small.csv"), "--model", str(out),
                           "-o", str(table), "-q",
                           "--cache-dir", str(export_cache)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert table.exists()


def test_map_with_export_end_to_end(default_export, export_cache, tmp_path):
    out, _ = default_export
    table = tmp_path / "labs.csv"
    result = runner.invoke(app, ["map", str(EXAMPLES / "labs.csv"), "--target",
                                 str(DATA / "loinc_en_small.csv"), "--model", str(out),
                                 "-o", str(table), "--top-k", "3",
                                 "--cache-dir", str(export_cache), "--method", "encoder"])
    assert result.exit_code == 0, result.output
    import pandas as pd

    frame = pd.read_csv(table, dtype=str)
    assert frame["source_row"].nunique() >= 149
    top = frame[frame["rank"] == "1"].set_index("source_text")["target_code"]
    # The same query through the torch model: the int8 export agrees on an unambiguous one.
    assert top["Potassium"] in {"2823-3", "6298-4"}


def test_bench_command_on_tiny_model(tiny_model, tiny_export):
    result = runner.invoke(app, ["bench", "--model", str(tiny_model), "--terms", "300",
                                 "--export", str(tiny_export.folder)])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("| ")]
    assert [line.split(" | ")[0] for line in lines[1:]] == ["| a torch fp32, fixed unsorted batches",
                                                          "| b torch fp32, length-sorted (Encoder)",
                                                          "| c onnx fp32", "| d onnx int8"]
    assert lines[1].endswith("| 1.000 | 1.000 |")  # (a) agrees with itself
    assert "| 1.000 |" in lines[2]  # sorted torch finds the same neighbours as unsorted torch
    bad = runner.invoke(app, ["bench", "--model", str(tiny_export.folder), "--terms", "300"])
    assert bad.exit_code == 2 and "needs the PyTorch model" in bad.output


def test_bench_reference_reads_the_model_prefix(tiny_model, tiny_export, tmp_path):
    """An e5 model reads "query: " before each term; the unsorted reference row must too, or its
    agreement column compares two different inputs (it did before 2026-11-28)."""
    import shutil

    e5 = tmp_path / "tiny-e5-small"  # the name an e5 prefix is recognised by
    shutil.copytree(tiny_model, e5)
    result = runner.invoke(app, ["bench", "--model", str(e5), "--terms", "300",
                                 "--export", str(tiny_export.folder)])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("| ")]
    assert "| 1.000 |" in lines[2]  # sorted torch (prefixed) = the unsorted reference
