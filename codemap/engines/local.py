"""The local engine: read the source list → load the vocabulary → embed → search → rank →
decide, in this process. `map_codes` maps a list in one block and leaves writing to the caller
(`writers.write_candidates`); `map_to_file` maps any length block by block and writes it.
"""
from __future__ import annotations

import functools
import itertools
import logging
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from .. import __version__
from ..config import BLOCK_ROWS, MapConfig, RankConfig
from ..decide.confidence import calibration_fingerprint, choose_calibrator, ranking_key
from ..decide.learned import LearnedRanker, load_or_fit
from ..decide.llm_select import select_with_llm
from ..decide.pseudo_calibration import any_calibrator
from ..decide.triage import preapproval_precision, suggest, tally
from ..errors import CodemapError
from ..files import sha256_text
from ..rank.hubness import reference_texts
from ..rank.assembly import Ranking
from ..rank.hybrid import HYBRID_COLUMNS
from ..rank.learned import Queries, Target, pool
from ..rank.prepare import both_readings, row_fields
from ..rank.rerank import CrossEncoder, rerank_candidates
from ..rerank.second_stage import SecondStage
from ..read.language import LanguageGuess
from ..read.normalize import read_as_notes
from ..read.readers import SourceTable, iter_code_list, read_code_list, warn_data_like_header
from ..review.memory import MEMORY_COLUMN, MappingMemory, prefill, site_approvals
from ..vocab.hierarchy import BROADER_NOTE, Hierarchy, propose_broader
from ..vocab.vocabulary import Vocabulary
from ..write.parts import PartsFolder, part_name
from ..write.writers import EXCEL_MAX_ROWS, check_output, write_candidate_parts

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
    tiers: dict = field(default_factory=dict)  # sources per review suggestion (decide.triage)


@dataclass
class Mapper:
    """What a run loads once (the ranking: target, model, indexes, evidence scorers; and the
    decision support) and maps any block of source rows with.

    `map_codes` runs it over a whole list; an engine that streams a long list, or spreads it over
    workers, builds one Mapper per process, takes its view `for_list` of each list (its hubness)
    and calls `map_block` per block: the candidates of a row depend on its list, never on the
    other rows of its block.
    """

    config: MapConfig
    ranking: Ranking  # codemap.rank.assembly: target, model, indexes, settings for the languages
    calibrator: object | None = None  # decide.confidence.Calibrator, or decide.learned.LearnedRanker
    decisions: dict = field(default_factory=dict)  # confidence, no_match, auto-accept settings
    reranker: CrossEncoder | None = None  # re-orders the top candidates (config.rerank)
    hierarchy: Hierarchy | None = None  # for uphill proposals (made only with a calibrator)
    second_stage: SecondStage | None = None  # re-orders the first stage's candidates (rerank)
    hub: object | None = None  # the list's codemap.rank.hubness.ListHubness (for_list)
    language: LanguageGuess | None = None  # of the list's texts given to `load`

    @classmethod
    def load(cls, config: MapConfig, texts: list[str] | None = None) -> "Mapper":
        """Load the ranking (rank.assembly.Ranking: target, model, both indexes, built and
        cached on first use) and the decision support.

        `config.source_lang` (given, or else detected from the list's `texts` once the target is
        loaded: a drug target's names say which words carry no language) decides the fusion
        weight together with the target names' language and the model; the guess is kept as
        `language`.
        """
        ranking, language = Ranking.load(
            config.target, config.rank, vocab_filter=config.vocab_filter,
            store_dir=config.store_dir, encoder=config.encoder, cache_dir=config.cache_dir,
            index_config=config.index, texts=texts, source_lang=config.source_lang,
            progress=config.progress)
        if language.method != "uncertain":
            config = replace(config, source_lang=language.lang)
        ranking, config, conventions = with_conventions(ranking, config)
        if config.calibration is not None:  # a calibration fitted on dev gold for the fixed ranking
            ranking = ranking.with_settings(replace(ranking.settings, learned=False))
        stage = second_stage_for(config, ranking)
        if stage is not None:  # its candidates come from a deeper first-stage pool
            ranking = ranking.with_settings(replace(ranking.settings,
                                                    top_k=max(config.rank.top_k, stage.candidates)))
            calibrator, calibration = stage.combiner, stage.combiner.describe()
        else:
            calibrator, calibration = first_stage_confidence(config, ranking)
        decisions = {"confidence": calibration, **decision_support(calibrator, config),
                     "conventions": conventions}
        ranking, decisions["local_names"] = with_local_names(ranking, config)
        return cls(config, ranking, calibrator, decisions,
                   CrossEncoder.load(config.rerank, config.encoder.device) if config.rerank else None,
                   Hierarchy.of(ranking.vocab) if calibrator is not None else None,
                   second_stage=stage, language=language)

    # What the ranking loaded, under the names the engines and the run sheet read.
    vocab = property(lambda self: self.ranking.vocab)
    encoder = property(lambda self: self.ranking.encoder)
    index = property(lambda self: self.ranking.index)
    lexical = property(lambda self: self.ranking.lexical)
    scorers = property(lambda self: self.ranking.scorers)
    rank = property(lambda self: self.ranking.settings)
    target_lang = property(lambda self: self.ranking.target_lang)
    domain = property(lambda self: self.ranking.target.kind)
    timings = property(lambda self: self.ranking.timings)

    @functools.cached_property
    def known_names(self) -> frozenset:
        """The target's names, case-folded: a header cell that is one reads like data."""
        return frozenset(self.vocab.names["name"].str.casefold())

    def is_target_name(self, text: str) -> bool:
        return text.casefold() in self.known_names

    def map_block(self, source: SourceTable) -> pd.DataFrame:
        """Candidates in long form for every row of `source` (see `MapResult.candidates`)."""
        rows, queries = self.ranking.embed(row_fields(source), source.query_texts)
        if isinstance(self.calibrator, LearnedRanker):
            found = self._rank_learned(queries, rows)
        else:
            found = self.ranking.rank(queries, rows, hub=self.hub)
        if self.second_stage is not None:
            found = self.second_stage.reorder(found, rows, self.ranking, self.config.rank.top_k)
        if self.calibrator is not None and "confidence" not in found:
            found.insert(found.columns.get_loc("score") + 1, "confidence",
                         self.calibrator.predict(found).round(4))
        if self.reranker is not None:
            found = rerank_candidates(found, [self.ranking.prepare(t) for t in source.query_texts],
                                      self.reranker, self.rank.rerank_top)
        candidates = _join_source(source, source.texts, found)
        candidates["explanation"] = read_as_notes(
            candidates["source_text"], candidates["explanation"],
            both_readings(self.ranking.prepare, self.ranking.reader))
        if self.config.memory is not None:
            candidates, _ = prefill(candidates, self.vocab, self.config.memory,
                                    self.config.site, source.path)
        # Confidence, uphill proposals and suggestions need only each row's own candidates, so
        # they are made here, per block, and kept in the block parts.
        if self.calibrator is not None:
            candidates = propose_broader(candidates, self.hierarchy, self.config.broader_below)
            candidates = suggest(candidates, self.decisions["no_match_below"],
                                 self.decisions["_threshold"], self.config.auto_accept)
        if self.config.llm is not None:
            candidates = select_with_llm(candidates, self.config.llm)
        return candidates

    def _rank_learned(self, vectors: np.ndarray, rows: list[dict]) -> pd.DataFrame:
        """The learned ranking's top_k per row with its confidence, in HYBRID_COLUMNS + confidence."""
        lang = self.config.source_lang or ""
        table = pool(self._target(), Queries(rows, vectors, langs=[lang] * len(rows)),
                     self.scorers, self.rank)
        found = self.calibrator.rank(table, self.rank.top_k)
        return found[[*HYBRID_COLUMNS[:6], "confidence", *HYBRID_COLUMNS[6:]]]

    def _target(self) -> Target:
        return _learned_target(self.ranking)

    def for_source_lang(self, lang: str | None) -> "Mapper":
        """This Mapper, sharing what it loaded, for a list in `lang` (the fusion weight depends
        on the pair of languages): an engine mapping several lists at once uses one per list."""
        ranking = self.ranking.for_language(lang or "", self.config.rank)
        calibrator = self.calibrator
        if isinstance(calibrator, LearnedRanker):  # the scorer set may differ: its own ranker
            calibrator = learned_ranker(_learned_target(ranking), ranking.scorers,
                                        ranking.settings)
        return replace(self, config=replace(self.config, source_lang=lang), ranking=ranking,
                       calibrator=calibrator)

    def for_list(self, query_texts: list[str]) -> "Mapper":
        """This Mapper for a list whose rows read `query_texts` (SourceTable.query_texts, the
        whole list's or `codemap.rank.hubness.reference_texts` of them): its hubness."""
        if not self.rank.hubness or self.rank.method == "lexical":
            return replace(self, hub=None)
        return replace(self, hub=self.ranking.hubness(query_texts))

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
            "model_languages": "many" if info.multilingual() else "English",
            "model_path": str(info.path),
            "backend": f"{self.encoder.variant} on {self.encoder.provider} "
                       f"(--backend {self.config.encoder.backend})",
            "pooling": info.pooling.value,
            "max_length": info.max_length,
            "top_k": self.config.rank.top_k,
            "ranking": (("learned over " if isinstance(self.calibrator, LearnedRanker) else "")
                        + f"{self.rank.method} ({self.rank.fusion}, encoder weight "
                        f"{self.rank.encoder_weight}), evidence: "
                        f"{', '.join(s.name for s in self.scorers) or 'none'}"),
            # What the list reports where a row states no unit or method (--unit-system,
            # --methods; else what the site's approvals said: the `conventions` line).
            "unit_system": self.config.rank.unit_system or "us",
            "methods": self.config.rank.methods or "usual",
            "target_language": self.target_lang or "unknown",
            "reranker": (f"{self.reranker.folder} (top {self.rank.rerank_top})"
                         if self.reranker is not None else "off"),
            "second_stage": (f"on: top {self.second_stage.candidates} first-stage candidates "
                             f"re-read, {self.config.rank.top_k} kept"
                             if self.second_stage is not None else "off"),
            "index_cache": ("hit" if self.index.cache_hit else
                            "shipped with codemap" if getattr(self.index, "shipped", False) else "built"),
            "index_kind": (self.index.describe() if hasattr(self.index, "describe") else
                           "approximate (IVF)" if self.index.approximate else "exact"),
            "index_choice": self.ranking.index_choice,
            "index_folder": str(self.index.folder),
            **{k: v for k, v in self.decisions.items() if not k.startswith("_")},
        }


def map_codes(config: MapConfig) -> MapResult:
    """Map every row of `config.source` onto `config.target` in one block; see MapResult.
    (`map_to_file` maps a list of any length block by block and writes it.)

    Raises CodemapError for unreadable input, unknown targets or models.
    """
    clock = time.perf_counter()
    source = read_code_list(config.source, config.read)
    t_read = time.perf_counter()
    texts = source.texts
    mapper = Mapper.load(config, texts).for_list(source.query_texts)
    config, language = mapper.config, mapper.language
    warn_data_like_header(source, mapper.is_target_name)
    t_loaded = time.perf_counter()
    candidates = mapper.map_block(source)
    t_rank = time.perf_counter()
    timings = {"read": t_read - clock, "load_model": mapper.timings["load_model"],
               "index": t_loaded - t_read - mapper.timings["load_model"],
               "map": t_rank - t_loaded, "total": t_rank - clock}
    run = _run_sheet(config, source, mapper, language, len(texts), sum(1 for t in texts if not t))
    run.update(_counts_for_run(config, _block_counts(candidates)))
    return MapResult(candidates, source, mapper.vocab, mapper.encoder.info.id, run, timings, language,
                     dict(tally(candidates)))


def map_to_file(config: MapConfig, output: Path, block_rows: int = BLOCK_ROWS) -> MapResult:
    """Map `config.source` block by block and write the candidates to `output` (.xlsx, .csv,
    .tsv or .parquet), holding one block at a time.

    Each finished block is kept (parts.PartsFolder.beside) until the output is written, so a run that is
    killed resumes after its finished blocks. The returned MapResult's `candidates` holds only the
    rank-1 rows' source_row, rank and score (for the summary), `source` the first block. A .xlsx
    output that would pass a sheet's row limit fails as soon as the limit is passed.

    Raises CodemapError as map_codes does, and for an unknown output type.
    """
    clock = time.perf_counter()
    output = check_output(output)
    blocks = iter_code_list(config.source, config.read, block_rows)
    first = next(blocks)  # an unreadable list fails here, before the model is loaded
    second = next(blocks, None)
    t_read = time.perf_counter()
    mapper = Mapper.load(config, first.texts)  # the language from the first block
    config, language = mapper.config, mapper.language
    mapper = mapper.for_list(first.query_texts if second is None else list_reference(config, block_rows))
    warn_data_like_header(first, mapper.is_target_name)
    t_loaded = time.perf_counter()
    parts = PartsFolder.beside(output, _run_key(config, mapper, block_rows))
    if parts.parts:
        log.info("resuming %s: %d blocks already mapped", output, len(parts.parts))
    if not parts.parts and config.llm is not None:
        config.llm.log.unlink(missing_ok=True)  # a fresh run's log; a resumed one appends
    rows_read = rows_empty = written = 0
    top, tiers, counts = [], Counter(), Counter()
    summary_columns = _summary_columns(config, mapper)
    for block in itertools.chain([first], [second] if second is not None else [], blocks):
        texts = block.texts
        rows_read, rows_empty = rows_read + len(texts), rows_empty + texts.count("")
        name = part_name(0, config.source, block.first_row)
        if not parts.finished(name):
            parts.add(name, mapper.map_block(block), {"rows": len(texts)})
        written += parts.parts[name]["candidates"]
        if output.suffix.lower() == ".xlsx" and written + 1 > EXCEL_MAX_ROWS:
            raise CodemapError(f"{output}: more than {EXCEL_MAX_ROWS:,} candidate rows do not fit "
                               f"one sheet of the review workbook; write {output.stem}.csv or "
                               f"{output.stem}.parquet instead (the blocks mapped so far are kept)")
        # The whole-list figures are added up part by part, so memory stays one block's.
        kept = parts.read(name, summary_columns)
        top.append(kept[kept["rank"] == 1][["source_row", "rank", "score"]])
        tiers.update(tally(kept))
        counts.update(_block_counts(kept))
    t_mapped = time.perf_counter()
    run = _run_sheet(config, first, mapper, language, rows_read, rows_empty)
    run.update(_counts_for_run(config, counts))
    run["block_rows"] = block_rows
    write_candidate_parts(parts, output, run)
    parts.remove()
    done = time.perf_counter()
    timings = {"read": t_read - clock, "load_model": mapper.timings["load_model"],
               "index": t_loaded - t_read - mapper.timings["load_model"],
               "map": t_mapped - t_loaded, "total": t_mapped - clock, "write": done - t_mapped}
    return MapResult(pd.concat(top, ignore_index=True), first, mapper.vocab,
                     mapper.encoder.info.id, run, timings, language, dict(tiers))


def list_reference(config: MapConfig, block_rows: int = BLOCK_ROWS) -> list[str]:
    """The rows that stand for a list longer than one block in its hubness
    (codemap.rank.hubness.reference_texts of all its query texts): one more pass over the file."""
    texts = []
    for block in iter_code_list(config.source, config.read, block_rows):
        texts.extend(reference_texts(block.query_texts, limit=len(block.frame)))  # distinct
    return reference_texts(texts)


def _run_key(config: MapConfig, mapper: Mapper, block_rows: int) -> str:
    """What a streamed run's blocks depend on: the source file, every setting (calibration,
    --auto-accept, --broader-below… included), the model and the vocabulary (the index folder is
    named by both), the calibration's content, the mapping memory's state."""
    source = Path(config.source).resolve()
    stat = source.stat()
    memory = (Path(config.memory).stat().st_mtime_ns
              if config.memory is not None and Path(config.memory).exists() else None)
    return sha256_text(__version__, str(source), str(stat.st_size), str(stat.st_mtime_ns),
                       repr(replace(config, progress=False)), mapper.index.folder.name,
                       calibration_fingerprint(config.calibration), str(memory), str(block_rows))


def _summary_columns(config: MapConfig, mapper: Mapper) -> list[str]:
    """The columns of a part that the summary and the run sheet's counts read."""
    columns = ["source_row", "rank", "score"]
    if config.memory is not None:
        columns.append(MEMORY_COLUMN)
    if mapper.calibrator is not None:
        columns += ["suggestion", "explanation"]
    if config.llm is not None:
        columns.append("llm")
    return columns


def _block_counts(candidates: pd.DataFrame) -> Counter:
    """Sources of one block remembered, proposed a broader concept, answered by the LLM."""
    marked = {}
    if MEMORY_COLUMN in candidates:
        marked["memory_sources"] = candidates[MEMORY_COLUMN] != ""
    if "suggestion" in candidates:  # decision support ran, so uphill proposals were looked for
        marked["broader_proposals"] = candidates["explanation"].fillna("").str.startswith(BROADER_NOTE)
    if "llm" in candidates:
        marked["llm_answered"] = candidates["llm"] != ""
    return Counter({name: int(rows.groupby(candidates["source_row"]).any().sum())
                    for name, rows in marked.items()})


def _counts_for_run(config: MapConfig, counts: Counter) -> dict:
    """The run sheet's counts from the blocks' `_block_counts`."""
    run = {}
    if config.memory is not None:
        run.update(memory=str(config.memory), memory_sources=counts["memory_sources"])
    if "broader_proposals" in counts:
        run["broader_proposals"] = counts["broader_proposals"]
    if config.llm is not None:
        run["llm"] = (f"{config.llm.url} ({config.llm.model}): {counts['llm_answered']} sources "
                      f"answered, log {config.llm.log}")
    return run


def _run_sheet(config: MapConfig, source: SourceTable, mapper: Mapper, language: LanguageGuess,
               rows_read: int, rows_empty: int) -> dict:
    """The run sheet: resolved settings and counts, so any result can be reproduced."""
    return {
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
        "rows_read": rows_read,
        "rows_empty": rows_empty,
    }


def _learned_target(ranking: Ranking) -> Target:
    """The learned ranker's view of a ranking (codemap.rank.learned.Target)."""
    return Target(ranking.vocab, ranking.encoder, ranking.index, ranking.lexical,
                  ranking.target_lang, ranking.cache_dir)


def second_stage_for(config: MapConfig, ranking: Ranking) -> SecondStage | None:
    """The shipped second stage, when the run uses it: asked for (the default), no calibration
    or learned ranking of the first stage asked for instead, fitted over this run's model and
    adopted for its kind of target; None otherwise (the run sheet says which ran)."""
    if not config.second_stage or config.calibration is not None or config.rank.learned:
        return None
    return SecondStage.shipped_for(ranking.encoder.info.key(), ranking.target.kind,
                                   config.cache_dir)


def first_stage_confidence(config: MapConfig, ranking: Ranking) -> tuple[object | None, str]:
    """The first stage's confidence model and its description: the learned ranker when asked
    for, else a calibration fitted on dev pairs for this model and ranking (given or shipped),
    else one fitted on the target's pseudo-queries (decide.pseudo_calibration)."""
    rank, scorers = ranking.settings, ranking.scorers
    calibrator = learned_ranker(_learned_target(ranking), scorers, rank)
    if calibrator is not None:
        return calibrator, calibrator.describe()
    key = ranking_key(rank, scorers)
    return any_calibrator(_learned_target(ranking), scorers, rank, ranking, ranking.target.kind,
                          key, choose_calibrator(config.calibration, ranking.encoder.info.key(),
                                                 ranking.target.kind, key))


def learned_ranker(target: Target, scorers, rank: RankConfig) -> LearnedRanker | None:
    """The target's learned ranker (fitted on its pseudo-queries once, then cached), or None
    when the ranking is not the learned hybrid one (`--learned-ranking`, off by default)."""
    if not rank.learned or rank.method != "hybrid":
        return None
    return load_or_fit(target, scorers, rank)


def with_conventions(ranking: Ranking, config: MapConfig) -> tuple[Ranking, MapConfig, str]:
    """The ranking and config with what the site's approvals in the memory settle of the list's
    conventions (a lab's unit system and methods: codemap.domains.lab.conventions) where the
    user stated none, and what the run sheet says of them
    (benchmarks/results/site-conventions/RULE.md)."""
    if config.memory is None or not Path(config.memory).exists():
        return ranking, config, "none"
    site, approved = site_approvals(config.memory, ranking.vocab.id, config.site, config.source)
    if not approved:
        return ranking, config, "none: no approvals of this list's site in the memory"
    learned, said = ranking.target.conventions(approved)
    unstated = {axis: value for axis, value in learned.items() if not getattr(config.rank, axis)}
    said = f"from site {site}'s {len(approved)} approvals: {said}"
    if learned.keys() - unstated.keys():
        said += f" (stated: {', '.join(sorted(learned.keys() - unstated.keys()))} as given)"
    if not unstated:
        return ranking, config, said
    return (ranking.with_settings(replace(ranking.settings, **unstated)),
            replace(config, rank=replace(config.rank, **unstated)), said)


def with_local_names(ranking: Ranking, config: MapConfig) -> tuple[Ranking, str]:
    """The ranking with the memory's approved texts as local names of their concepts (those
    whose concept this release still has, valid), and what the run sheet says of them."""
    if config.memory is None or not config.local_names or not Path(config.memory).exists():
        return ranking, ("off (--local-names to rank with them)"
                         if config.memory is not None and not config.local_names else "none")
    with MappingMemory(config.memory) as memory:
        names, flagged = memory.local_names(ranking.vocab.id).usable(ranking.vocab)
    said = (f"{len(names)} approved texts from {len(names.sites)} site(s) "
            f"({', '.join(names.sites[:5])}{', …' if len(names.sites) > 5 else ''}), "
            f"{len(names.rejected)} rejected pairs") if len(names) or len(names.rejected) else "none"
    if len(flagged):
        said += (f"; {len(flagged)} not used, their concept deprecated or gone: "
                 + "; ".join(f"'{r.name}' → {r.code} ({r.problem})"
                             for r in flagged.head(3).itertuples()) + ("; …" if len(flagged) > 3 else ""))
    return ranking.with_local_names(names), said


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
    if config.auto_accept is not None and calibrator.fitted_on.get("pseudo_queries"):
        # Its precision curve is measured on the target's own names, not on a real list: no
        # row is approved on it.
        raise CodemapError("--auto-accept needs a confidence calibration fitted on dev pairs; "
                           "this model and target have only one fitted on pseudo-queries: fit "
                           "one with `codemap calibrate` and pass --calibration")
    below = calibrator.no_match_below if config.no_match_below is None else config.no_match_below
    out = {"no_match_below": below, "broader_below": config.broader_below, "_threshold": None}
    # A confidence fitted on real lists suggests pre-approval at `suggest_at` by itself; one
    # fitted on the target's own names only when asked (--auto-accept, refused above).
    precision = preapproval_precision(calibrator, config.suggest_at, config.auto_accept)
    if precision is not None:
        threshold = calibrator.threshold_for(precision)
        out["_threshold"] = threshold
        said = (f"top-1 precision {precision:g} held out: confidence ≥ {threshold:.4f}"
                if threshold is not None else
                f"top-1 precision {precision:g} not reached at any threshold, nothing suggested")
        out["auto_accept" if config.auto_accept is not None else "pre_approve"] = said
    return out


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
