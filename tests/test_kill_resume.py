"""`codemap map` killed with SIGKILL while building the index and while writing the output leaves
no output file and no corrupt cache; the next run resumes from the finished chunks."""
import os
import signal
import subprocess
import sys
import time

import pandas as pd

from .conftest import DATA, EXAMPLES

# The real CLI in its own process, with small index chunks so a kill lands between chunks, on a
# table of 150 real LOINC codes (a table has no shipped vectors: its index is built here).
CLI = ("import sys, codemap.embed.index as index; index.CHUNK_NAMES = 16; "
       "from codemap.cli import app; sys.argv[0] = 'codemap'; app()")
TARGET = DATA / "loinc_en_small.csv"
# The same, but the final rename of the workbook never comes: the kill then lands while the
# temporary workbook exists, however slowly a loaded machine runs the test (no time window).
STALL_WORKBOOK = ("import os, time, types, codemap.files as files; rename = os.replace; "
                  "files.os = types.SimpleNamespace(**{**vars(os), 'replace': lambda a, b: "
                  "time.sleep(600) if str(b).endswith('.xlsx') else rename(a, b)}); ")


def _start(args, cache, prelude=""):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen([sys.executable, "-c", prelude + CLI, "map", *args, "--cache-dir", str(cache), "-v"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _kill_when(process, ready, timeout=120):
    """SIGKILL `process` as soon as ready() holds; False if it finished first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if ready():
            process.send_signal(signal.SIGKILL)
            process.wait()
            return True
        time.sleep(0.002)
    return False


def test_killed_runs_leave_no_output_and_resume(tmp_path, default_encoder):
    # default_encoder: the default model's ONNX export is made (once per session) before the
    # subprocesses start, so the kills land in the index build and the write, not in the export.
    labs = pd.read_csv(EXAMPLES / "labs.csv", dtype=str, keep_default_na=False)
    source = tmp_path / "labs.csv"
    pd.concat([labs] * 8, ignore_index=True).to_csv(source, index=False)  # 1200 rows
    output = tmp_path / "labs.codemap.xlsx"
    cache = tmp_path / "cache"
    args = [str(source), "--target", str(TARGET), "-o", str(output), "--top-k", "10"]

    # 1. Killed during the index build, once two chunks are on disk.
    build = _start(args, cache)
    chunk_files = lambda: list(cache.glob("index/*/chunks/*.npy"))  # noqa: E731
    assert _kill_when(build, lambda: len(chunk_files()) >= 2), build.communicate()
    assert not output.exists() and not list(cache.glob("index/*/manifest.json"))

    # 2. Resumes the finished chunks; killed while the review workbook is being written.
    before = {p.name: p.stat().st_mtime_ns for p in chunk_files()}
    write = _start(args, cache, prelude=STALL_WORKBOOK)
    assert _kill_when(write, lambda: any(tmp_path.glob(f".{output.name}.*.part")), timeout=600), \
        write.communicate()
    _, err = write.communicate()
    assert f"resuming index build of loinc_en_small: {len(before)} of" in err
    assert not output.exists()
    assert list(cache.glob("index/*/manifest.json"))  # the index was finished before the write

    # 3. Completes from the cache and writes the workbook.
    final = _start(args, cache)
    out, err = final.communicate(timeout=300)
    assert final.returncode == 0, err
    assert "index hit" in out
    frame = pd.read_excel(output, sheet_name="candidates", dtype=str, engine="calamine")
    assert frame["source_row"].nunique() == 1200

