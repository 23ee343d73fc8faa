"""The second stage (codemap.rerank) inside `codemap map`: the real CLI, model and list, with a
second stage folder made here as benchmarks/quality/second_stage.py ships one (a cross-encoder
saved by train.cross_encoder, a LightGBM combiner, a calibration and a precision curve). Its
weights are untrained and the combiner is fitted on drawn features, so this checks the
mechanics — which runs use it, how it orders, what it suggests — not its quality
(benchmarks/results/second-stage/)."""
import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from codemap.cli import app
from codemap.decide.triage import suggest
from codemap.rerank.features import FEATURES
from codemap.rerank.second_stage import COMBINER, CROSS_ENCODER, MANIFEST, SecondStage

from .conftest import EXAMPLES

runner = CliRunner()


def test_pre_approve_is_suggested_without_approving_unless_asked():
    rows = pd.DataFrame({"source_row": [2, 2, 3, 3], "rank": [1, 2, 1, 2],
                         "confidence": [0.97, 0.01, 0.40, 0.30]})
    suggested = suggest(rows, 0.1, 0.95, None)
    assert list(suggested["suggestion"]) == ["pre-approve"] * 2 + ["review"] * 2
    assert "decision" not in suggested
    approved = suggest(rows, 0.1, 0.95, 0.95)
    assert list(approved["decision"]) == ["approved", "", "", ""]


@pytest.fixture(scope="module")
def stage_folder(tmp_path_factory):
    torch = pytest.importorskip("torch")
    pytest.importorskip("peft")
    lightgbm = pytest.importorskip("lightgbm")
    from codemap.embed.models import resolve_model
    from codemap.train.cross_encoder import CrossEncoderConfig, build_model, save_model

    folder = tmp_path_factory.mktemp("second-stage")
    config = CrossEncoderConfig(layers=2)
    torch.manual_seed(0)
    model, _, info = build_model(config)
    save_model(folder / CROSS_ENCODER, model, config, info, [])
    rng = np.random.default_rng(0)
    features = rng.normal(size=(400, len(FEATURES)))
    data = lightgbm.Dataset(features, label=(features[:, 0] > 0).astype(int))
    booster = lightgbm.train({"objective": "binary", "verbose": -1, "num_leaves": 4}, data, 5)
    (folder / COMBINER).write_text(booster.model_to_string(), encoding="utf-8")
    manifest = {"format": 1, "features": list(FEATURES), "candidates": 20,
                "first_stage_model": resolve_model("default").key(), "kinds": ["lab"],
                "calibration": {"x": [0.0, 1.0], "y": [0.0, 1.0]}, "pre_approve_at": 0.5,
                "no_match_below": 0.2,
                "precision_curve": [[0.5, 0.99, 300], [0.2, 0.7, 600], [0.0, 0.5, 1000]],
                "fitted_on": ["drawn features"]}
    (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def test_fits_only_the_first_stage_and_target_kinds_it_was_adopted_for(stage_folder):
    from codemap.embed.models import resolve_model

    model = resolve_model("default").key()
    assert SecondStage.fits(stage_folder, model, "lab")
    assert not SecondStage.fits(stage_folder, model, "drug")
    assert not SecondStage.fits(stage_folder, "coder-en@0000", "lab")
    assert not SecondStage.fits(stage_folder / "missing", model, "lab")


@pytest.fixture(scope="module")
def mapped(stage_folder, tmp_path_factory, shared_cache):
    """The example's first 12 rows mapped with and without the second stage."""
    folder = tmp_path_factory.mktemp("mapped")
    source = folder / "labs.csv"
    pd.read_csv(EXAMPLES / "labs.csv", dtype=str).head(12).to_csv(source, index=False)
    runs = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SecondStage, "shipped_folder", staticmethod(lambda: stage_folder))
        for flag in ("--second-stage", "--no-second-stage"):
            out = folder / f"{flag.strip('-')}.csv"
            result = runner.invoke(app, ["map", str(source), "--target", "LOINC", "-o", str(out),
                                         "--cache-dir", str(shared_cache), flag])
            assert result.exit_code == 0, result.output
            runs[flag] = (result.output, pd.read_csv(out, dtype=str, keep_default_na=False))
    return runs


def test_map_orders_by_the_second_stage_and_suggests_from_its_curve(mapped):
    said, second = mapped["--second-stage"]
    _, first = mapped["--no-second-stage"]
    assert "second stage (cross-encoder" in said and "pre-approve:" in said
    scored = second[second["rank"] != ""]
    assert scored["explanation"].str.contains("second stage: p ", regex=False).all()
    assert not first["explanation"].str.contains("second stage").any()
    by_row = scored.assign(c=scored["confidence"].astype(float)).groupby("source_row")
    assert (by_row["rank"].count() == 10).all()  # 20 re-read, the run's top 10 kept
    assert all((g["c"].diff().dropna() <= 1e-9).all() for _, g in by_row)
    # pre-approve from the curve's 0.95-precision threshold (0.5), a suggestion only.
    top = scored[scored["rank"] == "1"].set_index("source_row")
    expected = np.where(top["confidence"].astype(float) >= 0.5, "pre-approve",
                        np.where(top["confidence"].astype(float) < 0.2, "no_match", "review"))
    assert list(top["suggestion"]) == list(expected)
    assert "decision" not in second or not (second["decision"] == "approved").any()
