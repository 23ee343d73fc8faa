"""`codemap eval`: a gold file's queries ranked under several rankings, scored against their
gold codes (acc@k, MRR); `codemap calibrate` fits confidence on the same queries."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..config import EvalConfig, RankConfig, ReadOptions
from ..domains import evidence_by_domain, evidence_names
from ..errors import CodemapError
from ..rank.assembly import Ranking
from ..rank.prepare import row_fields
from ..rank.rerank import CrossEncoder, rerank_candidates
from ..rerank.second_stage import SecondStage
from ..read.bounds import name_list
from ..read.language import LanguageGuess
from ..read.readers import read_code_list
from ..vocab.vocabulary import SYNONYM_SEPARATOR, Vocabulary
from .metrics import gold_ranks, score_ranks


def evaluate_gold(config: EvalConfig) -> dict:
    """Rank the gold file's queries and score them against its gold codes.

    Returns {"scores": {method: Scores}, "ranks": {method: [gold rank or None per scored pair]},
    "n_pairs", "n_in_target", "target", "model", "backend", …}. Pairs whose gold code is not in
    the target are counted but not scored (no method could find them). `codemap eval` adds the
    learned ranker's row to it (codemap.decide.learned_eval).
    """
    return rank_gold(gold_queries(config))[0]


def rank_gold(g: "GoldQueries") -> tuple[dict, dict]:
    """evaluate_gold's report for these queries, and the candidate frames of the encoder, lexical
    and default rows by method (what a later row's confidence is compared with)."""
    config = g.config
    reranker = CrossEncoder.load(config.rerank, config.encoder.device) if config.rerank else None
    scores, ranks, compared = {}, {}, {}
    drugs = g.kind == "drug"
    rerank_inputs = {}  # method → (its candidates, query texts) for the re-ranked rows
    methods = eval_methods(g.base, drugs=drugs)
    for method, rank in methods.items():
        found = g.rank(rank)
        if method in ("encoder", "lexical", DEFAULT_METHOD[drugs]):
            compared[method] = found
        ranks[method] = gold_ranks(found, g.gold)
        scores[method] = score_ranks(ranks[method])
        if reranker is not None and method in ("encoder", DEFAULT_METHOD[drugs]):
            prepare = g.prepared[text_key(rank)][0].prepare  # what map's re-ranker reads
            texts = [prepare(t) for t in g.query_texts]
            rerank_inputs[method] = (found, texts)
    rerank_ms = _eval_reranked(reranker, g.base.rerank_top, rerank_inputs, g.gold, scores, ranks)
    second = _eval_second_stage(g, methods[DEFAULT_METHOD[drugs]])
    if second is not None:
        ranks[SECOND_STAGE] = gold_ranks(second, g.gold)
        scores[SECOND_STAGE] = score_ranks(ranks[SECOND_STAGE])
    return {"rerank_ms_per_row": rerank_ms, "scores": scores, "ranks": ranks, "n_pairs": g.n_pairs, "n_in_target": len(g.gold),
            "dropped_codes": len(g.excluded),
            "dropped_queries": sum(1 for codes in g.gold if codes <= g.excluded) if g.excluded else 0,
            "target": f"{g.vocab.id} {g.vocab.version}", "model": g.encoder.info.id,
            "encoder_weight": g.base.encoder_weight, "source_language": g.language.describe(),
            "backend": f"{g.encoder.variant} on {g.encoder.provider}",
            "default_method": SECOND_STAGE if second is not None else DEFAULT_METHOD[drugs]}, compared


SECOND_STAGE = "second stage"


def _eval_second_stage(g: "GoldQueries", first: RankConfig) -> pd.DataFrame | None:
    """The shipped second stage's order of the default ranking's candidates, as `codemap map`
    makes it (codemap.engines.local.second_stage_for), or None where it does not apply."""
    stage = (SecondStage.shipped_for(g.encoder.info.key(), g.kind, g.config.cache_dir)
             if g.config.second_stage else None)
    if stage is None:
        return None
    found = g.rank(replace(first, top_k=max(first.top_k, stage.candidates)))
    return stage.reorder(found, g.rows, g.ranking, first.top_k)


@dataclass
class GoldQueries:
    """A gold file's queries whose gold code is in the target, ready to rank (`eval`, `calibrate`),
    through the one pipeline assembly (codemap.rank.assembly.Ranking)."""

    config: EvalConfig
    ranking: Ranking  # the target, model and indexes, at the base settings
    rows: list[dict]  # each query's fields (text, unit, specimen, other columns)
    gold: list[set[str]]  # each query's right codes
    n_pairs: int  # rows in the gold file, in the target or not
    language: LanguageGuess
    # What is embedded of each query, as `map` embeds a row (SourceTable.query_texts: the text,
    # with the specimen where the list has a specimen column); the rows' own text stays the
    # text alone, as map's rows read it for the n-grams, the pools and the evidence.
    query_texts: list[str]
    # Every row of the gold file as map would take the list (SourceTable.query_texts), its gold
    # in the target or not: the rows whose hubness map computes (codemap.rank.hubness).
    list_texts: list[str]
    # text_key → (the ranking under those settings, the queries' vectors, their embedded rows)
    prepared: dict = field(default_factory=dict)
    hubs: dict = field(default_factory=dict)  # text_key → the queries' ListHubness
    excluded: frozenset = frozenset()  # codes removed from the target (eval --drop-gold-share)

    @property
    def base(self) -> RankConfig:
        """config.rank with the fusion weight for this pair of languages."""
        return self.ranking.settings

    vocab = property(lambda self: self.ranking.vocab)
    encoder = property(lambda self: self.ranking.encoder)
    kind = property(lambda self: self.ranking.target.kind)  # lab, drug or other

    @property
    def model(self) -> str:
        return self.encoder.info.id

    def ranking_for(self, rank: RankConfig) -> Ranking:
        """The ranking under `rank`'s settings, its queries embedded (once per text_key)."""
        key = text_key(rank)
        if key not in self.prepared:
            ranking = self.ranking.with_settings(rank)
            rows, vectors = ranking.embed(self.rows, self.query_texts)
            self.prepared[key] = (ranking, vectors, rows)
        return self.prepared[key][0].with_settings(rank)

    def rank(self, rank: RankConfig, hide: list[set[str]] | None = None) -> pd.DataFrame:
        """rank_hybrid's candidate frame for these queries under one ranking configuration;
        `hide[q]`: codes absent from the target for query q alone (besides `excluded`)."""
        ranking = self.ranking_for(rank)
        _, vectors, rows = self.prepared[text_key(rank)]
        return ranking.rank(vectors, rows, hub=self._hub(rank),
                            exclude=hidden_rows(ranking.vocab, self.excluded, len(rows), hide))

    def _hub(self, rank: RankConfig):
        """The gold file's hubness (codemap.rank.hubness): every row of the file is the list,
        taken as `codemap map` takes a list's rows, the rows whose gold is absent included."""
        if not rank.hubness or rank.method == "lexical":
            return None
        key = text_key(rank)
        if key not in self.hubs:
            self.hubs[key] = self.prepared[key][0].hubness(self.list_texts)
        return self.hubs[key]


def text_key(rank: RankConfig) -> tuple:
    """The settings that change the query texts (and so their vectors): one preparation each."""
    return rank.expand_abbreviations, rank.complete_words, rank.reads_parts, rank.reads_glosses


def gold_queries(config: EvalConfig) -> GoldQueries:
    """Read the gold file, load target and encoder: the queries whose gold is in the target.

    Raises CodemapError when the gold column is missing or the file/target cannot be read.
    """
    source = read_code_list(config.gold, ReadOptions(text_cols=config.text_cols))
    if config.gold_col not in source.frame.columns:
        raise CodemapError(f"{config.gold}: no column named {config.gold_col!r} "
                           f"(columns: {name_list(source.frame.columns)})")
    names, query_texts = source.texts, source.query_texts
    gold = [{c.strip() for c in value.split(SYNONYM_SEPARATOR) if c.strip()}
            for value in source.frame[config.gold_col]]
    fields = row_fields(source)
    candidates = [i for i, codes in enumerate(gold) if codes and names[i]]
    ranking, language = Ranking.load(
        config.target, config.rank, vocab_filter=config.vocab_filter, store_dir=config.store_dir,
        encoder=config.encoder, cache_dir=config.cache_dir, index_config=config.index,
        texts=names, progress=config.progress)  # the language from every row's text, as map reads it
    known = set(ranking.vocab.concepts["code"])
    keep = [i for i in candidates if gold[i] & known]
    rows = [fields[i] for i in keep]
    kept = [gold[i] for i in keep]
    return GoldQueries(config, ranking, rows, kept, len(source.frame), language,
                       [query_texts[i] for i in keep], query_texts,
                       excluded=dropped_codes(kept, config.drop_gold_share, config.seed))


def dropped_codes(gold: list[set[str]], share: float, seed: int) -> frozenset:
    """`share` of the distinct gold codes, drawn with `seed`: concepts to remove from the target
    (`eval --drop-gold-share`), so that share of the queries has no right answer, as in a real
    list."""
    codes = sorted({c for codes in gold for c in codes})
    if share <= 0 or not codes:
        return frozenset()
    rng = np.random.default_rng(seed)
    return frozenset(rng.choice(codes, size=int(round(share * len(codes))), replace=False).tolist())


def hidden_rows(vocab: Vocabulary, excluded: frozenset, n: int,
                hide: list[set[str]] | None = None) -> list | None:
    """The name rows hidden from each of `n` queries: every name of the `excluded` codes, and of
    `hide[q]`'s codes for query q alone (None when nothing is hidden)."""
    if not excluded and not (hide and any(hide)):
        return None
    codes = vocab.names["code"]
    rows = np.flatnonzero(codes.isin(excluded).to_numpy())
    if not hide:
        return [rows] * n
    return [np.union1d(rows, np.flatnonzero(codes.isin(h).to_numpy())) if h else rows
            for h in hide]


def _eval_reranked(reranker: CrossEncoder | None, top: int, inputs: dict, gold: list[set[str]],
                   scores: dict, ranks: dict) -> float | None:
    """Add "<method> + rerank" rows for the candidates in `inputs`; returns the re-ranker's cost
    in ms per source row (one pass over each row's top `top` candidates)."""
    if reranker is None or not inputs:
        return None
    seconds = []
    for method, (found, texts) in inputs.items():
        clock = time.perf_counter()
        reranked = rerank_candidates(found, texts, reranker, top)
        seconds.append((time.perf_counter() - clock) / max(1, len(texts)))
        name = f"{method.split(' ')[0]} + rerank"
        ranks[name] = gold_ranks(reranked, gold)
        scores[name] = score_ranks(ranks[name])
    return round(1000 * float(np.mean(seconds)), 2)


# The ranking `codemap map` uses by default, under its name in eval_methods.
DEFAULT_METHOD = {False: "hybrid (all evidence)", True: "hybrid + drug evidence"}


def eval_methods(base: RankConfig, drugs: bool = False) -> dict[str, RankConfig]:
    """The rankings `codemap eval` compares side by side: each alone, fused, and ablations of the
    target domain's evidence (drug evidence for a Drug-domain target, lab evidence otherwise)."""
    every = evidence_names()

    def only(*names: str) -> tuple[str, ...]:  # every scorer off but these
        return tuple(n for n in every if n not in names)

    plain = replace(base, evidence_off=every, expand_abbreviations=False, translate_parts=False,
                    gloss_words=False, complete_words=False, hubness=False)
    if drugs:
        drug = only(*evidence_by_domain()["drug"])
        return {
            "encoder": replace(plain, method="encoder"),
            "lexical": replace(plain, method="lexical"),
            "hybrid, no evidence": replace(plain, method="hybrid", fusion="weighted"),
            "hybrid + completed words": replace(plain, method="hybrid", complete_words=True),
            "encoder + drug evidence": replace(plain, method="encoder", evidence_off=drug),
            DEFAULT_METHOD[True]: replace(plain, method="hybrid", evidence_off=drug,
                                          complete_words=base.complete_words,
                                          expand_abbreviations=base.expand_abbreviations),
            "hybrid + drug evidence + abbreviations": replace(
                plain, method="hybrid", evidence_off=drug, expand_abbreviations=True),
        }
    return {
        "encoder": replace(plain, method="encoder"),
        "lexical": replace(plain, method="lexical"),
        "hybrid rrf, no evidence": replace(plain, method="hybrid", fusion="rrf"),
        "hybrid, no evidence": replace(plain, method="hybrid", fusion="weighted"),
        "hybrid + unit": replace(plain, method="hybrid", evidence_off=only("unit")),
        "hybrid + specimen": replace(plain, method="hybrid", evidence_off=only("specimen")),
        "hybrid + category": replace(plain, method="hybrid", evidence_off=only("category")),
        "hybrid + usage": replace(plain, method="hybrid", evidence_off=only("usage"),
                                  usage_evidence=True),
        "hybrid + abbreviations": replace(plain, method="hybrid", expand_abbreviations=True),
        "hybrid + completed words": replace(plain, method="hybrid", complete_words=True),
        "hybrid + text axes": replace(plain, method="hybrid", evidence_off=only(
            "text_specimen", "text_property", "text_timing", "text_method", "text_scale")),
        "hybrid + usual variant": replace(plain, method="hybrid", evidence_off=only(
            "usual_specimen", "usual_method")),
        "hybrid + component back-off": replace(plain, method="hybrid",
                                               evidence_off=only("component_backoff")),
        "hybrid + hubness": replace(plain, method="hybrid", hubness=True),
        DEFAULT_METHOD[False]: replace(base, method="hybrid"),
    }
