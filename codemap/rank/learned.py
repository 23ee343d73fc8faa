"""The learned ranking (opt-in: `codemap map --learned-ranking`; `codemap eval` always reports
it): a learning-to-rank model over each candidate's features, fitted per target on pseudo-queries
drawn from the target itself.

Candidates are what codemap.rank.hybrid.rank_hybrid pools for a row (its top fused names plus the
evidence scorers' candidates). Each (row, candidate) gets the features of `FEATURES` — the
encoder and lexical scores of the concept's best name, their rank and gap to the row's best in the
pool, the matched name's type, word overlap, lengths, whether the languages differ — plus one
column per evidence scorer, keyed by the scorer's `name` ("evidence:unit"), so a new scorer is a
new feature without code here. A LightGBM LambdaRank model orders them; its output is the
candidate's `score`. The fixed fusion and the hand-set evidence sizes are then only inputs the
model weighs.

The model is fitted on pseudo-queries (codemap.rank.pseudo_queries), so SNOMED, ICD, HPO or a
user's table gets fitted weights without dev data, plus dev pairs when a caller has some (`codemap
eval --folds`). A held-out part of the pseudo-queries is kept for the confidence calibrated on top
of the learned score, which is a decision: codemap.decide.learned.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import RankConfig
from ..vocab.vocabulary import Vocabulary
from .hybrid import rank_hybrid
from .lexical import normalize_text
from .pseudo_queries import PseudoQuery, draw, make_absent

EVIDENCE_PREFIX = "evidence:"
FEATURES = ("fixed_fusion", "fixed_rank", "encoder", "lexical", "encoder_rank", "lexical_rank", "encoder_gap", "lexical_gap",
            "contradicted", "tier", "name_preferred", "name_short", "name_synonym",
            "name_other_language", "query_in_name", "name_in_query", "query_words", "name_words",
            "cross_language", "concept_names")
_SHORT_TYPES = {"short", "abbreviation", "acronym"}


@dataclass(frozen=True)
class FitConfig:
    """How a ranker is fitted. Not tuned on any dev set: sizes bound the time, the absent share
    mirrors a list where some terms have no standard code."""

    pseudo_queries: int = 3000  # concepts drawn; a quarter of them hold out for the confidence
    held_out: float = 0.25
    absent_share: float = 0.25  # of the held-out queries: concept hidden (no right answer)
    rounds: int = 150
    # Small trees and monotone scores: pseudo-queries are not the real lists, and a model that
    # can only add "more similar is better" pieces carries over to them better than a deep one.
    leaves: int = 4
    learning_rate: float = 0.05
    min_in_leaf: int = 50
    seed: int = 0


@dataclass
class Target:
    """What ranking a row needs about the target: vocabulary, encoder and both indexes."""

    vocab: Vocabulary
    encoder: object  # codemap.embed.encoder.Encoder
    index: object  # codemap.embed.index.NameIndex
    lexical: object  # codemap.rank.lexical.LexicalIndex
    target_lang: str = ""
    cache_dir: Path | None = None
    # Pooled pseudo-query tables by fitting settings: the folds of a cross-validated eval fit
    # several rankers on the same pseudo-queries.
    memo: dict = field(default_factory=dict, repr=False)


@dataclass
class Queries:
    """Rows to rank: their fields, encoder vectors, hidden name rows, right codes (when known)."""

    rows: list[dict]
    vectors: np.ndarray
    hidden: list | None = None  # per row, name rows the row must not see
    gold: list[set] | None = None
    langs: list[str] | None = None  # per row, source language ("" unknown)


def pool(target: Target, queries: Queries, scorers, rank: RankConfig) -> pd.DataFrame:
    """The pooled candidates of every row with the feature columns added: rank_hybrid's frame
    with top_k = pool, i.e. its best `rank.pool` of the top fused concepts and the scorers'
    extra candidates, in the fixed fusion's order."""
    found = rank_hybrid(target.index, target.lexical, target.vocab, queries.vectors, queries.rows,
                        scorers, replace(rank, method="hybrid", fusion="weighted",
                                         top_k=max(rank.pool, rank.top_k)), queries.hidden)
    return with_features(found, target, queries, scorers)


def with_features(found: pd.DataFrame, target: Target, queries: Queries, scorers) -> pd.DataFrame:
    """`found` with FEATURES and one `evidence:<scorer name>` column per scorer."""
    found = found.reset_index(drop=True)
    enc = pd.to_numeric(found["encoder_score"]).astype(float)
    lex = pd.to_numeric(found["lexical_score"]).astype(float)
    by_query = found["query"]
    # The fixed 0.5/0.5 fusion plus evidence, and its order: one input among others, weighed by
    # the model like the rest.
    out = {"fixed_fusion": found["score"].astype(float), "fixed_rank": np.log(found["rank"].astype(float)),
           "encoder": enc, "lexical": lex,
           "encoder_rank": np.log1p(enc.groupby(by_query).rank(ascending=False, method="min") - 1),
           "lexical_rank": np.log1p(lex.groupby(by_query).rank(ascending=False, method="min") - 1),
           "encoder_gap": enc.groupby(by_query).transform("max") - enc,
           "lexical_gap": lex.groupby(by_query).transform("max") - lex}
    out.update(_name_features(found, target, queries))
    out.update(_evidence_features(found, target.vocab, queries.rows, scorers))
    return pd.concat([found, pd.DataFrame(out, index=found.index)], axis=1)


def _name_features(found: pd.DataFrame, target: Target, queries: Queries) -> dict:
    """Matched name's type and language, word overlap with the query, lengths."""
    names = target.vocab.names
    first = names.drop_duplicates(["code", "name"]).set_index(["code", "name"])
    keys = pd.MultiIndex.from_arrays([found["target_code"], found["matched_name"]])
    kinds = first["name_type"].reindex(keys).fillna("").str.lower().to_numpy()
    langs = first["lang"].reindex(keys).fillna("").to_numpy()
    per_concept = names.groupby("code").size()
    query_words = [set(normalize_text(r["text"]).split()) for r in queries.rows]
    name_words = [set(normalize_text(n).split()) for n in found["matched_name"]]
    q_of = found["query"].to_numpy()
    source_langs = queries.langs or [""] * len(queries.rows)
    base = target.target_lang
    return {
        "name_preferred": (kinds == "preferred").astype(float),
        "name_short": np.isin(kinds, list(_SHORT_TYPES)).astype(float),
        "name_synonym": (~np.isin(kinds, ["preferred", *_SHORT_TYPES])).astype(float),
        "name_other_language": np.array([bool(l) and bool(base) and not l.startswith(base)
                                         for l in langs], float),
        "query_in_name": [_share(query_words[q], w) for q, w in zip(q_of, name_words)],
        "name_in_query": [_share(w, query_words[q]) for q, w in zip(q_of, name_words)],
        "query_words": [float(len(query_words[q])) for q in q_of],
        "name_words": [float(len(w)) for w in name_words],
        "cross_language": [float(bool(source_langs[q]) and bool(base) and
                                 not source_langs[q].startswith(base)) for q in q_of],
        "concept_names": np.log(per_concept.reindex(found["target_code"]).fillna(1).to_numpy()),
    }


def _share(part: set, whole: set) -> float:
    return len(part & whole) / len(part) if part else 0.0


def _evidence_features(found: pd.DataFrame, vocab: Vocabulary, rows: list[dict], scorers) -> dict:
    """Each scorer's adjustment (0 when silent) as its own column, the contradiction flag and the
    tier sum: the scorers are asked again per scorer, as rank_hybrid only keeps their sum."""
    number = pd.Series(np.arange(len(vocab.concepts)), index=vocab.concepts["code"])
    records = vocab.concepts.to_dict("records")
    columns = {f"{EVIDENCE_PREFIX}{s.name}": np.zeros(len(found)) for s in scorers}
    contradicted, tier = np.zeros(len(found)), np.zeros(len(found))
    concept_of = number.reindex(found["target_code"]).to_numpy()
    for q, positions in found.groupby("query").indices.items():
        for scorer in scorers:
            bound = _bind(scorer, rows[q])
            if bound is None:
                continue
            column = columns[f"{EVIDENCE_PREFIX}{scorer.name}"]
            for i in positions:
                got = bound(records[concept_of[i]])
                column[i] += got.adjust
                contradicted[i] = max(contradicted[i], float(got.contradicts))
                tier[i] += got.tier
    return {**columns, "contradicted": contradicted, "tier": tier}


def _bind(scorer, row):
    """The scorer bound to one row (None when it has no opinion on any concept for it)."""
    bind = getattr(scorer, "for_row", None)
    if bind is None:
        return lambda concept: scorer.score(row, concept)
    return bind(row)


def feature_names(scorers) -> list[str]:
    """FEATURES then one column per scorer, in the scorers' order (duplicates once)."""
    evidence = list(dict.fromkeys(f"{EVIDENCE_PREFIX}{s.name}" for s in scorers))
    return [*FEATURES, *evidence]


def feature_matrix(table: pd.DataFrame, features: list[str]) -> np.ndarray:
    """The feature matrix; a feature the table lacks (a scorer absent here) is 0, as when silent."""
    return np.column_stack([table[f].to_numpy(float) if f in table else np.zeros(len(table))
                            for f in features])


def reorder(table: pd.DataFrame, learned: np.ndarray, top_k: int) -> pd.DataFrame:
    """Rows' candidates sorted by evidence tier (a hard guarantee, e.g. a contradicting drug
    strength never outranks an agreeing one), then learned score, then the old order; top_k
    kept and renumbered."""
    table = table.assign(score=np.round(learned, 4), _old=table["rank"])
    table = table.sort_values(["query", "tier", "score", "_old"], ascending=[True, False, False, True],
                              kind="stable")
    table["rank"] = table.groupby("query").cumcount() + 1
    table = table[table["rank"] <= top_k].drop(columns="_old").reset_index(drop=True)
    table["explanation"] = [f"learned {s:.3f}; {e}" if e else f"learned {s:.3f}"
                            for s, e in zip(table["score"], table["explanation"].fillna(""))]
    return table


# --- fitting ----------------------------------------------------------------------------------

def pseudo_batch(target: Target, drawn: list[PseudoQuery], hidden_rows: np.ndarray | None) -> Queries:
    """Pseudo-queries as rows to rank; `hidden_rows` (a target with concepts removed) are hidden
    from every one of them."""
    texts = [p.text for p in drawn]
    vectors = target.encoder.encode(texts, progress=False, desc="embedding pseudo-queries")
    hidden = [p.hidden if hidden_rows is None else np.union1d(p.hidden, hidden_rows) for p in drawn]
    return Queries([{"text": t} for t in texts], vectors, hidden, [{p.code} for p in drawn],
                   [p.lang for p in drawn])


def labelled(table: pd.DataFrame, gold: list[set]) -> np.ndarray:
    return np.array([code in gold[q] for q, code in zip(table["query"], table["target_code"])], float)


@dataclass
class FittedRanking:
    """A LambdaRank model, its feature names, the held-out pseudo-queries and their pooled table
    (what the confidence is calibrated on) and what it was fitted on."""

    booster: object  # lightgbm.Booster
    features: list[str]
    held_out: tuple  # (Queries, pooled table)
    fitted_on: dict


def fit_ranking(target: Target, scorers, rank: RankConfig, config: FitConfig = FitConfig(),
                dev: tuple[Queries, pd.DataFrame] | None = None,
                excluded: frozenset = frozenset()) -> FittedRanking:
    """Fit the ranking model on pseudo-queries drawn from `target` (plus `dev`: labelled rows and
    their pooled table, when given).

    `excluded` codes are concepts removed from the target: never drawn, hidden from every query.
    """
    import lightgbm

    (train_q, train), (held_q, held) = pseudo_tables(target, scorers, rank, config, excluded)
    names = feature_names(scorers)
    frames = [(train, labelled(train, train_q.gold), 1)]
    if dev is not None:
        # Real pairs are few but are the real distribution: repeated to weigh as much as the
        # pseudo-queries together.
        repeat = max(1, round(len(train_q.rows) / max(1, sum(map(bool, dev[0].gold)))))
        frames.append((dev[1], labelled(dev[1], dev[0].gold), repeat))
    x, y, groups = _ranking_data(frames, names)
    booster = lightgbm.train(_params(config, names), lightgbm.Dataset(x, y, group=groups,
                                                                feature_name=_safe(names)),
                             num_boost_round=config.rounds)
    fitted_on = {"pseudo_queries": len(train_q.rows), "held_out": len(held_q.rows),
                 "dev_pairs": 0 if dev is None else len(dev[0].rows),
                 "target_names": len(target.vocab.names), **asdict(config)}
    return FittedRanking(booster, names, (held_q, held), fitted_on)


def pseudo_tables(target: Target, scorers, rank: RankConfig, config: FitConfig,
                  excluded: frozenset) -> tuple:
    """((queries, pooled table) to fit the ranker on, (queries, table) held out for the
    confidence), drawn once per target and settings."""
    key = (repr(config), tuple(feature_names(scorers)), repr(rank), tuple(sorted(excluded)))
    if key not in target.memo:
        hidden_rows = _rows_of(target.vocab, excluded)
        drawn = draw(target.vocab, config.pseudo_queries, config.seed, excluded=excluded)
        cut = int(round(len(drawn) * (1 - config.held_out)))
        parts = (drawn[:cut], make_absent(drawn[cut:], target.vocab, config.absent_share,
                                              config.seed + 1))
        batches = [pseudo_batch(target, part, hidden_rows) for part in parts]
        target.memo[key] = tuple((q, pool(target, q, scorers, rank)) for q in batches)
    return target.memo[key]


def _rows_of(vocab: Vocabulary, codes: frozenset) -> np.ndarray | None:
    if not codes:
        return None
    return np.flatnonzero(vocab.names["code"].isin(codes).to_numpy())


def _safe(names: list[str]) -> list[str]:
    """LightGBM feature names may not hold ':' and other JSON characters."""
    return [n.replace(":", "__").replace(" ", "_") for n in names]


# Features a candidate can only gain from (+1) or lose from (-1), all others free.
MONOTONE = {"fixed_fusion": 1, "fixed_rank": -1, "encoder": 1, "lexical": 1, "encoder_rank": -1,
            "lexical_rank": -1, "encoder_gap": -1, "lexical_gap": -1, "query_in_name": 1,
            "name_in_query": 1, "contradicted": -1}


def _params(config: FitConfig, names: list[str]) -> dict:
    return {"objective": "lambdarank", "num_leaves": config.leaves,
            "monotone_constraints": [MONOTONE.get(n, 0) for n in names],
            "learning_rate": config.learning_rate, "min_data_in_leaf": config.min_in_leaf,
            "lambdarank_truncation_level": 20, "eval_at": [1, 10], "verbose": -1,
            "seed": config.seed, "deterministic": True, "num_threads": 1,
            "force_row_wise": True}


def _ranking_data(frames, names: list[str]):
    """Feature matrix, labels and query group sizes, from the rows that have a right candidate
    in their pool (a row without one teaches the ordering nothing)."""
    xs, ys, groups = [], [], []
    for table, labels, repeat in frames:
        keep = pd.Series(labels).groupby(table["query"].to_numpy()).transform("max").to_numpy() > 0
        table, labels = table[keep], labels[keep]
        order = np.argsort(table["query"].to_numpy(), kind="stable")
        x = feature_matrix(table.iloc[order], names)
        sizes = table["query"].value_counts(sort=False).sort_index().to_numpy()
        xs += [x] * repeat
        ys += [labels[order]] * repeat
        groups += [sizes] * repeat
    return np.vstack(xs), np.concatenate(ys), np.concatenate(groups)
