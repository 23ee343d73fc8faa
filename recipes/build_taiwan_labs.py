"""Build the Taiwanese lab list: 27 common hospital tests as a Taiwanese lab catalogue names
them (the everyday alias: "WBC", "AC Sugar, FBS", "T-Bil", "GPT"; the Traditional Chinese
name: "白血球計數"), with specimen and unit, and the LOINC code the list's authors gave each.

Source: `iflow-mcp-healthymind-tech-taiwan-health-mcp` 1.1.1 on PyPI (MIT, © 2025 療心智能;
the licence is copied beside the output), its `lab_service.py` table of "Taiwan's common tests
and their LOINC mapping". The wheel is read as a zip and the table as a Python literal (ast):
no code of the package runs. A source nobody had read before 2026-11-29, made a fresh list for
issue #52 (a lab list in aliases; a national list in a language no shipped LOINC name covers).
Re-running rewrites the files byte for byte.

    pip download --no-deps iflow-mcp-healthymind-tech-taiwan-health-mcp==1.1.1 -d /tmp/tw
    python recipes/build_taiwan_labs.py /tmp/tw/iflow_mcp_healthymind_tech_taiwan_health_mcp-1.1.1-py3-none-any.whl
"""
from __future__ import annotations

import ast
import sys
import zipfile
from pathlib import Path

import pandas as pd

TABLE = "lab_service.py"
LICENCE = "iflow_mcp_healthymind_tech_taiwan_health_mcp-1.1.1.dist-info/licenses/LICENSE"


def common_tests(source: str) -> list[dict]:
    """The literal list assigned to `common_tests` in the package's lab service."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "common_tests" for t in node.targets):
            return ast.literal_eval(node.value)
    raise SystemExit(f"no common_tests table in {TABLE}")


def main(wheel: str) -> None:
    data = Path(__file__).resolve().parents[1] / "benchmarks" / "data"
    with zipfile.ZipFile(wheel) as archive:
        tests = common_tests(archive.read(TABLE).decode("utf-8"))
        licence = archive.read(LICENCE)
    frame = pd.DataFrame({"alias": [t["common_name_zh"] for t in tests],
                          "name_zh": [t["loinc_name_zh"] for t in tests],
                          "specimen": [t["specimen_type"] for t in tests],
                          "unit": [t["unit"] for t in tests],
                          "loinc_code": [t["loinc_code"] for t in tests]})
    frame.to_csv(data / "taiwan_labs.tsv", sep="\t", index=False)
    (data / "LICENSE-taiwan-health-mcp-MIT.txt").write_bytes(licence)
    print(f"{len(frame)} tests")


if __name__ == "__main__":
    main(sys.argv[1])
