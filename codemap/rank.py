"""Ranking: the top-k distinct concepts per source row, each scored by its best name (embedding
and/or lexical), then re-scored by domain evidence (lab or drug scorers)."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .config import RankConfig
from .index import NameIndex
from .vocab import Vocabulary

CANDIDATE_COLUMNS = ["query", "rank", "target_code", "target_name", "matched_name", "score"]

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
    number_of: dict  # code → concept number

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
        return _ConceptLayout(order, starts, codes, {code: i for i, code in enumerate(codes)})

    def numbers(self, codes) -> np.ndarray:
        """Concept numbers of the given codes (unknown codes skipped)."""
        return np.array([self.number_of[c] for c in codes if c in self.number_of], dtype=np.int64)


def _name_scores(index, lexical, queries, rows, config):
    enc = queries @ index.vectors.T if config.method != "lexical" else None
    lex = lexical.similarity([r["text"] for r in rows]) if config.method != "encoder" else None
    return enc, lex


def for_languages(config: RankConfig, source_lang: str, target_lang: str,
                  multilingual_model: bool) -> RankConfig:
    """The ranking settings for this pair of languages: with a multilingual model and source
    texts in another language than the target names, the encoder gets the cross-lingual weight."""
    if multilingual_model and source_lang and target_lang and source_lang != target_lang:
        return replace(config, encoder_weight=config.crosslingual_encoder_weight)
    return config


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
    from .evidence import extra_candidates, weigh

    reduce = lambda m: None if m is None else np.maximum.reduceat(m[:, layout.order], layout.starts, axis=1)
    enc_c, lex_c = reduce(enc), reduce(lex)
    fused = _fuse(enc_c, lex_c, config)
    names = vocab.names["name"].to_numpy()
    bounds = np.append(layout.starts, len(layout.order))
    out = []
    pool = min(max(config.pool, config.top_k), fused.shape[1])
    for q in range(fused.shape[0]):
        top = np.argpartition(-fused[q], pool - 1)[:pool]
        extra = layout.numbers(extra_candidates(scorers, rows[q]))
        scored = []
        for c in np.union1d(top, extra):
            adjust, reasons, contradicted, tier = weigh(scorers, rows[q], attributes[c])
            if contradicted and config.hide_contradicted:
                continue
            scored.append((tier, float(fused[q, c]) + adjust, c, reasons))
        # Ties at the shown precision go to the lower concept number, so a row's candidates do
        # not depend on float noise from the other texts of its embedding batch.
        scored.sort(key=lambda item: (-item[0], -round(item[1], 4), item[2]))
        for rank, (_, score, c, reasons) in enumerate(scored[:config.top_k], start=1):
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
