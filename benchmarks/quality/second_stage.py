"""The second stage's combiner: collect features of real mapped lists, fit leave-one-kind-out,
calibrate on the held-out predictions, report every set, and write what ships.

    python benchmarks/quality/second_stage.py collect OUT --cross-encoder RUN/model [--sets a,b]
    python benchmarks/quality/second_stage.py fit OUT [--ship codemap/data/second_stage]
    python benchmarks/quality/second_stage.py fresh OUT            # once, under the rule

collect: each set (benchmarks/sets.py) is ranked as `codemap eval` ranks it with the default
ranking, its CANDIDATES best per row kept, every candidate scored by the cross-encoder, and the
features written to OUT/features/<set>.parquet with `label` (the candidate is a gold code of
its row). Every row is there twice: as it is, and with its gold codes absent from the target
(`gold_removed`, ranked again without them): a row whose concept the target lacks, which the
confidence must learn to doubt.

fit: for each dev set kind the combiner is fitted on the other kinds and predicts this one
(leave one kind out); the isotonic calibration is fitted on those held-out predictions, pooled;
the pre-approval threshold is the lowest confidence at which the held-out top-1 precision, and
every stricter threshold's, reaches 0.95. Per set: acc@1 of the second stage's order beside the
first stage's, the encoder's and the lexical index's; AUROC of the top confidence (right vs
wrong or absent) on the set with a quarter of its rows' gold removed; the share of rows
pre-approved and the precision they reach. The shipped combiner is fitted on every dev kind.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, stats
import sets  # noqa: E402  (benchmarks/ on the path)

from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods  # noqa: E402
from codemap.evaluate.metrics import gold_ranks  # noqa: E402
from codemap.decide.calibrate import no_match_threshold, precision_curve  # noqa: E402
from codemap.domains.lab.commonness import code_rank  # noqa: E402
from codemap.embed.models import resolve_model  # noqa: E402
from codemap.rank.candidates import threshold_at  # noqa: E402
from codemap.rerank.features import FEATURES  # noqa: E402
from codemap.rerank.pair_model import PairModel  # noqa: E402
from codemap.rerank.second_stage import Combiner, SecondStage  # noqa: E402

CANDIDATES = 20
GOLD_REMOVED_SHARE = 0.25
PRECISION = 0.95
# Dev kind → the kind of target (codemap.domains) a decision for it applies to (RULE.md).
TARGET_KIND = {"mimic-labels": "lab", "german-labels": "lab", "loinc-short-names": "lab",
               "drugs": "drug", "lay-phrases": "other", "procedure-short-names": "other",
               "icd-inclusion-terms": "other"}
# Dev set → kind: a kind is left out whole (the 16k variants of a lab set are its kind too).
KINDS = {"labs_fluid": "mimic-labels", "labs_nofluid": "mimic-labels", "german_labs": "german-labels",
         "loinc_short": "loinc-short-names", "drugs": "drugs", "hpo_lay": "lay-phrases",
         "pcs_short": "procedure-short-names", "icd_inclusion": "icd-inclusion-terms"}
# labs_fluid holds every label of labs_nofluid_fresh: it is not trained on (sets.py, README).
DEV_SETS = [name for name in sets.SETS if name != "labs_fluid"]
FIT = dict(objective="binary", learning_rate=0.05, num_leaves=15, min_data_in_leaf=40,
           feature_fraction=0.9, bagging_fraction=0.9, bagging_freq=1, lambda_l2=1.0,
           verbose=-1, seed=0, num_threads=2)
ROUNDS = 300


# --- collect ----------------------------------------------------------------------------------------

def collect(name: str, model: PairModel) -> pd.DataFrame:
    """Every candidate of the set's rows, as is and with each row's gold removed, with the
    features, label, the first stage's rank and the encoder's and lexical index's ranks."""
    g = sets.load(name)
    drugs = g.kind == "drug"
    methods = eval_methods(g.base, drugs=drugs)
    default = replace(methods[DEFAULT_METHOD[drugs]], top_k=CANDIDATES)
    rows = pd.DataFrame([{"text": r["text"], "unit": r.get("unit", ""),
                          "specimen": r.get("specimen", "")} for r in g.rows])
    alone = {m: gold_ranks(g.rank(methods[m]), g.gold) for m in ("encoder", "lexical")}
    domain = g.kind
    crosslingual = bool(g.base.crosslingual_from)
    rank_of = code_rank if domain == "lab" else (lambda code: 0)
    frames, stage = [], SecondStage(model, None)  # the cross-encoder alone: features, no order
    for removed in (False, True):
        found = g.rank(default, hide=g.gold if removed else None)
        features, _ = stage.features(found, rows, domain, crosslingual, rank_of)
        frame = pd.DataFrame(features, columns=FEATURES)
        frame["query"] = found["query"].to_numpy()
        frame["rank"] = found["rank"].to_numpy()
        frame["target_code"] = found["target_code"].to_numpy()
        frame["label"] = [int(c in g.gold[q]) for q, c in zip(found["query"], found["target_code"])]
        frame["gold_removed"] = removed
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    out["set"] = name
    ranks = pd.DataFrame({"query": range(len(g.gold)), **{f"{m}_rank": [r or 10**6 for r in ranks]
                                                         for m, ranks in alone.items()}})
    return out.merge(ranks, on="query")


# --- fit --------------------------------------------------------------------------------------------

def fit(frame: pd.DataFrame):
    import lightgbm

    data = lightgbm.Dataset(frame[list(FEATURES)].to_numpy(), label=frame["label"].to_numpy())
    return lightgbm.train(FIT, data, num_boost_round=ROUNDS)


def isotonic(raw: np.ndarray, labels: np.ndarray) -> tuple[list[float], list[float]]:
    """The isotonic map raw → share right, as breakpoints (sklearn's pool-adjacent-violators)."""
    from sklearn.isotonic import IsotonicRegression

    model = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(raw, labels)
    return [float(x) for x in model.X_thresholds_], [float(y) for y in model.y_thresholds_]


def top_rows(frame: pd.DataFrame, probability: np.ndarray) -> pd.DataFrame:
    """Each row's candidate of highest probability: (set, query, gold_removed) → label, p."""
    scored = frame.assign(p=probability)
    best = scored.sort_values(["set", "gold_removed", "query", "p", "rank"],
                              ascending=[True, True, True, False, True])
    return best.groupby(["set", "gold_removed", "query"], sort=False).head(1)


def curve(top: pd.DataFrame) -> tuple:
    """The held-out top-1 precision curve (codemap.decide.calibrate.precision_curve)."""
    return precision_curve(top["p"].to_numpy(), top["label"].to_numpy())


def threshold(top: pd.DataFrame, precision: float = PRECISION) -> float | None:
    """The lowest confidence whose top-1 precision, and every stricter one's, reaches
    `precision` (what `codemap map` reads from the shipped curve: rank.candidates.threshold_at)."""
    return threshold_at(curve(top), precision)


def report(frame: pd.DataFrame, probability: np.ndarray, cut: float | None) -> dict:
    """Per set: acc@1 (rows with their gold) of the second stage, first stage, encoder and
    lexical alone; AUROC of the top confidence and pre-approved share on the rows with a quarter
    of their gold removed (a seeded quarter of rows taken from the gold-removed copy)."""
    from sklearn.metrics import roc_auc_score

    out = {}
    top = top_rows(frame, probability)
    for name, rows in top.groupby("set"):
        present = rows[~rows["gold_removed"]].set_index("query")
        first = frame[(frame["set"] == name) & ~frame["gold_removed"] & (frame["rank"] == 1)]
        queries = present.index.to_numpy()
        removed = set(np.random.default_rng(0).choice(
            queries, size=int(round(GOLD_REMOVED_SHARE * len(queries))), replace=False))
        mixed = pd.concat([present[~present.index.isin(removed)],
                           rows[rows["gold_removed"] & rows["query"].isin(removed)]])
        every = frame[(frame["set"] == name) & ~frame["gold_removed"]].drop_duplicates("query")
        auroc = (roc_auc_score(mixed["label"], mixed["p"])
                 if mixed["label"].nunique() == 2 else None)
        approved = mixed[mixed["p"] >= cut] if cut is not None else mixed.iloc[:0]
        out[name] = {
            "rows": len(present),
            "second_stage_acc1": float(present["label"].mean()),
            "first_stage_acc1": float(first["label"].sum() / len(present)),
            # The cross-encoder's order alone: what the combiner had to add to the first stage.
            "cross_encoder_alone_acc1": float(frame[(frame["set"] == name) & ~frame["gold_removed"]
                                                    & (frame["ce_rank"] == 1)]["label"].sum()
                                              / len(present)),
            "encoder_acc1": float((every["encoder_rank"] == 1).mean()),
            "lexical_acc1": float((every["lexical_rank"] == 1).mean()),
            "auroc_with_quarter_removed": None if auroc is None else round(float(auroc), 4),
            "pre_approved_share": float(len(approved) / len(mixed)),
            "pre_approved_precision": (float(approved["label"].mean()) if len(approved) else None),
        }
    return out


def leave_one_kind_out(frame: pd.DataFrame) -> np.ndarray:
    """Each dev kind's raw predictions from a combiner fitted on the other kinds."""
    kinds = frame["set"].map(KINDS)
    raw = np.zeros(len(frame))
    for kind in kinds.unique():
        model = fit(frame[kinds != kind])
        held = (kinds == kind).to_numpy()
        raw[held] = model.predict(frame.loc[held, list(FEATURES)].to_numpy())
    return raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["collect", "fit", "fresh"])
    parser.add_argument("out", type=Path)
    parser.add_argument("--cross-encoder", type=Path)
    parser.add_argument("--sets", default=",".join(DEV_SETS))
    parser.add_argument("--ship", type=Path)
    args = parser.parse_args()
    features = args.out / "features"
    features.mkdir(parents=True, exist_ok=True)
    if args.step == "fresh":
        raise SystemExit(score_fresh(args.out, args.ship or SecondStage.shipped_folder(),
                                     args.sets))
    if args.step == "collect":
        model = PairModel.load(args.cross_encoder, threads=2)
        for name in args.sets.split(","):
            started = time.perf_counter()
            frame = collect(name, model)
            frame.to_parquet(features / f"{name}.parquet", index=False)
            print(f"{name}: {frame['query'].nunique()} rows, {len(frame)} candidates, "
                  f"{time.perf_counter() - started:.0f} s", flush=True)
        return
    dev = pd.concat([pd.read_parquet(features / f"{n}.parquet") for n in DEV_SETS],
                    ignore_index=True)
    raw = leave_one_kind_out(dev)
    labels = dev["label"].to_numpy()
    kinds = dev["set"].map(KINDS)
    held_out = {}
    for kind in kinds.unique():  # a kind's calibration and threshold come from the other kinds
        others, own = (kinds != kind).to_numpy(), (kinds == kind).to_numpy()
        x, y = isotonic(raw[others], labels[others])
        cut = threshold(top_rows(dev[others], np.interp(raw[others], x, y)))
        held_out.update(report(dev[own], np.interp(raw[own], x, y), cut))
    x, y = isotonic(raw, labels)
    top = top_rows(dev, np.interp(raw, x, y))
    cut = threshold(top)
    result = {"threshold_at_0.95": cut, "leave_one_kind_out": held_out,
              "decision": decide(dev, raw), "no_match_below": no_match_threshold(
                  top["p"].to_numpy(), top["label"].to_numpy()),
              "precision_curve": curve(top)}
    print(json.dumps({k: v for k, v in result.items() if k != "precision_curve"}, indent=1))
    (args.out / "fit.json").write_text(json.dumps(result, indent=1) + "\n")
    if args.ship:
        ship(args.ship, fit(dev), x, y, cut, result, args.cross_encoder)


def decide(dev: pd.DataFrame, raw: np.ndarray) -> dict:
    """RULE.md on the leave-one-kind-out order: the pooled sign test of the second stage's
    acc@1 against the first stage's, each dev kind's difference, and the target kinds adopted."""
    from stats import paired

    top = top_rows(dev, raw)
    present = top[~top["gold_removed"]].sort_values(["set", "query"])
    first = dev[~dev["gold_removed"] & (dev["rank"] == 1)].sort_values(["set", "query"])
    kinds = present["set"].map(KINDS).to_numpy()
    base = {k: first["label"].to_numpy()[kinds == k].astype(bool).tolist() for k in set(kinds)}
    second = {k: present["label"].to_numpy()[kinds == k].astype(bool).tolist() for k in set(kinds)}
    test = paired(base, second)
    drop = {k: (sum(second[k]) - sum(base[k])) / len(base[k]) for k in base}
    failing = sorted(k for k, d in drop.items() if d < -0.01)
    adopted = ([] if test["p_one_sided"] >= 0.05 else
               sorted({TARGET_KIND[k] for k in base} - {TARGET_KIND[k] for k in failing}))
    return {"sign_test": {k: v for k, v in test.items() if k != "per_set"},
            "acc1_change_per_kind": {k: round(d, 4) for k, d in sorted(drop.items())},
            "kinds_more_than_0.01_below": failing, "adopted_target_kinds": adopted}


def score_fresh(out: Path, folder: Path, names: str) -> int:
    """The shipped combiner, calibration and threshold on the fresh parts (collected like the
    dev sets): scored once, under the rule written before (benchmarks/results/second-stage/)."""
    combiner = Combiner.load(folder)
    fresh = [n for n in names.split(",") if n in sets.FRESH or n not in DEV_SETS]
    frame = pd.concat([pd.read_parquet(out / "features" / f"{n}.parquet") for n in fresh],
                      ignore_index=True)
    probability = combiner.predict(frame[list(FEATURES)].to_numpy())
    result = {"pre_approve_at": combiner.manifest["pre_approve_at"],
              "fresh": report(frame, probability, combiner.manifest["pre_approve_at"])}
    print(json.dumps(result, indent=1))
    (out / "fresh.json").write_text(json.dumps(result, indent=1) + "\n")
    return 0


def ship(folder: Path, model, x, y, cut, result: dict, cross_encoder: Path | None) -> None:
    """The combiner (LightGBM text), its calibration and threshold (second_stage.json)."""
    import shutil

    from codemap.rerank.second_stage import COMBINER, CROSS_ENCODER, MANIFEST

    folder.mkdir(parents=True, exist_ok=True)
    if cross_encoder is not None:  # the pair model the features were collected with
        shutil.copytree(cross_encoder, folder / CROSS_ENCODER, dirs_exist_ok=True)
    (folder / COMBINER).write_text(model.model_to_string(), encoding="utf-8")
    manifest = {"format": 1, "features": list(FEATURES), "candidates": CANDIDATES,
                "first_stage_model": resolve_model("default").key(),
                "kinds": result["decision"]["adopted_target_kinds"],
                "calibration": {"x": x, "y": y}, "pre_approve_at": cut, "precision": PRECISION,
                "no_match_below": result["no_match_below"],
                "precision_curve": result["precision_curve"],
                "fitted_on": DEV_SETS, "fit": FIT, "rounds": ROUNDS,
                "leave_one_kind_out": result["leave_one_kind_out"]}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
