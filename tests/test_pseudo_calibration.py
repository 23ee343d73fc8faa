"""A calibrated confidence for a target with no shipped calibration (here ICD-10-PCS, real names
from the repo), fitted on the target's own pseudo-queries and cached: the real CLI."""
import json

import pandas as pd
from typer.testing import CliRunner

from codemap.cli import app
from codemap.decide.confidence import Calibrator

from .conftest import REPO

runner = CliRunner()
PCS = REPO / "benchmarks/data"


def _procedure_list(tmp_path):
    gold = pd.read_csv(PCS / "icd10pcs_short_dev.tsv", sep="\t", dtype=str).head(40)
    target = pd.read_csv(PCS / "icd10pcs_short_target.csv", dtype=str)
    target = target[target["code"].str[:4].isin(set(gold["pcs_code"].str[:4]))]
    gold.to_csv(tmp_path / "pcs.tsv", sep="\t", index=False)
    # A name of its own: the calibration cache files are named by the target's id, and the
    # session's shared cache holds other tests' "target" tables.
    target.to_csv(tmp_path / "pcs_target.csv", index=False)
    return tmp_path / "pcs.tsv", tmp_path / "pcs_target.csv"


def test_map_writes_a_confidence_fitted_on_pseudo_queries_and_caches_it(tmp_path, shared_cache):
    source, target = _procedure_list(tmp_path)
    args = ["map", str(source), "--target", str(target), "--text-col", "short_name",
            "--cache-dir", str(shared_cache)]
    first = runner.invoke(app, [*args, "-o", str(tmp_path / "a.csv")])
    assert first.exit_code == 0, first.output
    assert "pseudo-queries of the target" in " ".join(first.output.split())
    out = pd.read_csv(tmp_path / "a.csv")
    assert out["confidence"].between(0, 1).all()
    tops = out[out["rank"] == 1]
    right = tops["target_code"] == tops["pcs_code"]
    # Calibrated on the target's pseudo-queries, the confidence still ranks these real rows:
    # the right top candidates sit higher on average than the wrong ones.
    assert right.any() and (~right).any()
    assert tops.loc[right, "confidence"].mean() > tops.loc[~right, "confidence"].mean()

    cached = list((shared_cache / "calibration").glob("pcs_target-*.json"))
    assert len(cached) == 1
    calibrator = Calibrator.load(cached[0])
    assert calibrator.fitted_on["queries"] > 500 and calibrator.metrics["auroc_top1"] > 0.6
    stamp = cached[0].stat().st_mtime_ns
    second = runner.invoke(app, [*args, "-o", str(tmp_path / "b.csv")])
    assert second.exit_code == 0, second.output
    assert cached[0].stat().st_mtime_ns == stamp  # reused, not refitted
    pd.testing.assert_frame_equal(out, pd.read_csv(tmp_path / "b.csv"))


def test_a_damaged_cache_file_is_refitted_not_fatal(tmp_path, shared_cache):
    source, target = _procedure_list(tmp_path)
    args = ["map", str(source), "--target", str(target), "--text-col", "short_name",
            "--cache-dir", str(shared_cache), "-q"]
    assert runner.invoke(app, [*args, "-o", str(tmp_path / "a.csv")]).exit_code == 0
    for path in (shared_cache / "calibration").glob("pcs_target-*.json"):
        path.write_text("{not json", encoding="utf-8")
    result = runner.invoke(app, [*args, "-o", str(tmp_path / "b.csv")])
    assert result.exit_code == 0, result.output
    for path in (shared_cache / "calibration").glob("pcs_target-*.json"):
        assert json.loads(path.read_text(encoding="utf-8"))["format"] == "codemap-calibration"
