"""Vocabulary scale (#44): a LOINC-size and a million-name target indexed by the default model on
this CPU, the time and peak memory of the index, and the lab dev sets' acc@1 against them.

    python benchmarks/speed/vocab_scale.py table NAMES|gold|real|icd|englishNAMES OUT.csv
    python benchmarks/speed/vocab_scale.py measure TARGET OUT.json [SET,SET…] [--full|--full-fp32|--two-stages]

`table`: the built-in LOINC codes with every name the built-in target gives them (the lab dev
sets' gold), then real names of other LOINC codes from ../shared/data (LOINC short names, German
long and short names), then variants of those other names (codemap.rank.scale_bench: a time or
a method added, the bracketed property dropped, lower case) under codes of their own, until NAMES
names; every real code carries LOINC's COMPONENT as a release does (`component`; the variant
codes none). Variants are
made of other codes' names only, so no distractor copies a gold name. The file's name starts with
"loinc", so codemap treats it as a LOINC table (the lab domain), as it would a user's release.

`measure`: one process, a cold cache: the target loaded and indexed (the two-stage path above
IndexConfig.two_stage_above names; `--full` embeds every name instead, `--two-stages` takes two
stages whatever the size), then each set ranked by the default method. `table gold` writes the gold
codes alone, `table real` the real names alone (no variant): the full index of either fits a run.
`table english60000`: English names only (a German list crosses it), about that many.
`--full-fp32`: every name embedded by the model itself, not its int8 export.
`table icd`: the ICD-10-CM inclusion-term set's target with every other ICD-10-CM code (72k).
Writes the index seconds, the names the model embedded, acc@1 / acc@10 (and each row's gold rank and
first code, `per_row`), the
pool's recall and the process's peak RSS. `pool_recall` counts the names the two first stages
pool, not the analytes and families that join them in ranking: the real pool's recall is
benchmarks/results/pool-scale/probe_real_pool.py's. Run it on an idle machine; say if it was not.
"""
from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, usage

import sets  # noqa: E402
from usage import positional  # noqa: E402
from codemap.config import EvalConfig, IndexConfig  # noqa: E402
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods, gold_queries  # noqa: E402
from codemap.evaluate.metrics import gold_ranks, score_ranks  # noqa: E402
from codemap.rank.scale_bench import with_variants  # noqa: E402
from codemap.vocab import load_target  # noqa: E402

ARGS = positional(__doc__, 2)
os.environ.setdefault("CODEMAP_MODEL_CACHE", str(Path.home() / ".cache" / "codemap" / "models"))
SHARED = Path(os.environ.get("CODEMAP_SHARED", Path(__file__).resolve().parents[3] / "shared")) / "data"
def gold_part(english: bool = False) -> pd.DataFrame:
    """Every name of the built-in LOINC's codes (`english`: its English ones only), the first as
    the name, the rest as synonyms."""
    names = load_target("LOINC").names
    if english:
        names = names[names["lang"].isin(["en", ""])]
    grouped = names.groupby("code", sort=False)["name"].agg(list)
    return pd.DataFrame({"code": grouped.index, "name": [n[0] for n in grouped],
                         "synonyms": ["|".join(n[1:]) for n in grouped]})


def other_loinc_names(gold_codes: set[str], english: bool = False) -> pd.DataFrame:
    """(code, name) of LOINC codes outside the built-in target, from ../shared/data: English short
    names, German long and short names unless `english` (names a release gives its codes; the bare
    components of loinc-core are left out, as no release names a code by its component alone)."""
    parts = [pd.read_csv(SHARED / "loinc-shortnames" / "loinc_shortnames.tsv", sep="\t", header=None,
                         names=["code", "name"], dtype=str)]
    if not english:
        german = pd.read_csv(SHARED / "loinc-de-linguistic-variant" / "deDE15LinguisticVariant.csv",
                             dtype=str, keep_default_na=False)
        parts += [german.rename(columns={"LOINC_NUM": "code", "LONG_COMMON_NAME": "name"})[["code", "name"]],
                  german.rename(columns={"LOINC_NUM": "code", "SHORTNAME": "name"})[["code", "name"]]]
    out = pd.concat(parts).dropna()
    out = out[(out["name"].str.strip() != "") & ~out["code"].isin(gold_codes)]
    return out.drop_duplicates().reset_index(drop=True)


def with_components(table: pd.DataFrame) -> pd.DataFrame:
    """`table` with LOINC's COMPONENT for each real code, as a release carries it (`codemap vocab
    import loinc` keeps it; the lab domain reads a code's analyte from it), empty for the variant
    codes, which are no LOINC codes (benchmarks/results/pool-scale/RULE-component-column.md)."""
    core = pd.read_csv(SHARED / "loinc-core-2col" / "LoincTableCore_LOINC_NUM_COMPONENT.csv", dtype=str,
                       keep_default_na=False)
    component = core.drop_duplicates("LOINC_NUM").set_index("LOINC_NUM")["COMPONENT"]
    return table.assign(component=table["code"].map(component).fillna(""))


GOLD, REAL = -1, -2  # `table gold`, `table real`


def write_icd_table(out: Path) -> None:
    """The ICD-10-CM inclusion-term set's own target (11.7k codes with their titles) and every
    other billable ICD-10-CM 2021 code with its description: the set's gold codes in a real
    target above the two-stage threshold."""
    own = pd.read_csv(sets.SETS["icd_inclusion"][1], dtype=str)
    every = pd.read_csv(SHARED / "icd10cm-2021" / "icd10cm_codes_2021.csv", dtype=str)
    every = pd.DataFrame({"code": [c if len(c) <= 3 else f"{c[:3]}.{c[3:]}" for c in every["icd10cm"]],
                          "name": every["description"]})
    table = pd.concat([own, every[~every["code"].isin(set(own["code"]))]], ignore_index=True)
    table.to_csv(out, index=False)
    print(f"{out}: {len(table):,} codes ({len(own):,} of the set's own target)")


def write_table(size: int, out: Path, english: bool = False) -> None:
    """The table of about `size` names (GOLD, REAL: see the module's doc); `english`: English names
    only (a list in another language crosses it)."""
    gold = gold_part(english)
    gold_names = len(gold) + sum(len(s.split("|")) for s in gold["synonyms"] if s)
    others = other_loinc_names(set(gold["code"]), english)
    if size == GOLD:  # the gold codes alone: the baseline every larger table extends
        others, size = others.iloc[:0], gold_names
    if size == REAL:  # real names only: the gold codes and the other real names, no variant
        size = gold_names + len(others)
    grown = with_variants(others, size - gold_names).assign(synonyms="")
    rounds = (len(grown) - len(others) + max(1, len(others)) - 1) // max(1, len(others))
    table = with_components(pd.concat([gold, grown], ignore_index=True))
    table.to_csv(out, index=False)
    print(f"{out}: {len(table):,} codes, about {size:,} names "
          f"({gold_names:,} names of the built-in LOINC's codes, {len(others):,} other real LOINC names, "
          f"{rounds} rounds of variants)")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(target: Path, out: Path, names: list[str], path: str) -> None:
    cache = Path(tempfile.mkdtemp(prefix="vocab-scale-"))  # cold: nothing indexed
    index = {"full": IndexConfig(two_stage_above=10**9), "two-stages": IndexConfig(two_stage_above=0),
             "full-fp32": IndexConfig(two_stage_above=10**9, int8_names_above=10**9),
             "default": IndexConfig()}[path]
    results = {"target": target.name, "path": path, "sets": {}}
    for n, name in enumerate(names):
        gold, _, gold_col, text_cols = {**sets.SETS, **sets.FRESH, **sets.AMSTERDAM}[name]
        clock = time.perf_counter()
        g = gold_queries(EvalConfig(gold=gold, target=str(target), gold_col=gold_col,
                                    text_cols=text_cols, progress=False, index=index,
                                    cache_dir=cache))
        if n == 0:  # the first set pays the index; the later ones load it warm
            results.update(names=len(g.vocab.names), index_kind=type(g.ranking.index).__name__,
                           index_choice=g.ranking.index_choice,
                           index_s=round(g.ranking.timings["index"], 1),
                           load_target_s=round(g.ranking.timings["load_target"], 1),
                           peak_rss_after_index_mb=round(peak_rss_mb()))
        default = eval_methods(g.base, drugs=False)[DEFAULT_METHOD[False]]
        ranked = g.rank(default)
        ranks = gold_ranks(ranked, g.gold)
        scores = score_ranks(ranks)
        entry = {"rows": len(g.gold), "acc1": round(scores.acc[1], 4),
                 "acc10": round(scores.acc[10], 4), "seconds": round(time.perf_counter() - clock, 1)}
        firsts = ranked[ranked["rank"] == 1].set_index("query")["target_code"]
        # each row's gold rank and first code, so two paths can be compared row by row
        entry["per_row"] = [[r["text"], rank, firsts.get(q)] for q, (r, rank) in enumerate(zip(g.rows, ranks))]
        vectors = getattr(g.ranking.index, "vectors", None)
        if hasattr(vectors, "embedded"):  # two stages: the pool's recall and what was embedded
            _, hits = g.ranking.index.search(None, 10**6, texts=[r["text"] for r in g.rows])
            codes = g.vocab.names["code"].to_numpy()
            pooled = [set(codes[h[h >= 0]]) for h in hits]
            entry["pool_recall"] = round(float(np.mean([bool(a & p) for a, p in zip(g.gold, pooled)])), 4)
            entry["embedded_total"] = vectors.embedded
        results["sets"][name] = entry
        results["peak_rss_mb"] = round(peak_rss_mb())
        print(name, json.dumps({k: v for k, v in entry.items() if k != "per_row"}), flush=True)
        out.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    if ARGS[0] == "table" and ARGS[1] == "icd":
        write_icd_table(Path(ARGS[2]))
    elif ARGS[0] == "table" and ARGS[1].startswith("english"):
        write_table(int(ARGS[1].removeprefix("english")), Path(ARGS[2]), english=True)
    elif ARGS[0] == "table":
        write_table({"gold": GOLD, "real": REAL}.get(ARGS[1]) or int(ARGS[1]), Path(ARGS[2]))
    else:
        rest = [a for a in ARGS[3:] if not a.startswith("--")]
        path = next((a[2:] for a in ARGS if a in ("--full", "--full-fp32", "--two-stages")), "default")
        measure(Path(ARGS[1]), Path(ARGS[2]),
                rest[0].split(",") if rest else ["labs_nofluid", "german_labs"], path)
