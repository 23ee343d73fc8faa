"""The index of a large target in two stages: pool with fast scores, embed only what was pooled.

Above IndexConfig.two_stage_above names, a target is not embedded whole before the first row is
mapped. Each row's pool is the union of its nearest names by a static embedding distilled from
the encoder (codemap.embed.static) and by the lexical index, and, where the target's domain
has analytes (LOINC components), every code of the row's best analytes (codemap.rank.analytes:
at a million names the nearest names are crowded by near-copies); rank_hybrid's pooled path then
scores every name of the pooled concepts with the encoder, whose vectors are embedded when first
asked for and kept (codemap.embed.lazy_vectors). A gold code outside the pool is missed: the
pool's recall is what benchmarks/speed/two_stage.py reports beside acc@1 against the full index.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import faiss
import numpy as np

from ..embed.encoder import Encoder
from ..config import IndexConfig
from ..embed.index import index_folder, is_built
from ..embed.lazy_vectors import LazyVectors
from ..embed.static import StaticEmbedder
from ..files import atomic_path, build_once
from ..vocab.vocabulary import Vocabulary
from .analytes import AnalyteIndex

# Names each stage pools per row, at most: the encoder embeds every name of the pooled concepts,
# so the pool, not the target, sets what a list costs (benchmarks/speed/two_stage.py: recall).
POOL_NAMES = 100
LEXICAL_AT_ONCE = 32  # rows whose n-gram scores against every name are held at once (128 MB at 1M names)


def pools_by_size(vocab: Vocabulary, config: IndexConfig, crossing: bool = False,
                  analytes: bool = False) -> bool:
    """Whether `vocab` takes the two stages unless a full index of it was built ahead: more
    names than config.two_stage_above, and a list in a language its names are written in or a
    target whose analytes the model searches (`analytes`; see two_stages)."""
    return len(vocab.names) > config.two_stage_above and (not crossing or analytes)


def two_stages(vocab: Vocabulary, encoder: Encoder, cache_dir: Path, config: IndexConfig,
               crossing: bool = False, analytes: bool = False) -> bool:
    """Whether `vocab` is indexed in two stages: more names than config.two_stage_above, no index
    of every name built ahead (`codemap vocab embed --two-stage-above` above its size), and a
    list in a language the target's names are written in (`crossing` False), unless the target
    has analytes. The first stage pools by spelling and by static token vectors, and neither
    crosses languages: 300 German ICD-10-GM titles onto ICD-10-CM lost 11 points of acc@1 to the
    full index in two stages (issue #53), so such a list gets every name embedded. The analyte
    search (codemap.rank.analytes) is the model's and crosses them: German and Dutch lab names
    onto an English-only LOINC table rank as well in two stages as on the full index, in less
    time (benchmarks/results/cross-language-scale/RULE-crossing-analytes.md)."""
    return pools_by_size(vocab, config, crossing, analytes) and not is_built(cache_dir, vocab, encoder)


def index_choice(vocab: Vocabulary, config: IndexConfig, crossing: bool, two: bool) -> str:
    """Which index a run reads and why, for the run sheet and summary."""
    if two:
        why = ("; the list is in another language than the target's names, whose analytes the "
               "model searches" if crossing else "")
        return (f"two stages: {len(vocab.names):,} names, more than --two-stage-above "
                f"{config.two_stage_above:,}{why}")
    if crossing and len(vocab.names) > config.two_stage_above:
        return ("every name embedded: the list is in another language than the target's names, "
                "and the two stages' first one pools by spelling")
    return "every name embedded"


@dataclass
class TwoStageIndex:
    """What rank_hybrid reads of a name index (`approximate`, `search`, `vectors`), in two stages."""

    vectors: LazyVectors
    static: StaticEmbedder
    static_index: faiss.Index  # the names' static vectors (float16 inner product)
    lexical: object  # codemap.rank.lexical.LexicalIndex
    folder: Path
    cache_hit: bool
    build_seconds: float
    approximate: bool = True  # rank_hybrid scores each row's pool only
    progress: bool = False
    _analytes: AnalyteIndex | None = None

    @staticmethod
    def load(vocab: Vocabulary, encoder: Encoder, lexical, cache_dir: Path,
             progress: bool = False) -> "TwoStageIndex":
        started = time.perf_counter()
        folder = index_folder(cache_dir, vocab, encoder) / "two-stage"
        names = vocab.names["name"].tolist()
        # Both stages' files are derived from (vocabulary, model), which key the folder: a warm
        # load reads them and tokenises nothing but the rows.
        path = folder / "static.faiss"

        def cached():
            static = StaticEmbedder.load(encoder, folder / "static.npz")
            return (static, faiss.read_index(str(path)), True) if static is not None and path.exists() else None

        def build():
            static = StaticEmbedder.load(encoder, folder / "static.npz")
            if static is None:
                static = StaticEmbedder.distill(encoder, names, cache_dir, progress)
                folder.mkdir(parents=True, exist_ok=True)
                static.save(folder / "static.npz")
            static_index = faiss.IndexScalarQuantizer(static.vectors.shape[1],
                                                      faiss.ScalarQuantizer.QT_fp16,
                                                      faiss.METRIC_INNER_PRODUCT)
            static_index.add(static.embed(names))
            with atomic_path(path) as tmp:
                faiss.write_index(static_index, str(tmp))
            return static, static_index, False

        static, static_index, cache_hit = build_once(
            path, cached, build, f"building the first stage of {vocab.id}")
        return TwoStageIndex(LazyVectors(folder / "vectors", names, encoder), static, static_index,
                             lexical, folder, cache_hit, time.perf_counter() - started,
                             progress=progress)

    def analytes(self, keys: list[str]) -> AnalyteIndex:
        """The target's analytes `keys` as a search of their own (codemap.rank.analytes),
        embedded by the model once and kept beside the two stages."""
        if self._analytes is None or self._analytes.keys != keys:
            self._analytes = AnalyteIndex.load(keys, self.vectors.encoder, self.folder, self.progress)
        return self._analytes

    def search(self, queries: np.ndarray, k: int, texts: list[str] | None = None):
        """Per row, up to 2k name rows: its k nearest by the static embedding and its k best by
        the lexical index (-1 pads); scores are not comparable across the two and are None."""
        if texts is None:
            raise ValueError("the two-stage index pools by the rows' texts")
        k = min(k, POOL_NAMES, len(self.vectors))
        _, static_hits = self.static_index.search(self.static.embed(texts), k)
        lexical_hits = np.concatenate([self._lexical_top(texts[s:s + LEXICAL_AT_ONCE], k)
                                       for s in range(0, len(texts), LEXICAL_AT_ONCE)])
        return None, np.hstack([static_hits, lexical_hits])

    def _lexical_top(self, texts: list[str], k: int) -> np.ndarray:
        scores = self.lexical.similarity(texts)
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        return np.where(np.take_along_axis(scores, top, axis=1) > 0, top, -1)

    def describe(self) -> str:
        return (f"two-stage: static + lexical pool, {self.vectors.embedded:,} of "
                f"{len(self.vectors):,} names embedded by the model so far")
