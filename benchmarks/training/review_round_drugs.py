"""A full review round on real data, then site tuning from it (README "The review loop").

The 720 curated MIMIC-IV drug strings → OMOP drug concepts of tests/data/ohdsi-mimic-drugs stand
in for a site's reviewed list: `codemap map` ranks them against the shipped drug target, a
scripted reviewer edits the workbook with openpyxl (approves the curated concept where it was
proposed and rejects the wrong candidates ranked above it; where it was not proposed, rejects
rank 1 and adds a row with the curated code), `codemap apply --memory` stores the decisions, and
`codemap train --from-reviews` fine-tunes the default model on the training part and reports the
held-out part before and after.

    OMP_NUM_THREADS=1 python benchmarks/training/review_round_drugs.py OUT [--key value ...]

Extra arguments go to `codemap train` (e.g. --steps 100 --lr 5e-5). Writes OUT/drugs.csv (the
code list), OUT/drugs.codemap.xlsx (as mapped), OUT/drugs.reviewed.xlsx, OUT/mappings.db,
OUT/site-tuned/ (model, report.json, split.tsv, heldout.tsv, log.csv) and OUT/*.txt (outputs).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import openpyxl
import pandas as pd
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: usage
from usage import positional  # noqa: E402

ARGS = positional(__doc__, 1)


REPO = Path(__file__).resolve().parents[2]
GOLD = REPO / "tests" / "data" / "ohdsi-mimic-drugs" / "dev_local_drug_to_concept.tsv"
TARGET = REPO / "codemap" / "data" / "drugs" / "drug_targets.tsv"
REVIEWER = "scripted reviewer (curated OHDSI MIMIC mapping)"


def codemap(out: Path, name: str, *args) -> None:
    """Run one codemap command as a user would; keep its output in OUT/NAME.txt."""
    result = subprocess.run([sys.executable, "-m", "codemap", *map(str, args)], capture_output=True,
                            text=True)
    (out / f"{name}.txt").write_text(result.stdout + result.stderr, encoding="utf-8")
    if result.returncode:
        sys.exit(f"codemap {args[0]} failed ({result.returncode}); see {out / name}.txt")


def review(path: Path, gold: dict[str, str]) -> dict:
    """Edit the candidates sheet as a reviewer would; returns counts of what was done."""
    book = openpyxl.load_workbook(path)
    sheet = book["candidates"]
    header = [c.value for c in sheet[1]]
    col = {name: i for i, name in enumerate(header)}
    rows: dict[str, list] = {}
    for row in sheet.iter_rows(min_row=2):
        rows.setdefault(str(row[col["source_code"]].value), []).append(row)
    counts = {"approved_proposed": 0, "approved_added": 0, "rejected": 0}
    for code, candidates in rows.items():
        candidates.sort(key=lambda r: int(r[col["rank"]].value))
        codes = [str(r[col["target_code"]].value) for r in candidates]
        wrong_above = candidates[:codes.index(gold[code])] if gold[code] in codes else candidates[:1]
        for r in wrong_above:
            r[col["decision"]].value, r[col["reviewer"]].value = "rejected", REVIEWER
            counts["rejected"] += 1
        if gold[code] in codes:
            r = candidates[codes.index(gold[code])]
            r[col["decision"]].value, r[col["equivalence"]].value = "approved", "equal"
            r[col["reviewer"]].value = REVIEWER
            counts["approved_proposed"] += 1
        else:
            sheet.append([{"source_code": code, "target_code": gold[code], "decision": "approved",
                           "equivalence": "equal", "reviewer": REVIEWER}.get(name) for name in header])
            counts["approved_added"] += 1
    book.save(path)
    return counts


def main(out: Path, train_args: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    pairs = pd.read_csv(GOLD, sep="\t", dtype=str, keep_default_na=False)
    pairs["source_code"] = [f"drug-{i + 1:03d}" for i in range(len(pairs))]
    pairs[["source_code", "local_drug_string"]].to_csv(out / "drugs.csv", index=False)
    mapped = out / "drugs.codemap.xlsx"
    codemap(out, "map", "map", out / "drugs.csv", "--target", TARGET, "--code-col", "source_code",
            "--text-col", "local_drug_string", "-o", mapped, "--cache-dir", out / "cache", "-q")
    reviewed = out / "drugs.reviewed.xlsx"
    shutil.copy(mapped, reviewed)
    counts = review(reviewed, dict(zip(pairs["source_code"], pairs["target_concept_id"])))
    (out / "review.txt").write_text(f"{counts}\n", encoding="utf-8")
    memory = out / "mappings.db"
    memory.unlink(missing_ok=True)
    codemap(out, "apply", "apply", reviewed, "-o", out / "drugs.mappings.csv", "--memory", memory)
    codemap(out, "train", "train", "--from-reviews", memory, "--base", "default", "--out",
            out / "site-tuned", "--device", "cpu", "--progress", "false", *train_args)
    print((out / "train.txt").read_text(encoding="utf-8").rsplit("}\n", 1)[-1])


if __name__ == "__main__":
    main(Path(ARGS[0]), ARGS[1:])
