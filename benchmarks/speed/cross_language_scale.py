"""Lists in other languages than a large target's names (#53): German, Spanish and Chinese ICD
titles, and English inclusion terms, onto the full ICD-10-CM 2021 (72,616 codes, from
../shared/data), with the target's names embedded by the fp32 model (`--backend onnx`: every
name, the reference) and as `map` now embeds them (`--backend auto`: a large target's names by
the int8 export at 24 tokens, codemap.embed.name_encoder). Per set and path: the default
ranking's acc@1 / acc@10, the encoder and the lexical index alone, which index ran and the
seconds; each path's index is built once into its own fresh cache (the first set pays it).

    python benchmarks/speed/cross_language_scale.py OUT.json [SET,SET…] [PATH,PATH…]

SET: the dev sets (default) or the fresh ones (icd10gm_de_fresh, cie10_es_fresh), scored once
under benchmarks/results/cross-language-scale/RULE.md; icd10_ja_dev and icd10_ja_fresh for the
Japanese dictionary reading (benchmarks/results/crosslingual/RULE-japanese-glosses.md);
icd10_en_dev and icd10_en_fresh, the WHO's British English titles, for the British-spelling
reading (benchmarks/results/spellings/RULE.md).
PATH: fp32, auto (default both). With CODEMAP_GLOSS_LANGUAGES=zh the Japanese reading is off
(the reading's large-target check, run beside the default).
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, usage

import sets  # noqa: E402
from usage import positional  # noqa: E402
from codemap.config import EncoderConfig, EvalConfig, IndexConfig  # noqa: E402
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods, gold_queries  # noqa: E402
from codemap.evaluate.metrics import gold_ranks, score_ranks  # noqa: E402

ARGS = positional(__doc__, 1)
if "CODEMAP_GLOSS_LANGUAGES" in os.environ:  # the languages read through a dictionary, for a before run
    import codemap.config
    codemap.config.DICTIONARY_LANGUAGES = tuple(os.environ["CODEMAP_GLOSS_LANGUAGES"].split(","))
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
DATA = sets.DATA
os.environ.setdefault("CODEMAP_MODEL_CACHE", str(Path.home() / ".cache" / "codemap" / "models"))
SETS = {"icd10gm_de": (DATA / "icd10gm_de.tsv", "name"), "cie10_es": (DATA / "cie10_es.tsv", "name"),
        "icd10_zh": (DATA / "icd10_zh.tsv", "name"),
        "icd_inclusion": (DATA / "icd10cm_inclusion_dev.tsv", "term"),
        "icd10_ja_dev": (DATA / "icd10_ja_dev.tsv", "name"),
        "icd10_en_dev": (DATA / "icd10_en_dev.tsv", "name")}
FRESH = {"icd10gm_de_fresh": (DATA / "icd10gm_de_fresh.tsv", "name"),
         "cie10_es_fresh": (DATA / "cie10_es_fresh.tsv", "name"),
         "icd10_ja_fresh": (DATA / "icd10_ja_fresh.tsv", "name"),
         "icd10_en_fresh": (DATA / "icd10_en_fresh.tsv", "name")}
PATHS = {"fp32": EncoderConfig(backend="onnx"), "auto": EncoderConfig()}
SHOWN = ("encoder", "lexical")


def full_icd10cm(folder: Path) -> Path:
    """The whole ICD-10-CM 2021 as a code,name table (codes undotted, as the sets have them)."""
    table = pd.read_csv(SHARED / "icd10cm-2021" / "icd10cm_codes_2021.csv", dtype=str,
                        keep_default_na=False)
    path = folder / "icd10cm_2021_full.csv"
    table.set_axis(["code", "name"], axis=1).to_csv(path, index=False)
    return path


def gold_file(name: str, folder: Path) -> tuple[Path, str]:
    """The set as (text, icd10_code) whatever its own column names."""
    path, text = {**SETS, **FRESH}[name]
    frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    code = next(c for c in frame.columns if c.startswith("icd10"))
    out = folder / f"{name}.tsv"
    frame = frame.assign(**{code: frame[code].str.replace(".", "", regex=False)})  # as the target
    frame[[text, code]].set_axis(["text", "icd10_code"], axis=1).to_csv(out, sep="\t", index=False)
    return out, text


def measure(name: str, path: str, target: Path, cache: Path, folder: Path) -> dict:
    gold, _ = gold_file(name, folder)
    clock = time.perf_counter()
    # Every name embedded on both paths: the question is what embeds them, not the two stages.
    g = gold_queries(EvalConfig(gold=gold, target=str(target), gold_col="icd10_code",
                                text_cols=("text",), encoder=PATHS[path], progress=False,
                                index=IndexConfig(two_stage_above=10**9), cache_dir=cache))
    loaded = time.perf_counter() - clock
    methods = eval_methods(g.base)
    out = {"rows": len(g.gold), "names": len(g.vocab.names), "load_s": round(loaded, 1),
           "index": g.ranking.index_choice, "index_build_s": round(g.ranking.index.build_seconds, 1)}
    for method in (DEFAULT_METHOD[False], *SHOWN):
        scores = score_ranks(gold_ranks(g.rank(methods[method]), g.gold))
        out[method] = {"acc1": round(scores.acc[1], 4), "acc10": round(scores.acc[10], 4)}
    out["total_s"] = round(time.perf_counter() - clock, 1)
    return out


def main(out: Path, names: list[str], paths: list[str]) -> None:
    results: dict = {}
    work = Path(tempfile.mkdtemp(prefix="cross-language-"))
    target = full_icd10cm(work)
    for path in paths:
        cache = work / f"cache-{path}"  # fresh per path: the first set builds its index
        for name in names:
            results.setdefault(name, {})[path] = measure(name, path, target, cache, work)
            print(name, path, json.dumps(results[name][path]), flush=True)
            out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main(Path(ARGS[0]), ARGS[1].split(",") if len(ARGS) > 1 else list(SETS),
         ARGS[2].split(",") if len(ARGS) > 2 else list(PATHS))
