"""A learned ranker fitted on the dev pairs of several set kinds, judged on a kind it never saw
(issue #21): leave one set out over the dev sets, or fitted on every dev set and scored on the
fresh ones.

Each set's queries are pooled as `codemap map --learned-ranking` pools them (the default
ranking's top `pool` concepts with the features of codemap.rank.learned), labelled with the gold,
and the LambdaRank model of codemap.rank.learned (same parameters, no pseudo-queries) is fitted on
the other sets' tables. acc@1 of the learned order is compared query by query with the default
ranking and the encoder alone.

    python benchmarks/quality/cross_set_ranker.py OUT.json [--sets a,b] [--fresh a,b] [--tables DIR]
        [--without fixed_] [--leaves 4 --rounds 150]
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd
from scipy.stats import binomtest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, stats
import fusion_sweep  # noqa: E402
import sets  # benchmarks/ is on sys.path when run as a script
from codemap.decide.learned_eval import learned_target
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods, text_key
from codemap.evaluate.metrics import gold_ranks
from codemap.rank.learned import (FitConfig, Queries, _params, _ranking_data, _safe,
                                  feature_matrix, feature_names, labelled, pool, reorder)


def set_table(name: str, folder: Path | None) -> tuple[pd.DataFrame, list, dict]:
    """The set's pooled table with features, its labels, and the encoder / default gold ranks."""
    path = folder / f"{name}.pkl" if folder else None
    if path and path.exists():
        return pd.read_pickle(path)
    g = fusion_sweep.load(name)
    drugs = g.kind == "drug"
    methods = eval_methods(g.base, drugs=drugs)
    default = methods[DEFAULT_METHOD[drugs]]
    ranks = {m: gold_ranks(g.rank(methods[m]), g.gold) for m in ("encoder", DEFAULT_METHOD[drugs])}
    ranks["default"] = ranks.pop(DEFAULT_METHOD[drugs])
    g.rank(default)
    target = learned_target(g)
    _, vectors, rows = g.prepared[text_key(default)]
    lang = g.language.lang if g.language.method != "uncertain" else ""
    scorers = g.ranking_for(default).scorers
    table = pool(target, Queries(rows, vectors, None, g.gold, [lang] * len(rows)), scorers, default)
    table["label"] = labelled(table, g.gold)
    out = (table, [sorted(codes) for codes in g.gold], ranks)
    if path:
        folder.mkdir(parents=True, exist_ok=True)
        pd.to_pickle(out, path)
    return out


def fit(tables: list[pd.DataFrame], names: list[str], config: FitConfig):
    import lightgbm

    frames = [(t, t["label"].to_numpy(), 1) for t in tables]
    x, y, groups = _ranking_data(frames, names)
    data = lightgbm.Dataset(x, y, group=groups, feature_name=_safe(names))
    return lightgbm.train(_params(config, names), data, num_boost_round=config.rounds)


def learned_ranks(booster, table: pd.DataFrame, names: list[str], gold: list) -> list:
    found = reorder(table, booster.predict(feature_matrix(table, names)), 10)
    return gold_ranks(found, [set(g) for g in gold])


def judge(name: str, ranks: dict, learned: list) -> dict:
    acc = lambda r: round(sum(x == 1 for x in r) / len(r), 4)
    default = ranks["default"]
    return {"queries": len(learned), "encoder": acc(ranks["encoder"]), "default": acc(default),
            "learned": acc(learned),
            "gained": sum(a == 1 and b != 1 for a, b in zip(learned, default)),
            "lost": sum(a != 1 and b == 1 for a, b in zip(learned, default)),
            "ranks": {"learned": learned, **ranks}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sets", default=",".join(fusion_sweep.SETS))
    parser.add_argument("--fresh", help="fit on every --sets set, score these (no leave-one-out)")
    parser.add_argument("--tables", type=Path, help="keep each set's pooled table here")
    parser.add_argument("--model", default="default")
    parser.add_argument("--without", action="append", default=[],
                        help="leave out the features starting with this (repeatable)")
    parser.add_argument("--leaves", type=int, default=FitConfig.leaves)
    parser.add_argument("--rounds", type=int, default=FitConfig.rounds)
    args = parser.parse_args(argv)
    sets.MODEL = args.model
    dev = {n: set_table(n, args.tables) for n in args.sets.split(",")}
    config = replace(FitConfig(), leaves=args.leaves, rounds=args.rounds)
    names = sorted({c for t, _, _ in dev.values() for c in t.columns if c.startswith("evidence:")})
    names = [n for n in (*feature_names(()), *names)
             if not any(n.startswith(p) for p in args.without)]
    result = {}
    if args.fresh:
        booster = fit([t for t, _, _ in dev.values()], names, config)
        for n in args.fresh.split(","):
            table, gold, ranks = set_table(n, args.tables)
            result[n] = judge(n, ranks, learned_ranks(booster, table, names, gold))
    else:
        for held, (table, gold, ranks) in dev.items():
            booster = fit([t for n, (t, _, _) in dev.items() if n != held], names, config)
            result[held] = judge(held, ranks, learned_ranks(booster, table, names, gold))
    for n, r in result.items():
        print(n, {k: v for k, v in r.items() if k != "ranks"}, flush=True)
    gained, lost = sum(r["gained"] for r in result.values()), sum(r["lost"] for r in result.values())
    pooled = {"gained": gained, "lost": lost,
              "p_learned_better": binomtest(gained, gained + lost, alternative="greater").pvalue
              if gained + lost else 1.0}
    print("pooled", pooled)
    args.out.write_text(json.dumps({"model": args.model, "features": names, "leaves": args.leaves,
                                    "rounds": args.rounds, "sets": result, "pooled": pooled}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
