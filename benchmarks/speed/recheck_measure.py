"""Re-check a memory of real ICD-10-CM 2021 mappings against the full 2026 release, through the
CLI, and write the figures beside this file (docs/review.md, "Re-checking a memory").

    python benchmarks/speed/recheck_measure.py OUT_FOLDER [--rows 500]

Reads ../shared/data/icd10cm-2021/icd10cm_codes_2021.csv (FY2021 code table) and the April 2026
tabular XML shipped in the simple-icd-10-cm package. The memory holds every 2021 code the 2026
release no longer has, and enough other 2021 codes drawn at random (seed 0) to make --rows;
each approved as the mapping of a local source whose text is the 2021 description. A second
memory holds all 72,616 codes, re-checked without candidates.
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[2]
CODES_2021 = REPO.parent / "shared" / "data" / "icd10cm-2021" / "icd10cm_codes_2021.csv"


def tabular_2026() -> Path:
    import simple_icd_10_cm

    return Path(simple_icd_10_cm.__file__).parent / "data" / "icd10c-tabular-April-1-2026.xml"


def codemap(*args) -> tuple[float, str]:
    clock = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "codemap", *map(str, args)], capture_output=True,
                          text=True, check=True)
    return time.perf_counter() - clock, done.stdout + done.stderr


def remember(memory: Path, store: Path, codes: list[str]) -> None:
    from codemap.review.memory import MappingMemory
    from codemap.vocab import load_target

    vocab = load_target("ICD10CM", store_dir=store)
    names = dict(zip(vocab.concepts["code"], vocab.concepts["name"]))
    reviews = pd.DataFrame({"source_code": [f"DX{n:05d}" for n in range(len(codes))],
                            "source_text": [names[c] for c in codes], "target_code": codes,
                            "target_name": [names[c] for c in codes], "decision": "approved",
                            "equivalence": "equal", "reviewer": "measure", "comment": "",
                            "automatic": False})
    with MappingMemory(memory) as opened:
        opened.store(reviews, vocab, source="site.reviewed.xlsx", spec="ICD10CM")


def successors_ranked(workbook: Path) -> dict:
    """Per listed source: do the release's successors come first, and does codemap's own
    ranking of the stored source text (top 5) find one of them, or put one on top?"""
    sheet = pd.read_excel(workbook, sheet_name="candidates", dtype=str, engine="calamine").fillna("")
    counts = {"sources": 0, "successors_first": 0, "a_successor_in_top_5": 0,
              "top_scored_is_a_successor": 0}
    for _, group in sheet.groupby("source_row", sort=False):
        ranked = group[group["rank"] != ""]
        successor = ranked["explanation"].str.startswith("replacement:")
        scored = ranked[ranked["score"] != ""]
        counts["sources"] += 1
        counts["successors_first"] += bool(len(ranked)) and bool(successor.iloc[0])
        counts["a_successor_in_top_5"] += bool((ranked.loc[successor, "score"] != "").any())
        if len(scored):
            best = pd.to_numeric(scored["score"]).idxmax()
            counts["top_scored_is_a_successor"] += bool(successor[best])
    return counts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--rows", type=int, default=500)
    args = parser.parse_args()
    out, store = args.out, args.out / "store"
    out.mkdir(parents=True, exist_ok=True)
    figures = {}
    figures["import_2021_s"], said = codemap("vocab", "import", "icd10", CODES_2021, "--name",
                                             "ICD10CM", "--version", "2021", "--lang", "en",
                                             "--store", store)
    from codemap.vocab import load_target

    old = sorted(load_target("ICD10CM", store_dir=store).concepts["code"])
    listed = set(pd.read_csv(tabular_2026().with_name("code-list-April-2026.txt"), header=None,
                             dtype=str)[0])
    left = [c for c in old if c.replace(".", "") not in listed]
    rest = pd.Series([c for c in old if c not in set(left)]).sample(
        args.rows - len(left), random_state=0).tolist()
    remember(out / "sample.db", store, sorted(left + rest))
    remember(out / "all.db", store, old)
    figures["import_2026_s"], said = codemap("vocab", "import", "icd10cm", tabular_2026(),
                                             "--store", store)
    (out / "import_2026.txt").write_text(said)
    figures["codes_2021"], figures["left_in_2026"], figures["sample"] = len(old), len(left), args.rows
    for name, memory, extra in (("sample", "sample.db", ["-k", 5]),
                                ("sample_again", "sample.db", ["-k", 5]),
                                ("sample_no_candidates", "sample.db", ["--no-candidates"]),
                                ("all_no_candidates", "all.db", ["--no-candidates"])):
        seconds, said = codemap("memory", "recheck", out / memory, "-t", "ICD10CM", "--store",
                                store, "-o", out / f"{name}.xlsx", *extra)
        (out / f"{name}.txt").write_text(said)
        figures[f"{name}_s"] = round(seconds, 1)
        run = pd.read_excel(out / f"{name}.xlsx", sheet_name="run", dtype=str, engine="calamine")
        figures[name] = {k: v for k, v in zip(run["setting"], run["value"])
                         if k.startswith(("mappings_", "sources_listed"))}
    figures["sample_again_successors"] = successors_ranked(out / "sample_again.xlsx")
    (out / "figures.json").write_text(json.dumps(figures, indent=1) + "\n")
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
