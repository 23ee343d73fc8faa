"""A scripted, reproducible stand-in for each site's reviewers: approve every source's rank-1
candidate, except the rows listed below, and save the workbook as SITE.reviewed.xlsx. A code to
approve that is not among the source's candidates is typed over its rank-1 candidate, as a
reviewer does (codemap ranks a code its unit contradicts below every other, so the slip below
has to be typed).

    python examples/harmonise/review.py out/boston.codemap.xlsx out/leeds.codemap.xlsx …

The exceptions are what real review rounds produce, and each one feeds a sheet of the
harmonisation: rows rejected or left unchecked (coverage), a reviewer who picked a serum code over
rank 1's blood code, a mass-concentration code approved for a mmol/L result (a unit conflict),
one code approved twice (a code mapped to several concepts).
"""
from __future__ import annotations

import sys
from pathlib import Path

from openpyxl import load_workbook

REVIEWER = "example-script"
# (site, local code) → "reject", "skip" (left unchecked), "flag", or the target codes to approve.
EXCEPTIONS = {
    ("boston", "51512"): "reject",           # "Urine Mucous": no fitting concept in the subset
    ("boston", "51498"): "skip",             # specific gravity: not reviewed this round
    ("boston", "50931"): ["2345-7"],         # glucose is measured in serum: not rank 1's blood
    ("boston", "50971"): ["2823-3"],         # potassium, serum
    ("leeds", "XMATCH"): "reject",           # a comment field, not a result
    ("leeds", "GLU"): ["2345-7"],            # a reviewer's slip: mass code for a mmol/L result
    ("berlin", "L003"): ["718-7", "30350-3"],  # approved twice: blood and venous blood
    ("berlin", "L013"): "flag",              # MCH: asked the lab
}


def review(path: Path) -> Path:
    site = path.name.split(".")[0]
    book = load_workbook(path)
    sheet = book["candidates"]
    header = [cell.value for cell in sheet[1]]
    col = {name: header.index(name) for name in ("source_code", "rank", "target_code", "decision",
                                                  "reviewer")}
    shown = {}  # source code → its candidates' target codes
    for row in sheet.iter_rows(min_row=2):
        shown.setdefault(str(row[col["source_code"]].value or ""), set()).add(
            str(row[col["target_code"]].value or ""))
    for row in sheet.iter_rows(min_row=2):
        code, rank, target = (str(row[col[k]].value or "") for k in ("source_code", "rank", "target_code"))
        rule = EXCEPTIONS.get((site, code))
        if rule == "skip":
            continue
        if rule in ("reject", "flag"):
            decision = {"reject": "rejected", "flag": "flagged"}[rule] if rank == "1" else None
        elif isinstance(rule, list):
            typed = [c for c in rule if c not in shown[code]]
            if typed and rank == "1":  # typed over the first candidate
                row[col["target_code"]].value, target = typed[0], typed[0]
            decision = "approved" if target in rule else None
        else:
            decision = "approved" if rank == "1" else None
        if decision:
            row[col["decision"]].value = decision
            row[col["reviewer"]].value = REVIEWER
    out = path.with_name(f"{site}.reviewed.xlsx")
    book.save(out)
    return out


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(review(Path(arg)))
