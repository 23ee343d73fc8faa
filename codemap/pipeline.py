"""map_codes(): read the source list → load the vocabulary → embed → search → rank.

Writing is left to the caller (`writers.write_candidates`), so the library can be used without
touching the disk beyond the index cache.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from . import __version__
from .confidence import choose_calibrator, ranking_key, target_domain
from .config import EvalConfig, MapConfig, RankConfig, ReadOptions
from .drug_agreement import drug_scorers, is_drug_vocabulary
from .encoder import Encoder
from .errors import CodemapError
from .evaluate import gold_ranks, score_ranks
from .index import load_or_build_index
from .labs import add_loinc_axes, lab_scorers
from .language import LanguageGuess, names_language, source_language
from .lexical import load_or_build_lexical
from .hierarchy import propose_broader
from .rank import for_languages, rank_hybrid
from .readers import SourceTable, read_code_list
from .triage import triage
from .vocab import SYNONYM_SEPARATOR, Vocabulary, load_target

log = logging.getLogger(__name__)

EMPTY_TEXT_FLAG = "empty source text"


@dataclass
class MapResult:
    """Candidates in long form (one row per source row and candidate) and what the run did."""

    candidates: pd.DataFrame
    source: SourceTable
    vocab: Vocabulary
    encoder_id: str
    run: dict = field(default_factory=dict)  # resolved settings and counts, for the run sheet
    timings: dict = field(default_factory=dict)
    language: LanguageGuess | None = None  # of the source texts, detected or given
    tiers: dict = field(default_factory=dict)  # sources per review suggestion (codemap.triage)


@dataclass
class Mapper:
    """What a run loads once (vocabulary, encoder, name index, lexical index, evidence scorers)
    and maps any block of source rows with.

    `map_codes` runs it over a whole list; an engine that streams a long list, or spreads it over
    workers, builds one Mapper per process and calls `map_block` per block: the candidates of a
    row do not depend on the other rows of its block.
    """

    config: MapConfig
    vocab: Vocabulary
    encoder: Encoder
    index: object  # codemap.index.NameIndex
    lexical: object | None  # codemap.lexical.LexicalIndex; None for the encoder-only ranking
    scorers: list
    rank: RankConfig  # config.rank with the fusion weight for this pair of languages
    target_lang: str = ""
    timings: dict = field(default_factory=dict)
    calibrator: object | None = None  # codemap.confidence.Calibrator for this model and ranking
    decisions: dict = field(default_factory=dict)  # confidence, no_match, auto-accept settings

    @classmethod
    def load(cls, config: MapConfig) -> "Mapper":
        """Load the target, the model and both indexes (built and cached on first use).

        `config.source_lang` (given, or detected by the caller from the whole list) decides
        the fusion weight together with the target names' language and the model.
        """
        clock = time.perf_counter()
        vocab = load_target(config.target, config.vocab_filter,
                            config.store_dir or config.cache_dir / "store")
        t_vocab = time.perf_counter()
        encoder = Encoder.load(config.encoder, config.cache_dir)
        t_model = time.perf_counter()
        index = load_or_build_index(vocab, encoder, config.cache_dir, progress=config.progress)
        t_index = time.perf_counter()
        with_axes(vocab)
        lexical = (load_or_build_lexical(vocab, config.cache_dir)
                   if config.rank.method != "encoder" else None)
        timings = {"load_target": t_vocab - clock, "load_model": t_model - t_vocab,
                   "index": time.perf_counter() - t_model}  # name index and lexical index
        target_lang = names_language(vocab.names["name"].tolist(), vocab.names["lang"].tolist())
        rank = for_languages(config.rank, config.source_lang or "", target_lang,
                             encoder.info.multilingual())
        scorers = evidence_scorers(vocab, rank)
        calibrator, calibration = choose_calibrator(config.calibration, encoder.info.id,
                                                    target_domain(vocab), ranking_key(rank, scorers))
        decisions = {"confidence": calibration, **decision_support(calibrator, config)}
        return cls(config, vocab, encoder, index, lexical, scorers, rank, target_lang, timings,
                   calibrator, decisions)

    def map_block(self, source: SourceTable) -> pd.DataFrame:
        """Candidates in long form for every row of `source` (see `MapResult.candidates`)."""
        queries = self.encoder.encode(source.query_texts, progress=self.config.progress,
                                      desc="embedding source")
        found = rank_hybrid(self.index, self.lexical, self.vocab, queries, row_fields(source),
                            self.scorers, self.rank)
        if self.calibrator is not None:
            found.insert(found.columns.get_loc("score") + 1, "confidence",
                         self.calibrator.predict(found).round(4))
        candidates = _join_source(source, source.texts, found)
        if self.config.memory is not None:
            from .memory import prefill

            candidates, _ = prefill(candidates, self.vocab, self.config.memory)
        if self.calibrator is not None:
            candidates, broader = propose_broader(candidates, self.vocab, self.config.broader_below)
            self.decisions["broader_proposals"] = self.decisions.get("broader_proposals", 0) + broader
        return candidates

    def describe(self) -> dict:
        """The run sheet's settings that come from what was loaded."""
        vocab, info = self.vocab, self.encoder.info
        return {
            "target": vocab.id,
            "target_spec": self.config.target,  # as given, so `codemap apply` can load it again
            "target_version": vocab.version,
            "target_concepts": len(vocab.concepts),
            "target_names": len(vocab.names),
            "target_hash": vocab.content_hash[:16],
            "target_notice": vocab.notice,
            "model": info.id,
            "model_path": str(info.path),
            "backend": info.backend.value,
            "pooling": info.pooling.value,
            "max_length": info.max_length,
            "top_k": self.rank.top_k,
            "ranking": f"{self.rank.method} ({self.rank.fusion}, encoder weight "
                       f"{self.rank.encoder_weight}), evidence: "
                       f"{', '.join(s.name for s in self.scorers) or 'none'}",
            "target_language": self.target_lang or "unknown",
            "index_cache": "hit" if self.index.cache_hit else "built",
            "index_folder": str(self.index.folder),
        }


def map_codes(config: MapConfig) -> MapResult:
    """Map every row of `config.source` onto `config.target`; see MapResult.

    Raises CodemapError for unreadable input, unknown targets or models.
    """
    clock = time.perf_counter()
    source = read_code_list(config.source, config.read)
    t_read = time.perf_counter()
    texts = source.texts
    language = source_language(texts, config.source_lang)
    if language.method != "uncertain":
        config = replace(config, source_lang=language.lang)
    mapper = Mapper.load(config)
    t_loaded = time.perf_counter()
    candidates = mapper.map_block(source)
    tiers = {}
    if mapper.calibrator is not None:  # sorted over the whole list, so after every block
        candidates, tiers = triage(candidates, mapper.decisions["no_match_below"],
                                   mapper.decisions["_threshold"], config.auto_accept)
    if config.llm is not None:
        from .llm_select import select_with_llm

        candidates, asked = select_with_llm(candidates, config.llm)
        mapper.decisions["llm"] = (f"{config.llm.url} ({config.llm.model}): {asked} sources asked, "
                                   f"log {config.llm.log}")
    t_rank = time.perf_counter()
    timings = {"read": t_read - clock, "load_model": mapper.timings["load_model"],
               "index": t_loaded - t_read - mapper.timings["load_model"],
               "map": t_rank - t_loaded, "total": t_rank - clock}
    run = {
        "codemap_version": __version__,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "source": str(config.source),
        "sheet": config.read.sheet or "",
        "code_column": source.code_col or "(row number)",
        "text_columns": ", ".join(source.text_cols),
        "unit_column": source.unit_col or "",
        "specimen_column": source.specimen_col or "",
        **mapper.describe(),
        "source_language": language.describe(),
        "rows_read": len(texts),
        "rows_empty": sum(1 for t in texts if not t),
        **{k: v for k, v in mapper.decisions.items() if not k.startswith("_")},
    }
    if config.memory is not None:
        from .memory import MEMORY_COLUMN

        remembered = (candidates[MEMORY_COLUMN] != "").groupby(candidates["source_row"]).any().sum()
        run.update(memory=str(config.memory), memory_sources=int(remembered))
    return MapResult(candidates, source, mapper.vocab, mapper.encoder.info.id, run, timings, language,
                     tiers)


def decision_support(calibrator, config: MapConfig) -> dict:
    """The no-match, broader and auto-accept thresholds of a run, for triage and the run sheet.

    Raises CodemapError when --auto-accept is asked for without a calibration to read it from.
    """
    if calibrator is None:
        if config.auto_accept is not None:
            raise CodemapError("--auto-accept needs a confidence calibration, and there is none "
                               "for this model and target: fit one with `codemap calibrate` and "
                               "pass --calibration")
        return {}
    below = calibrator.no_match_below if config.no_match_below is None else config.no_match_below
    out = {"no_match_below": below, "broader_below": config.broader_below, "_threshold": None}
    if config.auto_accept is not None:
        threshold = calibrator.threshold_for(config.auto_accept)
        out["_threshold"] = threshold
        out["auto_accept"] = (f"top-1 precision {config.auto_accept:g} on the dev calibration: "
                              + (f"confidence ≥ {threshold:.4f}" if threshold is not None else
                                 "not reached at any threshold, nothing pre-approved"))
    return out


def evaluate_gold(config: EvalConfig) -> dict:
    """Rank the gold file's queries and score them against its gold codes.

    Returns {"scores": {method: Scores}, "n_pairs", "n_in_target", "target", "model"}. Pairs whose
    gold code is not in the target are counted but not scored (no method could find them).
    """
    g = gold_queries(config)
    scores = {}
    for method, rank in eval_methods(g.base, drugs=is_drug_vocabulary(g.vocab)).items():
        scores[method] = score_ranks(gold_ranks(g.rank(rank), g.gold))
    return {"scores": scores, "n_pairs": g.n_pairs, "n_in_target": len(g.gold),
            "target": f"{g.vocab.id} {g.vocab.version}", "model": g.model,
            "encoder_weight": g.base.encoder_weight, "source_language": g.language.describe()}


@dataclass
class GoldQueries:
    """A gold file's queries whose gold code is in the target, embedded, ready to rank."""

    vocab: Vocabulary
    rows: list[dict]  # each query's fields (text, unit, specimen, other columns)
    queries: np.ndarray  # their encoder vectors
    gold: list[set[str]]  # each query's right codes
    index: object
    lexical: object
    model: str  # encoder id
    n_pairs: int  # rows in the gold file, in the target or not
    base: RankConfig  # config.rank with the fusion weight for this pair of languages
    language: LanguageGuess

    def rank(self, rank: RankConfig) -> pd.DataFrame:
        """rank_hybrid's candidate frame for these queries under one ranking configuration."""
        scorers = evidence_scorers(self.vocab, rank)
        return rank_hybrid(self.index, self.lexical, self.vocab, self.queries, self.rows, scorers, rank)


def gold_queries(config: EvalConfig) -> GoldQueries:
    """Read the gold file, load target and encoder, embed the queries whose gold is in the target.

    Raises CodemapError when the gold column is missing or the file/target cannot be read.
    """
    source = read_code_list(config.gold, ReadOptions(text_cols=config.text_cols))
    if config.gold_col not in source.frame.columns:
        raise CodemapError(f"{config.gold}: no column named {config.gold_col!r} "
                           f"(columns: {', '.join(source.frame.columns)})")
    vocab = load_target(config.target, config.vocab_filter, config.store_dir or config.cache_dir / "store")
    known = set(vocab.concepts["code"])
    gold = [{c.strip() for c in value.split(SYNONYM_SEPARATOR) if c.strip()}
            for value in source.frame[config.gold_col]]
    names, query_texts = source.texts, source.query_texts
    keep = [i for i, codes in enumerate(gold) if codes & known and names[i]]
    texts = [query_texts[i] for i in keep]
    encoder = Encoder.load(config.encoder, config.cache_dir)
    index = load_or_build_index(vocab, encoder, config.cache_dir, progress=config.progress)
    queries = encoder.encode(texts, progress=config.progress, desc="embedding queries")
    fields = row_fields(source)
    rows = [{**fields[i], "text": query_texts[i]} for i in keep]
    with_axes(vocab)
    lexical = load_or_build_lexical(vocab, config.cache_dir)
    language = source_language(texts, None)
    base = for_languages(config.rank, language.lang if language.method != "uncertain" else "",
                         names_language(vocab.names["name"].tolist(), vocab.names["lang"].tolist()),
                         encoder.info.multilingual())
    return GoldQueries(vocab, rows, queries, [gold[i] for i in keep], index, lexical,
                       encoder.info.id, len(source.frame), base, language)


def eval_methods(base: RankConfig, drugs: bool = False) -> dict[str, RankConfig]:
    """The rankings `codemap eval` compares side by side: each alone, fused, and ablations of the
    target domain's evidence (drug evidence for a Drug-domain target, lab evidence otherwise)."""
    plain = replace(base, unit_evidence=False, specimen_evidence=False, drug_evidence=False)
    if drugs:
        return {
            "encoder": replace(plain, method="encoder"),
            "lexical": replace(plain, method="lexical"),
            "hybrid, no evidence": replace(plain, method="hybrid", fusion="weighted"),
            "encoder + drug evidence": replace(plain, method="encoder", drug_evidence=True),
            "hybrid + drug evidence": replace(plain, method="hybrid", drug_evidence=True),
        }
    return {
        "encoder": replace(plain, method="encoder"),
        "lexical": replace(plain, method="lexical"),
        "hybrid rrf, no evidence": replace(plain, method="hybrid", fusion="rrf"),
        "hybrid, no evidence": replace(plain, method="hybrid", fusion="weighted"),
        "hybrid + unit": replace(plain, method="hybrid", unit_evidence=True),
        "hybrid + specimen": replace(plain, method="hybrid", specimen_evidence=True),
        "hybrid (all evidence)": replace(base, method="hybrid"),
    }


def evidence_scorers(vocab: Vocabulary, rank: RankConfig) -> list:
    """The evidence scorers for the target's domain, as switched on in `rank`."""
    if is_drug_vocabulary(vocab):
        return drug_scorers(vocab.concepts) if rank.drug_evidence else []
    return lab_scorers(rank.unit_evidence, rank.specimen_evidence)


def row_fields(source: SourceTable) -> list[dict]:
    """Each row's fields for the lexical index and evidence scorers: text, unit, specimen and
    every column of the list under its own name."""
    texts, units = source.texts, source.column(source.unit_col)
    specimens = source.column(source.specimen_col)
    records = source.frame.to_dict("records")
    return [{**record, "text": t, "unit": u, "specimen": s}
            for record, t, u, s in zip(records, texts, units, specimens)]


def with_axes(vocab: Vocabulary) -> Vocabulary:
    """Add LOINC axes (property, system, example units) to a LOINC vocabulary's concepts."""
    if vocab.id.upper().startswith("LOINC") and "property" not in vocab.concepts.columns:
        vocab.concepts = add_loinc_axes(vocab.concepts)
    return vocab


def _join_source(source: SourceTable, texts: list[str], found: pd.DataFrame) -> pd.DataFrame:
    """Attach each candidate to its source row; rows without candidates keep one flagged row."""
    base = pd.DataFrame({
        "source_row": source.rows,
        "source_code": source.codes,
        "source_text": texts,
    })
    used = {source.code_col, *source.text_cols}
    for column in source.frame.columns:
        if column in used:
            continue
        name = column if column not in base.columns and column not in found.columns else f"source_{column}"
        base[name] = source.frame[column].to_numpy()
    base["flag"] = np.where(base["source_text"] == "", EMPTY_TEXT_FLAG, "")
    base["query"] = np.arange(len(base))
    # Empty texts were embedded too (as ""), but their candidates are noise: drop them.
    found = found[found["query"].isin(base.loc[base["flag"] == "", "query"])]
    merged = base.merge(found, on="query", how="left").drop(columns=["query"])
    merged["rank"] = merged["rank"].astype("Int64")
    return merged.sort_values(["source_row", "rank"], kind="stable", na_position="first").reset_index(drop=True)
