"""Fusion of the encoder and lexical name scores, swept over every dev set kind (issue #21).

For each dev set the per-concept encoder cosine and lexical TF-IDF cosine of every query are
computed once (no domain evidence), then each fusion variant is scored offline: acc@1 of the
fused score alone. The output is one JSON file of per-set acc@1 per variant, plus the per-query
gold ranks, so a leave-one-set-out choice can be made from it (benchmarks/quality/default_model_decide.py).

    python benchmarks/quality/fusion_sweep.py benchmarks/results/fusion/sweep.json [--sets a,b]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from codemap.config import EncoderConfig, EvalConfig, RankConfig
from codemap.domains import evidence_names
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods, gold_queries, text_key
from codemap.evaluate.metrics import gold_ranks
from codemap.rank.hybrid import _ConceptLayout
from codemap.domains.lab.part_translation import held_out

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, stats
import sets  # noqa: E402  (the set registry; benchmarks/ is on sys.path when run as a script)
from sets import CROSSLINGUAL, FRESH, SETS, SHORT_16K, load  # noqa: E402,F401

WEIGHTS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
GATES = [0.0, 0.2, 0.3, 0.4, 0.5, 0.6]


def with_evidence(name: str, weights=WEIGHTS, toggle: str | None = None,
                  list_rows: int = 0) -> dict[str, list]:
    """Gold ranks of the full default ranking (fusion + the domain's evidence) at each weight
    ("shipped": the shipped settings, the cross-lingual weight included), or, with `toggle` (a
    RankConfig switch), with that switch off and on. `list_rows`: the gold file is cut into
    consecutive lists of that many queries, each ranked on its own (its own hubness)."""
    g = load(name)
    # The German dev sets are drawn from the linguistic variant the part lexicon learns from:
    # it learns without their gold codes (codemap.domains.lab.part_translation.held_out).
    held_out(set().union(*g.gold))
    rank_all = g.rank
    if list_rows:
        rank_all = lambda config: _ranked_in_lists(g, config, list_rows)
    drugs = g.kind == "drug"
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
                        prepared={k: (v[0], v[1][part], v[2][part]) for k, v in g.prepared.items()})
        found = piece.rank(config)
        frames.append(found.assign(query=found["query"] + start))
    return pd.concat(frames, ignore_index=True)


def concept_scores(name: str):
    """(encoder, lexical) per-concept score matrices (queries × concepts) and gold columns."""
    g = load(name)
    # Every scorer off but the usage one, which without its prior only breaks mass/moles ties.
    plain = replace(g.base, method="hybrid", usage_evidence=False, expand_abbreviations=False,
                    evidence_off=tuple(n for n in evidence_names() if n != "usage"))
    g.rank(replace(plain, top_k=1))  # builds the indexes and query vectors
    ranking, queries, rows = g.prepared[text_key(plain)]
    vocab, index, lexical = ranking.vocab, ranking.index, ranking.lexical
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
    sets.MODEL = args.model
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
