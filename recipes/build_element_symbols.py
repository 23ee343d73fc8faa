"""Copy the periodic table's symbols and names into the package (codemap.domains.lab.element_symbols).

The public-domain `periodictable` package (https://github.com/python-periodictable/periodictable)
knows every element's symbol and name ("K" potassium). Lab lists write electrolytes and trace
metals by their symbol; codemap reads a leading symbol as its element for LOINC targets. Written
as TSV: symbol, name, and whether the element is a gas at room temperature (labs measure gases as
molecules and write a formula: pO2, CO2; an element's symbol then is no name of its test).

    pip install periodictable && python recipes/build_element_symbols.py --out codemap/data/elements
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

import periodictable

from build_medical_abbreviations import copy_licence  # benchmarks/ is on sys.path as a script

# The elements that are gases at 25 °C and 1 atm (hydrogen, nitrogen, oxygen, the halogens
# fluorine and chlorine, the noble gases): a fact of chemistry, not a choice of tests.
GASES = {"H", "He", "N", "O", "F", "Ne", "Cl", "Ar", "Kr", "Xe", "Rn"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the TSV and licence")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    elements = [e for e in periodictable.elements if e.number > 0]
    with (args.out / "elements.tsv").open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(["symbol", "name", "gas"])
        for element in elements:
            writer.writerow([element.symbol, element.name, int(element.symbol in GASES)])
    version = copy_licence("periodictable", args.out / "LICENSE-periodictable.txt")
    print(f"{len(elements)} elements (periodictable {version}) → {args.out}")


if __name__ == "__main__":
    main()
