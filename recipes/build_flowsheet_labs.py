"""Build `flowsheet_labs_dev.tsv` and `flowsheet_labs_fresh.tsv`: a clinical system's own names of
its observation codes ("Sodium Bld Qn", "BUN(ER-IS)", "Creatinine (ISTAT)'") with the LOINC
code its curators merged onto each, from the hierarchy template of NLM's LHC Flowsheet app
(LHNCBC/flowsheet-lhc on GitHub, commit 53b8283941322229af050582d9ed947951b8e483, file
`src/stores/h17.js`, last changed 2020-02-07; licence: the repository's LICENSE.md, a BSD-style
notice with LOINC's terms, copied beside the files). First read for codemap on 2026-11-30.

Each template entry names a local code ("D"), its indented display name ("B"), the LOINC code
merged onto it ("E", "LOINC_MERGED") and the unit of its normal range ("H"). Kept: every entry
with a local code, a name and a LOINC code; the name as written, the unit without the
template's "NULL". The same name and unit under one local code is one row; a name given two
LOINC codes keeps both, joined by "|" (either is right). The LOINC long name, short name and
equivalence class the template also carries are left out: they would answer the question.

Split by the local code's SHA-256 (even first byte: dev, odd: fresh), fixed before any run.

    python recipes/build_flowsheet_labs.py PATH/TO/h17.js
    (git show 53b8283941322229af050582d9ed947951b8e483:src/stores/h17.js > h17.js)
"""
from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import pandas as pd

DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "data"


def template_entries(text: str) -> list[dict]:
    """The JavaScript module's array of entries: line comments and trailing commas dropped, the
    rest is JSON."""
    body = text[text.index("["):]
    body = "\n".join(line for line in body.splitlines() if not line.strip().startswith("//"))
    body = re.sub(r",\s*([\]}])", r"\1", body).rstrip().rstrip(";")
    return json.loads(body)


def list_rows(entries: list[dict]) -> pd.DataFrame:
    """One row per local code, name and unit; its LOINC codes joined by "|"."""
    rows = {}
    for entry in entries:
        code, name, loinc = (str(entry.get(key, "")).strip() for key in ("D", "B", "E"))
        if not (code and name and loinc) or not re.fullmatch(r"\d+-\d", loinc):
            continue  # the template's header row and hierarchy headings
        unit = str(entry.get("H", "")).strip()
        key = (code, name, "" if unit.upper() == "NULL" else unit)
        rows.setdefault(key, []).append(loinc)
    return pd.DataFrame([{"local_code": c, "name": n, "unit": u,
                          "loinc_code": "|".join(dict.fromkeys(codes))}
                         for (c, n, u), codes in rows.items()])


def is_dev(local_code: str) -> bool:
    return hashlib.sha256(local_code.encode()).digest()[0] % 2 == 0


def main(path: str) -> None:
    rows = list_rows(template_entries(Path(path).read_text(encoding="utf-8")))
    dev = rows["local_code"].map(is_dev)
    for part, mask in (("dev", dev), ("fresh", ~dev)):
        rows[mask].to_csv(DATA / f"flowsheet_labs_{part}.tsv", sep="\t", index=False)
        print(f"flowsheet_labs_{part}.tsv: {int(mask.sum())} rows")


if __name__ == "__main__":
    main(sys.argv[1])
