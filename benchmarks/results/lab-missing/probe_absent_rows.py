"""For the rows of a lab list whose gold code the built-in LOINC lacks: does the target hold
another code of the gold's LOINC component, of its analyte only, or nothing of its analyte?
Reads gold codes and the target's codes only (components from LOINC's core table in shared/),
no ranking. Usage: CODEMAP_SHARED=… python probe_absent_rows.py LIST.tsv [LIST.tsv …]"""
import os
import sys

import pandas as pd

from codemap.domains.lab.loinc import component_parts
from codemap.vocab.vocabulary import builtin_loinc

CORE = os.path.join(os.environ.get("CODEMAP_SHARED", "../shared"),
                    "data/loinc-core-2col/LoincTableCore_LOINC_NUM_COMPONENT.csv")


def main(paths: list[str]) -> None:
    component = pd.read_csv(CORE, dtype=str).set_index("LOINC_NUM")["COMPONENT"].str.lower()
    analyte = component.map(lambda c: component_parts(c)[0])
    codes = set(builtin_loinc().concepts["code"])
    held = [c for c in codes if c in component.index]
    components, analytes = set(component[held]), set(analyte[held])
    for path in paths:
        gold = pd.read_csv(path, sep="\t", dtype=str)["loinc_code"].dropna()
        absent = [c for c in gold if c not in codes and c in component.index]
        same_component = sum(component[c] in components for c in absent)
        same_analyte = sum(analyte[c] in analytes and component[c] not in components for c in absent)
        n = len(absent)
        print(f"{os.path.basename(path)}: {len(gold)} rows, {n} absent from the built-in LOINC: "
              f"component held {same_component} ({same_component / n:.3f}), analyte only "
              f"{same_analyte} ({same_analyte / n:.3f}), nothing of the analyte "
              f"{n - same_component - same_analyte} ({(n - same_component - same_analyte) / n:.3f})")


if __name__ == "__main__":
    main(sys.argv[1:])
