"""Before/after check for a change that must not change behaviour (a restructuring): the
candidates `codemap map` writes for the examples and the rankings `codemap eval` scores on every
dev set, saved once and compared later.

    python benchmarks/quality/same_outputs.py save OUT_BEFORE
    python benchmarks/quality/same_outputs.py save OUT_AFTER
    python benchmarks/quality/same_outputs.py compare OUT_BEFORE OUT_AFTER

Compared: every candidate's code and rank exactly, its scores to 1e-6, its confidence to 1e-6
and its explanation as text.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmarks/: sets
ROOT = HERE.parents[1]
EXAMPLES = ["labs.xlsx", "labs.csv", "labs_de.csv", "harmonise/boston.csv", "harmonise/leeds.csv",
            "harmonise/berlin.csv"]
COLUMNS = ["source_row", "rank", "target_code", "score", "encoder_score", "lexical_score",
           "confidence", "suggestion", "explanation"]


def save(out: Path) -> None:
    import sets
    from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods
    
    (out / "map").mkdir(parents=True, exist_ok=True)
    (out / "eval").mkdir(parents=True, exist_ok=True)
    for example in EXAMPLES:
        target = out / "map" / (example.replace("/", "_") + ".csv")
        subprocess.run([sys.executable, "-m", "codemap", "map", str(ROOT / "examples" / example),
                        "--target", "LOINC", "-o", str(target), "-q", "--force"], check=True)
    for name in sets.SETS:
        g = sets.load(name)
        drugs = g.kind == "drug"
        methods = eval_methods(g.base, drugs=drugs)
        for method in ("encoder", "lexical", DEFAULT_METHOD[drugs]):
            g.rank(methods[method]).to_parquet(out / "eval" / f"{name}.{method.split()[0]}.parquet")
        print(name, flush=True)


def compare(before: Path, after: Path) -> int:
    problems = []
    for old in sorted((before / "map").glob("*.csv")):
        a = pd.read_csv(old, dtype=str, keep_default_na=False)
        b = pd.read_csv(after / "map" / old.name, dtype=str, keep_default_na=False)
        problems += _differences(old.name, a, b)
    for old in sorted((before / "eval").glob("*.parquet")):
        a, b = pd.read_parquet(old), pd.read_parquet(after / "eval" / old.name)
        problems += _differences(old.name, a.astype(str), b.astype(str))
    for line in problems[:40]:
        print(line)
    print(f"{len(problems)} differences")
    return 1 if problems else 0


def _differences(name: str, a: pd.DataFrame, b: pd.DataFrame) -> list[str]:
    if len(a) != len(b):
        return [f"{name}: {len(a)} rows before, {len(b)} after"]
    out = []
    for column in [c for c in a.columns if c in COLUMNS or c in ("query", "target_name")]:
        if column not in b.columns:
            out.append(f"{name}: column {column} missing after")
            continue
        if column in ("score", "encoder_score", "lexical_score", "confidence"):
            x = pd.to_numeric(a[column], errors="coerce")
            y = pd.to_numeric(b[column], errors="coerce")
            differ = ~((x - y).abs().le(1e-6) | (x.isna() & y.isna()))
        else:
            differ = a[column] != b[column]
        for i in differ[differ].index[:3]:
            out.append(f"{name} row {i} {column}: {a[column][i]!r} → {b[column][i]!r}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["save", "compare"])
    parser.add_argument("folders", type=Path, nargs="+")
    args = parser.parse_args()
    if args.step == "save":
        save(args.folders[0])
    else:
        raise SystemExit(compare(*args.folders))


if __name__ == "__main__":
    main()
