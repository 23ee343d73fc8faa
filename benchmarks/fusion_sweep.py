"""Fusion of the encoder and lexical name scores, swept over every dev set kind (issue #21).

For each dev set the per-concept encoder cosine and lexical TF-IDF cosine of every query are
computed once (no domain evidence), then each fusion variant is scored offline: acc@1 of the
fused score alone. The output is one JSON file of per-set acc@1 per variant, plus the per-query
gold ranks, so a leave-one-set-out choice can be made from it (benchmarks/default_model_decide.py).

    python benchmarks/fusion_sweep.py benchmarks/results/fusion/sweep.json [--sets a,b]
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from codemap.config import EncoderConfig, EvalConfig, RankConfig
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods, gold_queries, text_key
from codemap.evaluate.metrics import gold_ranks
from codemap.rank.drug_agreement import is_drug_vocabulary
from codemap.rank.hybrid import _ConceptLayout
from codemap.rank.part_translation import held_out
from train_decide import english_loinc  # benchmarks/ is on sys.path when run as a script

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
# name → (gold file, target, gold column, text columns): one per dev set kind.
SETS = {
    "labs_fluid": (ROOT / "tests/data/mimic_labs_gold.tsv", "LOINC", "loinc_code", ()),
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
}
# Cross-lingual sets (the multilingual model's own use): German LOINC names against the English
# names only (the built-in LOINC carries German names, which would make them exact matches).
CROSSLINGUAL = {
    "loinc_de_en": (DATA / "loinc_de_to_en.tsv", "english-loinc", "loinc_code", ("name",)),
    "icd10gm_de": (DATA / "icd10gm_de.tsv", str(DATA / "icd10cm_en_target.csv"), "icd10_code", ("name",)),
    "cie10_es": (DATA / "cie10_es.tsv", str(DATA / "icd10cm_en_target.csv"), "icd10_code", ("name",)),
    "icd10_zh": (DATA / "icd10_zh.tsv", str(DATA / "icd10cm_en_target.csv"), "icd10_code", ("name",)),
    # 27 common hospital lab report names each, written by hand with their LOINC codes (mass and
    # moles twins both right), against the built-in LOINC: smoke lists, not dev set kinds.
    "hospital_labels_de": (DATA / "hospital_labels_de.tsv", "LOINC", "loinc_code", ("label",)),
    "hospital_labels_zh": (DATA / "hospital_labels_zh.tsv", "LOINC", "loinc_code", ("label",)),
}
# The lab sets against ~16k LOINC codes named by their English short names alone, in a table
# under a neutral file name: a LOINC table as a site may hand it over (dev only: it is built from
# ../shared/data/loinc-shortnames, which the repository does not ship).
SHORT_16K = {f"{name}_16k": ({**SETS, **FRESH}[name][0], "short-16k", "loinc_code",
                             {**SETS, **FRESH}[name][3])
             for name in ("labs_fluid", "labs_nofluid", "german_labs", "labs_nofluid_fresh",
                          "german_labs_fresh")}
# German long common names of 400 codes drawn evenly from the 16k table (most outside the
# Top 2000 the tool ships), against it: what the short-name-table steps do beyond common codes.
SHORT_16K["loinc_de_16k"] = ("german-16k", "short-16k", "loinc_code", ("name",))
SHORT_16K["loinc_de_16k_fresh"] = ("german-16k-fresh", "short-16k", "loinc_code", ("name",))
WEIGHTS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
GATES = [0.0, 0.2, 0.3, 0.4, 0.5, 0.6]


MODEL = "default"  # --model: the encoder every set is ranked with


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


def _german_16k_gold(fresh: bool = False) -> str:
    """400 German long common names drawn evenly from the 16k table's codes (seed 0); `fresh`:
    400 others (seed 1, none of the first draw)."""
    german = pd.read_csv(_shared_data() / "loinc-de-linguistic-variant" / "deDE15LinguisticVariant.csv",
                         dtype=str, keep_default_na=False)
    codes = set(pd.read_csv(_short_loinc_16k(), sep="\t", dtype=str)["code"])
    german = german[german["LOINC_NUM"].isin(codes) & (german["LONG_COMMON_NAME"] != "")]
    drawn = german.sample(400, random_state=0)
    if fresh:
        drawn = german.drop(drawn.index).sample(400, random_state=1)
    out = Path(_short_loinc_16k()).parent / f"loinc_de_16k{'_fresh' if fresh else ''}.tsv"
    pd.DataFrame({"name": drawn["LONG_COMMON_NAME"], "loinc_code": drawn["LOINC_NUM"]}).to_csv(
        out, sep="\t", index=False)
    return str(out)


def load(name: str):
    gold, target, gold_col, text_cols = {**SETS, **FRESH, **CROSSLINGUAL, **SHORT_16K}[name]
    target = {"english-loinc": _english_loinc, "short-16k": _short_loinc_16k}.get(
        target, lambda: target)()
    if gold in ("german-16k", "german-16k-fresh"):
        gold = _german_16k_gold(fresh=gold.endswith("fresh"))
    return gold_queries(EvalConfig(gold=gold, target=target, gold_col=gold_col,
                                   text_cols=text_cols, progress=False,
                                   encoder=EncoderConfig(model=MODEL)))


def with_evidence(name: str, weights=WEIGHTS, toggle: str | None = None,
                  list_rows: int = 0) -> dict[str, list]:
    """Gold ranks of the full default ranking (fusion + the domain's evidence) at each weight
    ("shipped": the shipped settings, the cross-lingual weight included), or, with `toggle` (a
    RankConfig switch), with that switch off and on. `list_rows`: the gold file is cut into
    consecutive lists of that many queries, each ranked on its own (its own hubness)."""
    g = load(name)
    # The German dev sets are drawn from the linguistic variant the part lexicon learns from:
    # it learns without their gold codes (codemap.rank.part_translation.held_out).
    held_out(set().union(*g.gold))
    rank_all = g.rank
    if list_rows:
        rank_all = lambda config: _ranked_in_lists(g, config, list_rows)
    drugs = is_drug_vocabulary(g.vocab)
    methods = eval_methods(g.base, drugs=drugs)
    default = methods[DEFAULT_METHOD[drugs]]
    out = {}
    for alone in ("encoder", "lexical"):
        ranks = gold_ranks(rank_all(methods[alone]), g.gold)
        out[alone] = [r if r is not None else 10**6 for r in ranks]
    # A toggle is compared at the one weight given (--weights w), else at the default weight.
    at = ({"encoder_weight": weights[0]} if toggle and len(weights) == 1 and weights[0] != "shipped"
          else {})
    settings = ({f"default {toggle}={on}": {toggle: on, **at} for on in (False, True)} if toggle
                else {f"default w={w}": {"encoder_weight": w} if w != "shipped" else {}
                      for w in weights})
    for label, setting in settings.items():
        ranks = gold_ranks(rank_all(replace(default, **setting)), g.gold)
        out[label] = [r if r is not None else 10**6 for r in ranks]
    return out


def _ranked_in_lists(g, config: RankConfig, size: int):
    """g's queries ranked as consecutive lists of `size` rows (query numbers as in g)."""
    g.rank(replace(config, top_k=1))  # prepares this ranking's texts, vectors and indexes
    frames = []
    for start in range(0, len(g.rows), size):
        part = slice(start, start + size)
        piece = replace(g, rows=g.rows[part], gold=g.gold[part], hubs={},
                        prepared={k: (*v[:3], v[3][part], v[4][part]) for k, v in g.prepared.items()})
        found = piece.rank(config)
        frames.append(found.assign(query=found["query"] + start))
    return pd.concat(frames, ignore_index=True)


def concept_scores(name: str):
    """(encoder, lexical) per-concept score matrices (queries × concepts) and gold columns."""
    g = load(name)
    plain = replace(g.base, method="hybrid", unit_evidence=False, specimen_evidence=False,
                    drug_evidence=False, category_evidence=False, usage_evidence=False,
                    text_evidence=False, usual_evidence=False, expand_abbreviations=False,
                    component_backoff=False)
    g.rank(replace(plain, top_k=1))  # builds the indexes and query vectors
    vocab, index, lexical, queries, rows = g.prepared[text_key(plain)]
    layout = _ConceptLayout.of(vocab)
    enc = queries @ index.vectors.T
    lex = lexical.similarity([r["text"] for r in rows])
    reduce = lambda m: np.maximum.reduceat(m[:, layout.order], layout.starts, axis=1)
    columns = [[layout.number_of[c] for c in codes if c in layout.number_of] for codes in g.gold]
    return reduce(enc), reduce(lex), columns, plain


def _cached(name: str, folder: Path | None):
    """concept_scores, kept as .npz in `folder` so new variants skip the model."""
    path = folder / f"{name}.npz" if folder else None
    if path and path.exists():
        data = np.load(path, allow_pickle=True)
        return (data["enc"], data["lex"], [np.asarray(c, dtype=int) for c in data["columns"]],
                RankConfig())
    enc, lex, columns, plain = concept_scores(name)
    if path:
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(path, enc=enc, lex=lex, columns=np.array(columns, dtype=object))
    return enc, lex, columns, plain


def gold_rank(fused: np.ndarray, columns: list[list[int]]) -> np.ndarray:
    """1-based rank of each query's best gold concept under `fused` (ties counted against it)."""
    ranks = []
    for q, cols in enumerate(columns):
        best = fused[q, cols].max()
        ranks.append(int((fused[q] >= best).sum()))
    return np.array(ranks)


def variants(enc, lex, plain: RankConfig) -> dict[str, np.ndarray]:
    """Candidate fusions: fixed weights; lexical soft-thresholded per candidate (a weak n-gram
    overlap says little); lexical weighted per query by its best lexical score (a query that
    shares no words with any name is a paraphrase: trust the encoder); z-scored per query."""
    out = {"encoder": enc, "lexical": lex}
    top_lex = lex.max(axis=1, keepdims=True)
    for w in WEIGHTS:
        out[f"weighted w={w}"] = w * enc + (1 - w) * lex
    for w in WEIGHTS[:-1]:
        for gate in GATES[1:]:
            soft = np.clip(lex - gate, 0, None) / (1 - gate)
            out[f"soft w={w} g={gate}"] = w * enc + (1 - w) * soft
            trust = np.clip((top_lex - gate) / (1 - gate), 0, 1)
            out[f"query w={w} g={gate}"] = enc + (1 - w) / w * trust * lex
    z = lambda m: (m - m.mean(axis=1, keepdims=True)) / (m.std(axis=1, keepdims=True) + 1e-6)
    for w in WEIGHTS:
        out[f"z w={w}"] = w * z(enc) + (1 - w) * z(lex)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sets", default=",".join(SETS),
                        help=f"comma-separated, of: {', '.join([*SETS, *FRESH, *CROSSLINGUAL, *SHORT_16K])}")
    parser.add_argument("--weights", default=",".join(map(str, WEIGHTS)),
                        help="comma-separated; with --evidence also 'shipped' (no override)")
    parser.add_argument("--toggle", help="with --evidence: compare this RankConfig switch off/on")
    parser.add_argument("--evidence", action="store_true",
                        help="score the full default ranking (with evidence) at each weight instead")
    parser.add_argument("--list-rows", type=int, default=0,
                        help="with --evidence: rank each set as consecutive lists of this many rows")
    parser.add_argument("--cache", type=Path, help="keep each set's score matrices here")
    parser.add_argument("--model", default="default", help="the encoder (a --model name or folder)")
    args = parser.parse_args(argv)
    global MODEL
    MODEL = args.model
    report = json.loads(args.out.read_text()) if args.out.exists() else {}
    for name in args.sets.split(","):
        if args.evidence:
            weights = [w if w == "shipped" else float(w) for w in args.weights.split(",")]
            report[name] = with_evidence(name, weights, args.toggle, args.list_rows)
        else:
            enc, lex, columns, plain = _cached(name, args.cache)
            report[name] = {label: gold_rank(fused, columns).tolist()
                            for label, fused in variants(enc, lex, plain).items()}
        acc = {k: float(np.mean(np.array(v) == 1)) for k, v in report[name].items()}
        print(name, {k: round(v, 3) for k, v in acc.items()
                     if k in ("encoder", "lexical", "weighted w=0.5", "default w=0.5")},
              "best", max(acc, key=acc.get), round(max(acc.values()), 3), flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
