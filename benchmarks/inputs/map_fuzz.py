"""The map pipeline on a 100,000-row generated list of hostile-but-legal text (every script,
empty cells, quotes and delimiters inside cells, 1 to 400 characters), through the real CLI onto a
small target: seconds, peak memory, and whether every row is in the output (issue #45).

    python benchmarks/inputs/map_fuzz.py benchmarks/results/hostile/map_fuzz_100k.json --rows 100000
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import random
import sys
import tempfile
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.conftest import small_target  # noqa: E402
from tests.hostile_files import run_cli  # noqa: E402

# Code points of many scripts and the characters exports quote or split on.
_ALPHABET = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,;|\t\"'"
             "äöüßéèçñ" "αβγδ" "абвгд" "אבגד" "ابتث" "カリウム" "血清钾" "한국어" "ऄअआ" "🧪")


def text(rng: random.Random) -> str:
    length = rng.choice([0, 1, 2, 5, 12, 30, 80, 400])
    return "".join(rng.choice(_ALPHABET) for _ in range(length))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        source = folder / "list.csv"
        with open(source, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["code", "name", "unit"])
            for n in range(args.rows):
                writer.writerow([f"L{n}", text(rng), rng.choice(["", "mmol/L", "%", "g/L"])])
        target, cache = small_target(folder, ["Potassium serum", "Sodium serum",
                                              "Glucose fasting", "Hemoglobin"])
        output = folder / "out.csv"
        found = run_cli(["map", str(source), "--target", str(target), "--cache-dir", str(cache),
                         "-o", str(output), "--text-col", "name", "--unit-col", "unit", "-q"],
                        folder)
        rows = pd.read_csv(output, dtype=str, keep_default_na=False, usecols=["source_row"])
        found.update(rows=args.rows, rows_in_output=int(rows["source_row"].nunique()),
                     load_average_after=os.getloadavg())
    print(json.dumps({k: v for k, v in found.items() if k != "stderr"}))
    args.out.write_text(json.dumps(found, indent=1) + "\n")


if __name__ == "__main__":
    main()
