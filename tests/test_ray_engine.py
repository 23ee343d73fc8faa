"""--engine ray: same candidates as the local engine, resume, a killed actor, review from parts.

One local Ray instance (2 CPUs) for the whole module; the real default model and the built-in
LOINC target on examples/labs.csv.
"""
import json
import os
import shutil
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

ray = pytest.importorskip("ray", reason="the `ray` extra is not installed")

from codemap.cli import app  # noqa: E402
from codemap.config import IndexConfig, MapConfig, RankConfig, RayConfig  # noqa: E402
from codemap.errors import CodemapError  # noqa: E402
from codemap.read import SOURCE_FILE_COLUMN  # noqa: E402
from codemap.write.parts import MANIFEST, read_parts  # noqa: E402
from codemap.engines import map_codes  # noqa: E402
from codemap.engines.ray import BlockMapper, map_with_ray  # noqa: E402
from codemap.cli.summary import tier_line  # noqa: E402
from codemap.decide import SUGGESTIONS, tally  # noqa: E402

from .conftest import DATA, EXAMPLES  # noqa: E402

LABS = EXAMPLES / "labs.csv"
SMALL_TARGET = DATA / "loinc_en_small.csv"


class CrashOnceMapper(BlockMapper):
    """Exits its process, like a lost node, on its first block while the marker file exists."""

    marker = None

    def __call__(self, batch):
        if self.marker and os.path.exists(self.marker):
            os.remove(self.marker)
            os._exit(1)
        return super().__call__(batch)


@pytest.fixture(scope="module")
def ray_cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    # Workers cannot import the tests package: ship the crashing actor class by value.
    ray.cloudpickle.register_pickle_by_value(__import__(__name__, fromlist=["_"]))
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def config(shared_cache):
    return MapConfig(source=LABS, target="LOINC", cache_dir=shared_cache, progress=False)


@pytest.fixture(scope="module")
def ray_run(ray_cluster, config, tmp_path_factory):
    out = tmp_path_factory.mktemp("ray") / "mapped"
    counts = map_with_ray(config, [LABS], RayConfig(workers=2, batch_rows=40), out)
    return out, counts


def ordered(frame):
    # Rows embedded in other batches may move by float noise; compare in (row, score, code) order.
    return frame.sort_values(["source_row", "score", "target_code"],
                             ascending=[True, False, True]).reset_index(drop=True)


def assert_same_candidates(parts, whole):
    parts, whole = ordered(parts.drop(columns=[SOURCE_FILE_COLUMN])), ordered(whole)
    assert list(parts.columns) == list(whole.columns)
    fuzzy = ["score", "encoder_score", "confidence", "rank", "explanation"]
    pd.testing.assert_frame_equal(parts.drop(columns=fuzzy), whole.drop(columns=fuzzy),
                                  check_dtype=False)
    for column in ("score", "encoder_score"):
        assert (parts[column] - whole[column]).abs().max() <= 1e-4
    # Decision support runs in Mapper.map_block, so the parts carry it too.
    assert (parts["confidence"] - whole["confidence"]).abs().max() <= 2e-3


def test_ray_equals_local_engine(ray_run, config):
    out, counts = ray_run
    assert counts == {**counts, "parts": 4, "mapped": 4, "skipped": 0, "rows": 150, "complete": True}
    manifest = json.loads((out / MANIFEST).read_text())
    assert sum(p["rows"] for p in manifest["parts"].values()) == 150
    assert len({p["worker"] for p in manifest["parts"].values()}) >= 1
    assert manifest["run"]["engine"] == "ray" and manifest["run"]["target"] == "LOINC"
    assert manifest["run"]["confidence"].startswith("shipped lab calibration")
    parts = read_parts(out)
    assert_same_candidates(parts, map_codes(config).candidates)
    # Summed part by part, as the local engine does; every source row counted once.
    assert counts["tiers"] == dict(tally(parts)) and sum(counts["tiers"].values()) == 150


def test_resume_maps_only_the_unfinished_parts(ray_run, config, tmp_path):
    done, _ = ray_run
    out = tmp_path / "half"
    shutil.copytree(done, out)
    manifest = json.loads((out / MANIFEST).read_text())
    dropped = sorted(manifest["parts"])[1:3]
    for name in dropped:  # as a run killed with two parts left: one never written, one unlisted
        del manifest["parts"][name]
    (out / dropped[0]).unlink()
    manifest["complete"] = False
    (out / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(CodemapError, match="not finished"):
        read_parts(out)
    counts = map_with_ray(config, [LABS], RayConfig(workers=1, batch_rows=40), out)
    assert (counts["skipped"], counts["mapped"], counts["complete"]) == (2, 2, True)
    pd.testing.assert_frame_equal(read_parts(out), read_parts(done))
    # The same folder with other settings is refused, not mixed.
    with pytest.raises(CodemapError, match="other sources or settings"):
        map_with_ray(replace(config, rank=RankConfig(top_k=3)), [LABS],
                     RayConfig(workers=1, batch_rows=40), out)


def test_killed_actor_is_restarted_and_its_block_retried(ray_run, config, tmp_path):
    marker = tmp_path / "crash-once"
    marker.touch()
    CrashOnceMapper.marker = str(marker)
    out = tmp_path / "crashed"
    counts = map_with_ray(config, [LABS], RayConfig(workers=1, batch_rows=40), out,
                          actor=CrashOnceMapper)
    assert not marker.exists()  # the actor did exit once
    assert (counts["mapped"], counts["complete"]) == (4, True)
    pd.testing.assert_frame_equal(read_parts(out), read_parts(ray_run[0]))


def test_cli_map_ray_then_review(ray_cluster, shared_cache, tmp_path):
    runner = CliRunner()
    out = tmp_path / "mapped"
    result = runner.invoke(app, ["map", str(LABS), str(EXAMPLES / "labs_de.csv"), "-t",
                                 str(SMALL_TARGET), "--engine", "ray", "--workers", "2",
                                 "--batch-rows", "64", "-o", str(out), "--cache-dir",
                                 str(shared_cache)])
    assert result.exit_code == 0, result.output
    parts = read_parts(out)
    assert set(parts[SOURCE_FILE_COLUMN]) == {"labs.csv", "labs_de.csv"}
    assert tier_line(tally(parts)) in result.output  # sources of both lists, counted once each
    result = runner.invoke(app, ["review", str(out), "-o", str(tmp_path / "review.xlsx"),
                                 "--site", SOURCE_FILE_COLUMN])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.glob("review-*.xlsx")) == [
        "review-labs.csv.xlsx", "review-labs_de.csv.xlsx"]
    result = runner.invoke(app, ["review", str(out), "-o", str(tmp_path / "chunk.xlsx"),
                                 "--rows", "100"])
    assert result.exit_code == 0, result.output
    chunks = sorted(tmp_path.glob("chunk-*.xlsx"))
    sources = parts.drop_duplicates([SOURCE_FILE_COLUMN, "source_row"])
    assert len(chunks) == -(-len(sources) // 100)
    first = pd.read_excel(chunks[0], sheet_name="candidates", dtype=str,
                          engine="openpyxl")
    assert first[["source_row"]].drop_duplicates().shape[0] == 100
    # Each review workbook opens sorted by need of review, every source's rows together.
    tops = first[first["rank"] == "1"]
    assert (np.diff(tops["suggestion"].map(SUGGESTIONS.index).to_numpy()) >= 0).all()
    source = first[SOURCE_FILE_COLUMN] + "/" + first["source_row"]
    assert (source != source.shift()).sum() == source.nunique() == len(tops)


@pytest.mark.parametrize("args, message", [
    (["map", str(LABS), "-t", "LOINC", "--engine", "ray", "-o", "out.xlsx"], "folder of Parquet"),
    (["map", str(LABS), str(LABS), "-t", "LOINC"], "one at a time"),
    (["map", "missing.csv", "-t", "LOINC", "--engine", "ray", "-o", "mapped"], "not found"),
    (["map", str(LABS), "-t", "LOINC", "--engine", "ray", "--workers", "9", "-o", "mapped"],
     "need 9 CPUs"),
    (["review", str(EXAMPLES), "-o", "review.xlsx"], "no manifest.json"),
])
def test_bad_inputs_exit_2(ray_cluster, shared_cache, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, [*args, *(["--cache-dir", str(shared_cache)]
                                               if args[0] == "map" else [])])
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_vocab_embed_with_ray_writes_the_index_a_local_build_loads(ray_cluster, tmp_path,
                                                                   default_encoder):
    from codemap.domains import prepare_target
    from codemap.embed import load_or_build_index
    from codemap.vocab import load_target

    result = CliRunner().invoke(app, ["vocab", "embed", str(SMALL_TARGET), "--engine", "ray",
                                      "--workers", "2", "--cache-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "1 chunks by Ray" in result.output
    # the vocabulary as `codemap map` ranks it: the index map loads
    vocab = prepare_target(load_target(str(SMALL_TARGET))).vocab
    index = load_or_build_index(vocab, default_encoder, tmp_path)
    assert index.cache_hit
    local = default_encoder.encode(vocab.names["name"].tolist())
    assert np.abs(index.vectors - local).max() < 1e-4


def test_a_large_target_is_mapped_by_ray_in_two_stages(ray_cluster, tmp_path):
    # two_stage_above=0 makes the 150-code table "large": the driver builds the static stage, the
    # actors embed their rows' pooled names into the one shared store, as the local engine does.
    config = MapConfig(source=LABS, target=str(SMALL_TARGET), cache_dir=tmp_path / "cache",
                       progress=False, index=IndexConfig(two_stage_above=0))
    counts = map_with_ray(config, [LABS], RayConfig(workers=2, batch_rows=40), tmp_path / "out")
    assert counts["complete"] and counts["rows"] == 150
    run = json.loads((tmp_path / "out" / MANIFEST).read_text())["run"]
    assert run["index_kind"].startswith("two-stage")
    assert not list((tmp_path / "cache" / "index").glob("*/manifest.json"))  # no full index
    assert_same_candidates(read_parts(tmp_path / "out"), map_codes(config).candidates)
