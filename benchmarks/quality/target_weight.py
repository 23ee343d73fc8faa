"""The fusion weight fitted per target on its own pseudo-queries, judged on the dev or fresh sets
(issue #21; the rule and its outcome, a failure: benchmarks/results/target-weight/RULE.md).

For each set, the target's weight is fitted on pseudo-queries (codemap.rank.pseudo_queries: another
name of a concept with its own name hidden, noised forms; only names in the target's main
language), ranked by fusion alone at each weight of WEIGHTS; the weight with the most right at top
1 is the target's (ties: the one nearest the fixed 0.7). No gold pair is used. Then the set's
default ranking at that weight is read from a `fusion_sweep.py --evidence` file of per-query gold
ranks and compared, query by query, with the fixed weight 0.7.

    python benchmarks/quality/target_weight.py SWEEP.json OUT.json [--sets a,b] [--model default]
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy.stats import binomtest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, stats
import fusion_sweep  # noqa: E402
import sets  # benchmarks/ is on sys.path when run as a script
from codemap.config import RankConfig
from codemap.decide.learned_eval import learned_target
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods
from codemap.rank.hybrid import _ConceptLayout, _fuse, _mask, _name_scores
from codemap.rank.pseudo_queries import draw

FIXED = "default w=0.7"
WEIGHTS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
FALLBACK = RankConfig.encoder_weight  # the fixed weight, for ties and too few queries
QUERIES = 2000
MIN_QUERIES = 50  # fewer pseudo-queries than this say too little: the fixed weight stays
SEED = 0
CELLS = 20_000_000  # dense (queries × names) scores held at once, per matrix


@dataclass(frozen=True)
class FittedWeight:
    """A target's fusion weight and the pseudo-query acc@1 at each weight tried."""

    weight: float
    accuracy: dict  # weight (as text) → acc@1 of the pseudo-queries
    queries: int


def fit(target) -> FittedWeight:
    """Rank the target's own pseudo-queries by fusion alone at every weight of WEIGHTS."""
    vocab = target.vocab
    main = _lang(target.target_lang)
    drawn = [q for q in draw(vocab, QUERIES, SEED) if not main or _lang(q.lang) in ("", main)]
    if len(drawn) < MIN_QUERIES:
        return FittedWeight(FALLBACK, {}, len(drawn))
    vectors = target.encoder.encode([q.text for q in drawn], progress=False,
                                    desc="embedding pseudo-queries")
    layout = _ConceptLayout.of(vocab)
    gold = np.array([layout.number_of[q.code] for q in drawn])
    hits = np.zeros(len(WEIGHTS))
    step = max(1, min(256, CELLS // max(1, len(vocab.names))))
    for start in range(0, len(drawn), step):
        part = slice(start, start + step)
        rows = [{"text": q.text} for q in drawn[part]]
        enc, lex = _name_scores(target.index, target.lexical, vectors[part], rows, RankConfig())
        _mask(enc, lex, [q.hidden for q in drawn[part]], None)
        reduce = lambda m: np.maximum.reduceat(m[:, layout.order], layout.starts, axis=1)
        enc_c, lex_c = reduce(enc), reduce(lex)
        for i, w in enumerate(WEIGHTS):
            fused = _fuse(enc_c, lex_c, RankConfig(encoder_weight=w))
            right = fused[np.arange(len(rows)), gold[part]]
            # Ties count against the right concept: a weight must separate it, not tie it.
            hits[i] += int(((fused >= right[:, None]).sum(axis=1) == 1).sum())
    accuracy = {f"{w:g}": round(float(h) / len(drawn), 4) for w, h in zip(WEIGHTS, hits)}
    best = max(range(len(WEIGHTS)), key=lambda i: (hits[i], -abs(WEIGHTS[i] - FALLBACK)))
    return FittedWeight(WEIGHTS[best], accuracy, len(drawn))


def _lang(tag) -> str:
    return str(tag or "").split("-")[0].lower()





def fitted_weight(name: str) -> dict:
    """The set's target weight, fitted on the target's pseudo-queries, and what it saw."""
    g = fusion_sweep.load(name)
    default = eval_methods(g.base, drugs=g.kind == "drug")[DEFAULT_METHOD[
        g.kind == "drug"]]
    g.rank(replace(default, top_k=1))  # builds the indexes
    fitted = fit(learned_target(g))
    return {"weight": fitted.weight, "pseudo_queries": fitted.queries, "accuracy": fitted.accuracy}


def compare(ranks: dict, weight: float) -> dict:
    """acc@1 at the fitted weight and at 0.7, the encoder alone, and the discordant queries."""
    fitted, fixed = ranks[f"default w={float(weight)}"], ranks[FIXED]
    acc = lambda r: round(sum(x == 1 for x in r) / len(r), 4)
    return {"queries": len(fixed), "encoder": acc(ranks["encoder"]), "lexical": acc(ranks["lexical"]),
            "fixed_0.7": acc(fixed), "fitted": acc(fitted),
            "gained": sum(a == 1 and b != 1 for a, b in zip(fitted, fixed)),
            "lost": sum(a != 1 and b == 1 for a, b in zip(fitted, fixed))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sweep", type=Path, help="fusion_sweep.py --evidence output (per-query ranks)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--sets", help="comma-separated (default: every set of the sweep file)")
    parser.add_argument("--model", default="default")
    args = parser.parse_args(argv)
    sets.MODEL = args.model
    sweep = json.loads(args.sweep.read_text())
    names = args.sets.split(",") if args.sets else [n for n in sweep if isinstance(sweep[n], dict)]
    result = {}
    for name in names:
        fitted = fitted_weight(name)
        result[name] = {**fitted, **compare(sweep[name], fitted["weight"])}
        print(name, result[name], flush=True)
    gained = sum(r["gained"] for r in result.values())
    lost = sum(r["lost"] for r in result.values())
    pooled = {"gained": gained, "lost": lost,
              "p_fitted_better": binomtest(gained, gained + lost, alternative="greater").pvalue
              if gained + lost else 1.0,
              "p_fixed_better": binomtest(lost, gained + lost, alternative="greater").pvalue
              if gained + lost else 1.0}
    print("pooled", pooled)
    args.out.write_text(json.dumps({"sets": result, "pooled": pooled, "model": args.model},
                                   indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
