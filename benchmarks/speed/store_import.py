"""Import rate, store size and peak memory of `codemap vocab import umls` on generated
MRCONSO.RRF files of several sizes (exact MRCONSO layout: 18 '|'-terminated fields, ~3 atoms
per CUI, ENG/GER/FRE names from 6 sources, 2% suppressed).

Each import runs as its own `codemap` process under a fresh wrapper, so its peak RSS is
measured alone (getrusage of the finished child). Peak RSS that stays flat as the input grows shows the import
streams instead of loading the file.

    python benchmarks/speed/store_import.py --rows 1000000 --rows 4000000 --work /tmp/codemap-bench
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb

GENERATE = """
COPY (SELECT
  'C' || lpad(CAST(i // 3 AS VARCHAR), 7, '0') AS CUI,
  CASE WHEN i % 5 = 3 THEN 'GER' WHEN i % 7 = 4 THEN 'FRE' ELSE 'ENG' END AS LAT,
  CASE WHEN i % 3 = 0 THEN 'P' ELSE 'S' END AS TS,
  'L' || lpad(CAST(i AS VARCHAR), 7, '0') AS LUI,
  CASE WHEN i % 3 = 0 THEN 'PF' ELSE 'VO' END AS STT,
  'S' || lpad(CAST(i AS VARCHAR), 7, '0') AS SUI,
  CASE WHEN i % 2 = 0 THEN 'Y' ELSE 'N' END AS ISPREF,
  'A' || lpad(CAST(i AS VARCHAR), 8, '0') AS AUI,
  '' AS SAUI, CAST(i * 7 AS VARCHAR) AS SCUI, '' AS SDUI,
  ['SNOMEDCT_US', 'LNC', 'RXNORM', 'MSH', 'MSHGER', 'MEDDRA'][1 + i % 6] AS SAB,
  ['PT', 'SY', 'LN', 'MH', 'EN', 'LLT'][1 + (i // 6) % 6] AS TTY,
  CAST(i * 7 AS VARCHAR) AS CODE,
  ['Serum', 'Plasma', 'Urine', 'Blood', 'Chronic', 'Acute', 'Left', 'Right'][1 + i % 8] || ' ' ||
  ['potassium', 'sodium', 'glucose', 'kidney', 'fracture', 'infection', 'tablet'][1 + i % 7] ||
  ' ' || substr(md5(CAST(i AS VARCHAR)), 1, 10) || ' measurement ' || CAST(i // 3 AS VARCHAR) AS STR,
  '0' AS SRL, CASE WHEN i % 50 = 7 THEN 'O' ELSE 'N' END AS SUPPRESS, '256' AS CVF, '' AS _end
FROM range({rows}) t(i)) TO '{path}' (DELIMITER '|', HEADER false, QUOTE '')
"""


PEAK_OF_CHILD = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
                 "stdout=subprocess.DEVNULL); "
                 "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def generate(folder: Path, rows: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "MRCONSO.RRF"
    if not path.exists():
        with duckdb.connect() as con:
            con.execute(GENERATE.format(rows=rows, path=path))
    return path


def measure(rows: int, work: Path) -> dict:
    meta = work / f"meta-{rows}"
    conso = generate(meta, rows)
    store = work / f"store-{rows}"
    shutil.rmtree(store, ignore_errors=True)
    codemap = Path(sys.executable).with_name("codemap")
    started = time.perf_counter()
    # A fresh wrapper per size: its RUSAGE_CHILDREN peak is this import's alone.
    wrapped = subprocess.run(
        [sys.executable, "-c", PEAK_OF_CHILD, str(codemap), "vocab", "import", "umls", str(meta),
         "--store", str(store)], check=True, capture_output=True, text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"})
    seconds = time.perf_counter() - started
    peak_kib = int(wrapped.stdout.strip().splitlines()[-1])
    stored = store / "UMLS.duckdb"
    with duckdb.connect(str(stored), read_only=True) as con:
        counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                  for t in ("concepts", "names")}
    return {"rows": rows, "input_mb": round(conso.stat().st_size / 1e6, 1),
            "seconds": round(seconds, 1), "rows_per_s": round(rows / seconds),
            "store_mb": round(stored.stat().st_size / 1e6, 1),
            "peak_rss_mb": round(peak_kib / 1024), **counts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="MRCONSO rows; repeat")
    parser.add_argument("--work", type=Path, default=Path("/tmp/codemap-bench"))
    args = parser.parse_args()
    for rows in sorted(args.rows or [1_000_000, 4_000_000]):
        print(json.dumps(measure(rows, args.work)), flush=True)


if __name__ == "__main__":
    main()
