"""Hostile input files at the sizes users reported, through the real CLI: seconds, peak memory
and the one error line of each (issue #45). Idle machine wanted; say if it was not.

    python benchmarks/inputs/hostile_inputs.py benchmarks/results/hostile/hostile_inputs.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.hostile_files import HOSTILE, refuse  # noqa: E402  (the tests' files, full size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="JSON file for the figures")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        for kind, (name, make, _) in HOSTILE.items():
            source = make(scratch / name)
            row = {"kind": kind, "file_mb": round(source.stat().st_size / 1e6, 2),
                   **refuse(source, scratch)}
            source.unlink()
            rows.append(row)
            print(f"{kind:34s} {row['file_mb']:9.2f} MB file  exit {row['exit_code']}  "
                  f"{row['seconds']:5.1f} s  {row['peak_mb']:5d} MB peak  "
                  f"{len(row['stderr'])} chars", flush=True)
    load = os.getloadavg()
    args.out.write_text(json.dumps({"load_average_after": load, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
