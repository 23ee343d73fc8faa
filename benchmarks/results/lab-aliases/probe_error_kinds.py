"""What separates a wrong first candidate from the right one, on the lab sets ranked against
LOINC long names: for each row whose gold is in the top 10 but not first, the LOINC axes on which
the first candidate and the gold differ (codemap.domains.lab.loinc.concept_axes on their long
names): another analyte, the same analyte with another detail (subpart, qualifier, divisor),
or the same component with another property / system / timing / method. Read from a
stated_axes.py result file that keeps its rows (not a ranking run).

    python benchmarks/results/lab-aliases/probe_error_kinds.py RESULT.json OUT.json
"""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from codemap.domains.lab.loinc import component_parts, concept_axes

SETS = ("labs_fluid", "labs_nofluid", "german_labs", "loinc_short", "taiwan_aliases")


def kind(first: str, gold: str) -> str:
    a, b = concept_axes({"name": first}), concept_axes({"name": gold})
    if a.component != b.component:
        same = component_parts(a.component)[0] == component_parts(b.component)[0]
        return "same analyte, other detail" if same else "other analyte"
    differs = [axis for axis, x, y in (("property", a.properties, b.properties),
                                       ("system", a.system.lower(), b.system.lower()),
                                       ("timing", a.timing, b.timing),
                                       ("method", a.methods, b.methods)) if x != y]
    return "same component: " + (" + ".join(differs) if differs else "no axis (name only)")


def main(result: str, out: str) -> None:
    report = {}
    for entry in json.loads(Path(result).read_text(encoding="utf-8")):
        if entry["set"] not in SETS or "rows" not in entry:
            continue
        kinds: Counter = Counter()
        for row in entry["rows"]:
            codes, names = row["codes"], row["names"]
            hit = next((k for k, c in enumerate(codes) if c in row["gold"]), None)
            if hit is None or hit == 0:
                kinds["right first" if hit == 0 else "gold not in top 10"] += 1
                continue
            kinds[kind(names[0], names[hit])] += 1
        report[entry["set"]] = dict(kinds.most_common())
        print(entry["set"], report[entry["set"]])
    Path(out).write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:3])
