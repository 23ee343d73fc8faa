"""Search hits → candidates: the top-k distinct concepts per source row, each scored by its best
name."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .config import RankConfig
from .index import NameIndex
from .vocab import Vocabulary

CANDIDATE_COLUMNS = ["query", "rank", "target_code", "target_name", "matched_name", "score"]


def rank_candidates(index: NameIndex, vocab: Vocabulary, queries: np.ndarray,
                    config: RankConfig = RankConfig()) -> pd.DataFrame:
    """Rank concepts for each query vector.

    Returns one row per (query, candidate): `query` (the query's position), `rank` (1-based),
    `target_code`, `target_name` (preferred name), `matched_name` (the name that scored) and
    `score` (cosine similarity of the best name).
    """
    codes = vocab.names["code"].to_numpy()
    names = vocab.names["name"].to_numpy()
    preferred = dict(zip(vocab.concepts["code"], vocab.concepts["name"]))
    fetch = config.top_k * config.names_per_candidate
    scores, hits = index.search(queries, fetch)
    rows: list[tuple] = []
    for q in range(len(queries)):
        picked = _distinct(codes, scores[q], hits[q], config.top_k)
        if len(picked) < config.top_k and hits.shape[1] < index.faiss_index.ntotal:
            # Many names of the same few concepts filled the fetch: search this query deeper.
            more_scores, more_hits = index.search(queries[q:q + 1], index.faiss_index.ntotal)
            picked = _distinct(codes, more_scores[0], more_hits[0], config.top_k)
        for rank, (code, row, score) in enumerate(picked, start=1):
            rows.append((q, rank, code, preferred.get(code, names[row]), names[row], round(float(score), 4)))
    return pd.DataFrame(rows, columns=CANDIDATE_COLUMNS)


def _distinct(codes: np.ndarray, scores: np.ndarray, hits: np.ndarray, k: int) -> list[tuple]:
    """The first k distinct concepts among hits sorted by score (a concept's best name wins)."""
    seen: set = set()
    picked = []
    for score, row in zip(scores, hits):
        if row < 0:
            break
        code = codes[row]
        if code in seen:
            continue
        seen.add(code)
        picked.append((code, int(row), score))
        if len(picked) == k:
            break
    return picked


# --- hybrid ranking: embedding + lexical scores fused, then re-scored by domain evidence ---------

HYBRID_COLUMNS = CANDIDATE_COLUMNS + ["encoder_score", "lexical_score", "explanation"]
QUERY_CHUNK = 256  # queries scored at once: bounds the dense (queries × names) matrices


def rank_hybrid(index: NameIndex, lexical, vocab: Vocabulary, queries: np.ndarray,
                rows: list[dict], scorers=(), config: RankConfig = RankConfig()) -> pd.DataFrame:
    """Rank concepts by fused name scores adjusted by evidence scorers.

    `queries` are the encoder vectors of the rows' texts, `rows` each row's fields (`text`,
    `unit`, `specimen`…) for the lexical index and the scorers, `lexical` a
    `codemap.lexical.LexicalIndex` (None when `config.method` is "encoder"). A concept scores by
    its best name. Returns HYBRID_COLUMNS: the CANDIDATE_COLUMNS plus the two name scores and an
    `explanation` of what moved the candidate.
    """
    layout = _ConceptLayout.of(vocab)
    attributes = vocab.concepts.to_dict("records")
    frames = []
    for start in range(0, len(rows), QUERY_CHUNK):
        chunk = slice(start, start + QUERY_CHUNK)
        enc, lex = _name_scores(index, lexical, queries[chunk], rows[chunk], config)
        frames.append(_rank_chunk(enc, lex, layout, attributes, rows[chunk], start, scorers,
                                  config, vocab))
    frame = pd.DataFrame([r for f in frames for r in f], columns=HYBRID_COLUMNS)
    return frame


@dataclass(frozen=True)
class _ConceptLayout:
    """Name rows grouped by concept, so per-concept maxima are one reduceat."""

    order: np.ndarray  # name rows sorted by concept number
    starts: np.ndarray  # first position of each concept in `order`
    concept_codes: np.ndarray  # code per concept number, in vocab.concepts order

    @staticmethod
    def of(vocab: Vocabulary) -> "_ConceptLayout":
        codes = vocab.concepts["code"].to_numpy()
        number = pd.Series(np.arange(len(codes)), index=codes)
        of_name = number.reindex(vocab.names["code"]).to_numpy()
        if np.isnan(of_name.astype(float)).any():
            raise ValueError("vocabulary names point to codes missing from its concepts")
        of_name = of_name.astype(np.int64)
        order = np.argsort(of_name, kind="stable")
        starts = np.searchsorted(of_name[order], np.arange(len(codes)))
        return _ConceptLayout(order, starts, codes)


def _name_scores(index, lexical, queries, rows, config):
    enc = queries @ index.vectors.T if config.method != "lexical" else None
    lex = lexical.similarity([r["text"] for r in rows]) if config.method != "encoder" else None
    return enc, lex


def _fuse(enc_c, lex_c, config: RankConfig) -> np.ndarray:
    """Per-concept fused score (queries × concepts)."""
    if lex_c is None:
        return enc_c
    if enc_c is None:
        return lex_c
    if config.fusion == "rrf":
        k = config.rrf_k
        ranks_e = np.argsort(np.argsort(-enc_c, axis=1), axis=1) + 1
        ranks_l = np.argsort(np.argsort(-lex_c, axis=1), axis=1) + 1
        # Scaled so a concept first in both lists scores 1, like a perfect cosine.
        return (1 / (k + ranks_e) + 1 / (k + ranks_l)) * (k + 1) / 2
    w = config.encoder_weight
    return w * enc_c + (1 - w) * lex_c


def _rank_chunk(enc, lex, layout, attributes, rows, offset, scorers, config, vocab):
    from .evidence import weigh

    reduce = lambda m: None if m is None else np.maximum.reduceat(m[:, layout.order], layout.starts, axis=1)
    enc_c, lex_c = reduce(enc), reduce(lex)
    fused = _fuse(enc_c, lex_c, config)
    names = vocab.names["name"].to_numpy()
    bounds = np.append(layout.starts, len(layout.order))
    out = []
    pool = min(max(config.pool, config.top_k), fused.shape[1])
    for q in range(fused.shape[0]):
        top = np.argpartition(-fused[q], pool - 1)[:pool]
        scored = []
        for c in top:
            adjust, reasons, contradicted = weigh(scorers, rows[q], attributes[c])
            if contradicted and config.hide_contradicted:
                continue
            scored.append((float(fused[q, c]) + adjust, c, reasons))
        scored.sort(key=lambda item: -item[0])
        for rank, (score, c, reasons) in enumerate(scored[:config.top_k], start=1):
            name_rows = layout.order[bounds[c]:bounds[c + 1]]
            per_name = sum(m[q, name_rows] for m in (enc, lex) if m is not None)
            best = name_rows[int(np.argmax(per_name))]
            e = None if enc_c is None else round(float(enc_c[q, c]), 4)
            lx = None if lex_c is None else round(float(lex_c[q, c]), 4)
            why = [f"name: encoder {e}" if e is not None else "",
                   f"lexical {lx}" if lx is not None else "", *reasons]
            out.append((offset + q, rank, layout.concept_codes[c], attributes[c]["name"],
                        names[best], round(score, 4), e, lx, "; ".join(w for w in why if w)))
    return out
