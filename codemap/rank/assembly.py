"""The one pipeline assembly: (target, model, settings, a list's texts) → a prepared ranking that
ranks any rows of that list. `codemap map` (engines.local.Mapper), `codemap eval` and `codemap
calibrate` (evaluate.gold.GoldQueries), the learned ranker and the second stage's training all
build their ranking here, so they cannot drift apart.

Loading a Ranking: the target vocabulary (a file, a store name or a built-in), its domain asked
once and the vocabulary prepared by it (codemap.domains.prepare_target), the list's language
(detected from its texts unless given: the target must be known first, since its domain says
which words carry no language), the model, the name index and the lexical index (built and
cached on first use), and the ranking settings for that pair of languages (prepare.ranking_for).
`with_settings` gives the same ranking under other settings (eval's side-by-side methods);
`with_local_names` adds the texts reviewers approved as names of their concepts (`map --memory`);
`embed` prepares rows (texts, second readings, vectors) and `rank` ranks them.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import EncoderConfig, IndexConfig, RankConfig, VocabFilter
from ..domains import PreparedTarget, prepare_target
from ..domains.evidence import family_of
from ..embed.encoder import Encoder
from ..embed.index import load_or_build_index
from ..embed.name_encoder import describe as describe_names, name_encoder
from ..read.language import LanguageGuess, names_language, source_language
from ..read.normalize import source_key
from ..vocab.local_names import LocalNames
from ..vocab.target import load_target
from .hubness import list_hubness
from .hybrid import rank_hybrid
from .lexical import load_or_build_lexical
from .local_names import LocalIndex
from .two_stage import TwoStageIndex, index_choice, pools_by_size, two_stages
from .prepare import language_free_words, ranking_for, second_reader, text_expander, with_readings

# Texts whose vectors a ranking keeps for the rest of the process: a list's hubness reference
# (codemap.rank.hubness) is its distinct rows, embedded again when the rows are ranked.
KEPT_TEXTS = 20_000


@dataclass
class Ranking:
    """A prepared target, a model and ranking settings, loaded once (see the module docstring)."""

    target: PreparedTarget
    encoder: Encoder
    index: object  # codemap.embed.index.NameIndex
    settings: RankConfig  # the asked settings, for this pair of languages (ranking_for)
    target_lang: str
    cache_dir: Path
    progress: bool = False
    timings: dict = field(default_factory=dict)
    index_choice: str = ""  # which index was read, and why (two_stage.index_choice)
    _lexical: object | None = None
    local: LocalIndex | None = None  # approved local names (with_local_names)
    # text → vector, shared by every settings of this ranking (same encoder); see KEPT_TEXTS
    _kept: dict = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, target: str, settings: RankConfig = RankConfig(), *,
             vocab_filter: VocabFilter = VocabFilter(), store_dir: Path | None = None,
             encoder: EncoderConfig = EncoderConfig(), cache_dir: Path,
             index_config: IndexConfig = IndexConfig(), texts: list[str] | None = None,
             source_lang: str | None = None,
             progress: bool = False) -> tuple["Ranking", LanguageGuess]:
        """The ranking of a list against `target` (`texts`: the list's, to detect its language
        unless `source_lang` is given), and the list's language."""
        clock = time.perf_counter()
        prepared = prepare_target(load_target(target, vocab_filter,
                                              store_dir or Path(cache_dir) / "store"))
        language = source_language(texts or [], source_lang, language_free_words(prepared))
        lang = language.lang if language.method != "uncertain" else ""
        t_target = time.perf_counter()
        model = Encoder.load(encoder, cache_dir, progress=progress)
        t_model = time.perf_counter()
        lexical = None
        names = prepared.vocab.names
        target_lang = names_language(names["name"].tolist(), names["lang"].tolist(), lang)
        crossing = bool(lang and target_lang and lang != target_lang)
        # A full index of a large target is embedded by the cheaper name encoder; two stages embed
        # their few pooled names with the model itself (as measured when they were adopted), and
        # ask for the name encoder only to find a full index built ahead with it.
        # Whether the target's analytes are searched (by the model): asked only of a crossing
        # list, the one case where it decides the index.
        analytes = crossing and family_of(prepared.scorers(settings)) is not None
        names_model = name_encoder(model, len(names), index_config, cache_dir, progress,
                                   made_only=pools_by_size(prepared.vocab, index_config, crossing, analytes))
        two = two_stages(prepared.vocab, names_model, cache_dir, index_config, crossing, analytes)
        if two:
            names_model = model
            lexical = load_or_build_lexical(prepared.vocab, cache_dir)
            index = TwoStageIndex.load(prepared.vocab, model, lexical, cache_dir, progress)
        else:
            index = load_or_build_index(prepared.vocab, names_model, cache_dir, progress=progress,
                                        index_config=index_config)
        ranking = cls(prepared, model, index, settings, target_lang, Path(cache_dir), progress,
                      _lexical=lexical)
        ranking = ranking.for_language(lang)
        ranking.lexical  # built with the index, so the timings say what a run loads
        ranking.timings = {"load_target": t_target - clock, "load_model": t_model - t_target,
                           "index": time.perf_counter() - t_model}
        ranking.index_choice = "; ".join(filter(None, (
            index_choice(prepared.vocab, index_config, crossing, two), describe_names(model, names_model))))
        return ranking, language

    def for_language(self, lang: str, settings: RankConfig | None = None) -> "Ranking":
        """This ranking for a list in `lang` ("" unknown): the fusion weight and the readings
        depend on the pair of languages (prepare.ranking_for)."""
        asked = self.settings if settings is None else settings
        return self.with_settings(ranking_for(asked, self.target.kind, self.encoder.info, lang,
                                              self.target_lang))

    def with_settings(self, settings: RankConfig) -> "Ranking":
        """The same target, model and indexes under other (already language-resolved) settings."""
        return replace(self, settings=settings, _lexical=self._lexical)

    def with_local_names(self, names: LocalNames) -> "Ranking":
        """This ranking with `names` (codemap.vocab.local_names, usable in this target) scored
        as names of their concepts and their known negatives ranked last; the target's index is
        untouched. Prepared with this ranking's text preparation: set the settings first."""
        if not len(names) and names.rejected.empty:
            return replace(self, local=None)
        # The n-gram index says which local names are near a row, whatever the ranking method.
        lexical = self._lexical or load_or_build_lexical(self.vocab, self.cache_dir)
        return replace(self, local=LocalIndex.build(names, self.prepare, self.encoder, lexical,
                                                    self.cache_dir))

    @property
    def vocab(self):
        return self.target.vocab

    @property
    def lexical(self):
        """The lexical index (None for the encoder-only ranking), built or loaded when first
        asked for and shared by every settings of this ranking."""
        if self._lexical is None and self.settings.method != "encoder":
            self._lexical = load_or_build_lexical(self.vocab, self.cache_dir)
        return self._lexical

    @functools.cached_property
    def scorers(self) -> list:
        return self.target.scorers(self.settings)

    @functools.cached_property
    def prepare(self):
        """How a source text is prepared (prepare.text_expander); built once, it reads the
        whole target."""
        return text_expander(self.target, self.settings)

    @functools.cached_property
    def reader(self):
        """The second reading of prepared texts (prepare.second_reader), or None."""
        return second_reader(self.target, self.settings)

    def encode(self, texts: list[str], desc: str = "embedding source") -> np.ndarray:
        """The encoder's vectors of `texts`; a text this ranking embedded before is not embedded
        again while KEPT_TEXTS are kept."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._kept))
        fresh = dict(zip(missing, self.encoder.encode(missing, progress=self.progress, desc=desc)
                         if missing else []))
        if len(self._kept) + len(fresh) <= KEPT_TEXTS:
            self._kept.update(fresh)
        if not texts:
            return np.zeros((0, self.encoder.dim), np.float32)
        return np.stack([fresh[t] if t in fresh else self._kept[t] for t in texts])

    def hubness(self, texts: list[str]):
        """The hubness of the target's concepts for a list whose rows read `texts` (what is
        embedded of each row, as read: the whole list's, or reference_texts of them), or None
        for a list without text: one computation for `map` and for `eval`."""
        encode = lambda chosen: self.encode([self.prepare(t) for t in chosen],
                                            "embedding the list's reference rows")
        return list_hubness(self.index, self.vocab, encode, texts)

    def embed(self, rows: list[dict], texts: list[str]) -> tuple[list[dict], np.ndarray]:
        """`rows` (each row's fields: text, unit, specimen…) with their text prepared and their
        second reading, and the vectors of `texts` (what is embedded of each row: its text, with
        its specimen where the list has a specimen column), prepared the same way."""
        texts = [self.prepare(t) for t in texts]
        vectors = self.encode(texts)
        rows = [{**row, "text": self.prepare(row["text"]), "key": source_key(row["text"])}
                for row in rows]
        return with_readings(rows, texts, self.reader,
                             lambda read: self.encode(read, "embedding second readings")), vectors

    def rank(self, vectors: np.ndarray, rows: list[dict], *, hub=None,
             exclude: list | None = None) -> pd.DataFrame:
        """rank_hybrid's candidates of embedded rows (`embed`)."""
        return rank_hybrid(self.index, self.lexical, self.vocab, vectors, rows, self.scorers,
                           self.settings, exclude=exclude, progress=self.progress, hub=hub,
                           local=self.local)
