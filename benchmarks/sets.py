"""The repository's evaluation sets, by name: which gold file, target, gold column and text
columns each is, and `load(name)`, the set ready to rank (codemap.evaluate.gold.GoldQueries).

SETS are the dev parts (one per kind of list), FRESH their fresh parts (scored once, under a rule
written first), CROSSLINGUAL the sets across languages, SHORT_16K the lab sets against a wide
LOINC table of short names (built from ../shared/data, dev only). Every benchmark that ranks
sets reads them from here.
"""
from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path

import pandas as pd

from codemap.config import EncoderConfig, EvalConfig
from codemap.evaluate.gold import gold_queries
from importlib import resources

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
# name → (gold file, target, gold column, text columns): one per dev set kind.
SETS = {
    # The MIMIC labels with their fluid, less every label of the fresh part (issue #52's audit:
    # tests/data/mimic_labs_gold.tsv holds all 267, fresh included; recipes/build_list_splits.py).
    "labs_fluid": (DATA / "mimic_labs_fluid_dev.tsv", "LOINC", "loinc_code", ()),
    "labs_nofluid": (DATA / "mimic_labs_nofluid_dev.tsv", "LOINC", "loinc_code", ("label",)),
    "loinc_short": (ROOT / "tests/data/loinc_short_units_dev.tsv",
                    str(ROOT / "tests/data/loinc_long_names.tsv"), "loinc_code", ("label",)),
    "hpo_lay": (DATA / "hpo_lay_dev.tsv", str(DATA / "hpo_lay_target.csv"), "hpo_id",
                ("lay_phrase",)),
    "pcs_short": (DATA / "icd10pcs_short_dev.tsv", str(DATA / "icd10pcs_short_target.csv"),
                  "pcs_code", ("short_name",)),
    "icd_inclusion": (DATA / "icd10cm_inclusion_dev.tsv", str(DATA / "icd10cm_inclusion_target.csv"),
                      "icd10cm_code", ("term",)),
    "drugs": (DATA / "ohdsi_mimic_drugs_dev.tsv", "DRUGS", "target_concept_id",
              ("local_drug_string",)),
    "german_labs": (DATA / "german_lab_labels_dev.tsv", "LOINC", "loinc_code", ("label",)),
}
# The fresh parts: scored once, under benchmarks/results/fusion/RULE.md; nothing is chosen on them.
FRESH = {
    "labs_nofluid_fresh": (DATA / "mimic_labs_nofluid_fresh.tsv", "LOINC", "loinc_code", ("label",)),
    "hpo_lay_fresh": (DATA / "hpo_lay_fresh.tsv", str(DATA / "hpo_lay_target.csv"), "hpo_id",
                      ("lay_phrase",)),
    "pcs_short_fresh": (DATA / "icd10pcs_short_fresh.tsv", str(DATA / "icd10pcs_short_target.csv"),
                        "pcs_code", ("short_name",)),
    "icd_inclusion_confirm": (DATA / "icd10cm_inclusion_confirm.tsv",
                              str(DATA / "icd10cm_inclusion_confirm_target.csv"), "icd10cm_code",
                              ("term",)),
    "drugs_fresh": (DATA / "ohdsi_mimic_drugs_fresh.tsv", "DRUGS", "target_concept_id",
                    ("local_drug_string",)),
    "german_labs_fresh": (DATA / "german_lab_labels_fresh.tsv", "LOINC", "loinc_code", ("label",)),
    # The fresh MIMIC labels with their fluid and category columns (the specimen column of a real
    # list); the labels were scored before without them, this form was first read 2026-11-29.
    "labs_fluid_fresh": (DATA / "mimic_labs_fluid_fresh.tsv", "LOINC", "loinc_code", ()),
    # 27 tests of a Taiwanese lab catalogue (recipes/build_taiwan_labs.py, read first 2026-11-29):
    # the everyday alias, or the Traditional Chinese name, with the specimen and unit columns.
    "taiwan_aliases": (DATA / "taiwan_labs.tsv", "LOINC", "loinc_code", ("alias",)),
    "taiwan_zh": (DATA / "taiwan_labs.tsv", "LOINC", "loinc_code", ("name_zh",)),
}
# A Dutch ICU's own lab item names (recipes/build_amsterdam_labs.py, AmsterdamUMCdb, first read
# 2026-11-29): a language no shipped LOINC name covers. Kept out of SETS so that older scripts'
# default set lists stay as they were measured; the dev half is for later decisions, the fresh
# half was scored once (benchmarks/results/amsterdam-labs/RULE.md).
AMSTERDAM = {
    "amsterdam_dev": (DATA / "amsterdam_labs_dev.tsv", "LOINC", "loinc_code", ("name",)),
    "amsterdam_fresh": (DATA / "amsterdam_labs_fresh.tsv", "LOINC", "loinc_code", ("name",)),
}
# An English clinical system's own names with their units, from NLM's LHC Flowsheet template
# (recipes/build_flowsheet_labs.py, first read 2026-11-30): the dev half decides
# benchmarks/results/analyte-words/RULE-4.md, the fresh half is scored once after it.
FLOWSHEET = {
    "flowsheet_dev": (DATA / "flowsheet_labs_dev.tsv", "LOINC", "loinc_code", ("name",)),
    "flowsheet_fresh": (DATA / "flowsheet_labs_fresh.tsv", "LOINC", "loinc_code", ("name",)),
}
# Cross-lingual sets (the multilingual model's own use): German LOINC names against the English
# names only (the built-in LOINC carries German names, which would make them exact matches).
CROSSLINGUAL = {
    "loinc_de_en": (DATA / "loinc_de_to_en.tsv", "english-loinc", "loinc_code", ("name",)),
    "icd10gm_de": (DATA / "icd10gm_de.tsv", str(DATA / "icd10cm_en_target.csv"), "icd10_code", ("name",)),
    "cie10_es": (DATA / "cie10_es.tsv", str(DATA / "icd10cm_en_target.csv"), "icd10_code", ("name",)),
    "icd10_zh": (DATA / "icd10_zh.tsv", str(DATA / "icd10cm_en_target.csv"), "icd10_code", ("name",)),
    # The WHO ICD-10 Japanese titles of the same held-out codes, halved by code (recipes/
    # build_icd10_zh.py ja, made 2026-11-30): the Japanese dictionary reading is decided on dev.
    "icd10_ja_dev": (DATA / "icd10_ja_dev.tsv", str(DATA / "icd10cm_en_target.csv"), "icd10_code", ("name",)),
    "icd10_ja_fresh": (DATA / "icd10_ja_fresh.tsv", str(DATA / "icd10cm_en_target.csv"), "icd10_code", ("name",)),
    # French, Vietnamese and Portuguese titles of the same codes, halved likewise (made 2026-11-30;
    # only the dev halves were ranked, to see where a reading is needed next).
    **{f"icd10_{lang}_{part}": (DATA / f"icd10_{lang}_{part}.tsv", str(DATA / "icd10cm_en_target.csv"),
                                "icd10_code", ("name",))
       for lang in ("fr", "vi", "pt") for part in ("dev", "fresh")},
    # The WHO's own English (British) titles of the same codes, halved likewise (made 2026-11-30
    # for the British-spelling reading, benchmarks/results/spellings/RULE.md): one language,
    # another spelling.
    **{f"icd10_en_{part}": (DATA / f"icd10_en_{part}.tsv", str(DATA / "icd10cm_en_target.csv"),
                            "icd10_code", ("name",)) for part in ("dev", "fresh")},
    # 27 common hospital lab report names each, written by hand with their LOINC codes (mass and
    # moles twins both right), against the built-in LOINC: smoke lists, not dev set kinds.
    "hospital_labels_de": (DATA / "hospital_labels_de.tsv", "LOINC", "loinc_code", ("label",)),
    "hospital_labels_zh": (DATA / "hospital_labels_zh.tsv", "LOINC", "loinc_code", ("label",)),
    # 46 English report names that state a specimen (urine, CSF, sweat, arterial, 24 h…), written
    # by hand on 2026-11-28 with the built-in codes of each (issue #52), by the developer who
    # built the specimen reading: a check of that reading, not a fresh figure.
    "stated_specimen_en": (DATA / "stated_specimen_en.tsv", "LOINC", "loinc_code", ("label",)),
    # 16 report names each in German, Spanish, French and Portuguese that state a specimen in the
    # forms hospital lists write it (a word, an adjective, "i.U.", "(U)", a compound, "24 horas"),
    # written by hand on 2026-11-30 with the built-in codes of each (mass and moles twins both
    # right), before the specimen words learned from the WHO ICD-10 titles were built: a check of
    # that reading by the developer who built it, not a fresh figure.
    **{f"stated_specimen_{lang}": (DATA / f"stated_specimen_{lang}.tsv", "LOINC", "loinc_code",
                                   ("label",)) for lang in ("de", "es", "fr", "pt")},
}
# Lab lists of two Python packages (recipes/build_package_lab_lists.py, first read 2026-11-30,
# scored once: benchmarks/results/package-labs/FRESH.md): a simulator's everyday aliases ("Plt",
# "T Bil"), the Japanese national code table's names of the same tests, and a unit library's
# analytes with specimen and conventional unit.
PACKAGE_LABS = {
    "clinosim_aliases": (DATA / "clinosim_labs.tsv", "LOINC", "loinc_code", ("alias",)),
    "clinosim_ja": (DATA / "clinosim_labs_ja.tsv", "LOINC", "loinc_code", ("name_ja",)),
    "labunits": (DATA / "labunits_labs.tsv", "LOINC", "loinc_code", ()),
}
# Result names of two US reference laboratories' LOINC code reports (recipes/build_lab_compendia.py,
# first read 2026-11-30): 300 drawn from each, scored once for benchmarks/results/component-names/
# RULE.md (rule 2). Labcorp's with its unit column, ARUP's text alone.
COMPENDIA = {
    "labcorp": (DATA / "labcorp_labs.tsv", "LOINC", "loinc_code", ("name",)),
    "arup": (DATA / "arup_labs.tsv", "LOINC", "loinc_code", ("name",)),
    # 300 more from each report's names not drawn above (seed 1), made before any run on them:
    # scored once, benchmarks/results/lab-compendia/FRESH.md.
    "labcorp_fresh": (DATA / "labcorp_labs_fresh.tsv", "LOINC", "loinc_code", ("name",)),
    "arup_fresh": (DATA / "arup_labs_fresh.tsv", "LOINC", "loinc_code", ("name",)),
    # 300 more from the names drawn by neither (seed 2), made 2026-11-30 before any run on them:
    # scored once, benchmarks/results/specimen-fields/FRESH.md.
    "labcorp_fresh2": (DATA / "labcorp_labs_fresh2.tsv", "LOINC", "loinc_code", ("name",)),
    "arup_fresh2": (DATA / "arup_labs_fresh2.tsv", "LOINC", "loinc_code", ("name",)),
    "labcorp_fresh3": (DATA / "labcorp_labs_fresh3.tsv", "LOINC", "loinc_code", ("name",)),
    "arup_fresh3": (DATA / "arup_labs_fresh3.tsv", "LOINC", "loinc_code", ("name",)),
}
_LAB_LISTS = {**SETS, **FRESH, **AMSTERDAM, **PACKAGE_LABS, **FLOWSHEET, **COMPENDIA}
# The lab sets against ~16k LOINC codes named by their English short names alone, in a table
# under a neutral file name: a LOINC table as a site may hand it over (dev only: it is built from
# ../shared/data/loinc-shortnames, which the repository does not ship).
SHORT_16K = {f"{name}_16k": (_LAB_LISTS[name][0], "short-16k", "loinc_code", _LAB_LISTS[name][3])
             for name in ("labs_fluid", "labs_nofluid", "german_labs", "labs_nofluid_fresh",
                          "german_labs_fresh", "amsterdam_dev", "amsterdam_fresh", *PACKAGE_LABS)}
# German long common names of 400 codes drawn evenly from the 16k table (most outside the
# Top 2000 the tool ships), against it: what the short-name-table steps do beyond common codes.
SHORT_16K["loinc_de_16k"] = ("german-16k", "short-16k", "loinc_code", ("name",))
SHORT_16K["loinc_de_16k_fresh"] = ("german-16k-fresh", "short-16k", "loinc_code", ("name",))
# A third draw of 400 (seed 2, none of the first two), made for issue #52 and scored once.
SHORT_16K["loinc_de_16k_fresh2"] = ("german-16k-fresh2", "short-16k", "loinc_code", ("name",))
def english_loinc(folder: Path) -> str:
    """The built-in LOINC codes with their English long and short names only, as a table."""
    table = resources.files("codemap.data") / "loinc" / "LOINC_1.6_Top2000CommonLabResultsUS.csv"
    with resources.as_file(table) as path:
        loinc = pd.read_csv(path, dtype=str, keep_default_na=False)
    out = folder / "loinc_english.csv"
    pd.DataFrame({"code": loinc["LOINC #"], "name": loinc["Long Common Name"],
                  "synonyms": loinc["Short Name"]}).to_csv(out, index=False)
    return str(out)


MODEL = "default"  # the encoder every set is ranked with (scripts may set sets.MODEL)


@functools.lru_cache(maxsize=1)
def _english_loinc() -> str:
    return english_loinc(Path(tempfile.mkdtemp(prefix="codemap-sweep-")))


def _shared_data() -> Path:
    """../shared/data beside the checkout; CODEMAP_SHARED for a worktree elsewhere (before/after runs)."""
    return Path(os.environ.get("CODEMAP_SHARED", ROOT.parent / "shared")) / "data"


@functools.lru_cache(maxsize=1)
def _short_loinc_16k() -> str:
    shared = _shared_data() / "loinc-shortnames" / "loinc_shortnames.tsv"
    table = pd.read_csv(shared, sep="\t", header=None, names=["code", "name"], dtype=str).dropna()
    out = Path(tempfile.mkdtemp(prefix="codemap-sweep-")) / "lab_codes.tsv"
    table.to_csv(out, sep="\t", index=False)
    return str(out)


def _german_16k_gold(fresh: bool = False, draw: int = 1) -> str:
    """400 German long common names drawn evenly from the 16k table's codes (seed 0); `fresh`:
    400 others (seed `draw`, none of the earlier draws)."""
    german = pd.read_csv(_shared_data() / "loinc-de-linguistic-variant" / "deDE15LinguisticVariant.csv",
                         dtype=str, keep_default_na=False)
    codes = set(pd.read_csv(_short_loinc_16k(), sep="\t", dtype=str)["code"])
    german = german[german["LOINC_NUM"].isin(codes) & (german["LONG_COMMON_NAME"] != "")]
    drawn = german.sample(400, random_state=0)
    for seed in range(1, draw + 1) if fresh else ():
        german = german.drop(drawn.index)
        drawn = german.sample(400, random_state=seed)
    out = Path(_short_loinc_16k()).parent / f"loinc_de_16k{f'_fresh{draw}' if fresh else ''}.tsv"
    pd.DataFrame({"name": drawn["LONG_COMMON_NAME"], "loinc_code": drawn["LOINC_NUM"]}).to_csv(
        out, sep="\t", index=False)
    return str(out)


def eval_config(name: str) -> EvalConfig:
    """The set's gold file, target, gold and text columns as `codemap eval` takes them (a table
    built from ../shared made first, where the set needs one)."""
    gold, target, gold_col, text_cols = {**_LAB_LISTS, **CROSSLINGUAL, **SHORT_16K}[name]
    target = {"english-loinc": _english_loinc, "short-16k": _short_loinc_16k}.get(
        target, lambda: target)()
    if str(gold).startswith("german-16k"):
        gold = _german_16k_gold(fresh=gold != "german-16k", draw=2 if gold.endswith("2") else 1)
    return EvalConfig(gold=gold, target=target, gold_col=gold_col, text_cols=text_cols,
                      progress=False, encoder=EncoderConfig(model=MODEL))


def load(name: str):
    return gold_queries(eval_config(name))


