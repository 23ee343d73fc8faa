"""A site's lab conventions learned from its approvals (codemap.domains.lab.conventions): does one
half of a list teach the other?

Each list is halved by its rows' texts (SHA-256, even first byte: half A). Half A's gold codes,
as a site's approvals, give conventions (unit system, methods) that rank half B, and the other
way round; beside them, every row ranked as shipped (us, usual) and under all four settings.
Rows right at rank 1 per list; encoder alone and lexical alone beside them (no convention
touches them).

    python benchmarks/quality/site_conventions.py OUT.json --sets amsterdam_dev,flowsheet_dev
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import replace
from pathlib import Path

from codemap.domains.lab.conventions import learn
from codemap.domains.lab.part_translation import held_out
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods, gold_queries
from codemap.evaluate.metrics import gold_ranks

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets
from sets import eval_config  # noqa: E402

SETTINGS = [(units, methods) for units in ("us", "si") for methods in ("usual", "none")]
SHIPPED = ("us", "usual")


def half_a(text: str) -> bool:
    return hashlib.sha256(text.encode("utf-8")).digest()[0] % 2 == 0


def measured(name: str) -> dict:
    config = eval_config(name)
    right, texts, gold, base = {}, None, None, None
    for units, methods in SETTINGS:
        g = gold_queries(replace(config, rank=replace(config.rank, unit_system=units, methods=methods)))
        held_out(set().union(*g.gold))
        chosen = eval_methods(g.base, drugs=False)
        right[(units, methods)] = [r == 1 for r in gold_ranks(g.rank(chosen[DEFAULT_METHOD[False]]), g.gold)]
        if texts is None:
            texts, gold, base = [row["text"] for row in g.rows], g.gold, (g, chosen)
    g, chosen = base
    alone = {label: sum(r == 1 for r in gold_ranks(g.rank(chosen[label]), g.gold))
             for label in ("encoder", "lexical")}
    concepts = g.ranking.vocab.concepts
    halves = [half_a(t) for t in texts]
    learned, rows_learned = {}, [False] * len(texts)
    for teach in (True, False):
        pairs = [(t, sorted(codes)[0]) for t, codes, h in zip(texts, gold, halves) if h == teach]
        conventions = learn(pairs, concepts)
        setting = (conventions.unit_system or SHIPPED[0], conventions.methods or SHIPPED[1])
        learned["A teaches B" if teach else "B teaches A"] = {"setting": setting, "said": conventions.said}
        for i, h in enumerate(halves):
            if h != teach:
                rows_learned[i] = right[setting][i]
    return {"set": name, "n": len(texts), "half_a": sum(halves),
            "shipped": sum(right[SHIPPED]), "learned": sum(rows_learned),
            "encoder": alone["encoder"], "lexical": alone["lexical"],
            "settings": {f"{u}/{m}": sum(right[(u, m)]) for u, m in SETTINGS},
            "conventions": learned,
            "moved": {"onto rank 1": sum(b and not a for a, b in zip(right[SHIPPED], rows_learned)),
                      "off rank 1": sum(a and not b for a, b in zip(right[SHIPPED], rows_learned))}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sets", required=True, help="comma-separated names of benchmarks/sets.py")
    args = parser.parse_args(argv)
    results = []
    for name in args.sets.split(","):
        results.append(measured(name))
        r = results[-1]
        print(f"{name:24} n={r['n']:4}  shipped {r['shipped']:4}  learned {r['learned']:4}  "
              f"encoder {r['encoder']:4}  lexical {r['lexical']:4}  "
              + "  ".join(f"{k} {v['setting'][0]}/{v['setting'][1]}" for k, v in r["conventions"].items()),
              flush=True)
    args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    shipped, learned, n = (sum(r[k] for r in results) for k in ("shipped", "learned", "n"))
    print(f"sum: n={n} shipped {shipped} learned {learned}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
