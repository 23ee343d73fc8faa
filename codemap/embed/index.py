"""The embedding index of a vocabulary's names: built once, kept on disk, searched with FAISS.

The cache folder is keyed by the model's fingerprint and the vocabulary's content hash, so a second
run against the same target re-embeds nothing, and a retrained model or a new release gets its
own index. Names are embedded in chunks that are saved as they finish: a build that is killed
resumes from the last finished chunk.

A built-in target's vectors for the shipped default model come with the package (a seed, float16,
codemap/data/index/, written by recipes/build_index_seed.py): the README's first run then embeds
no target names. A seed is used only after a sample of its names, embedded by the model actually
loaded, agrees with it (cosine ≥ SEED_AGREEMENT): another runtime, an int8 variant or a changed
adapter embeds the names itself.
"""
from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import faiss
import numpy as np

from ..config import IndexConfig
from ..files import atomic_path, build_once, locked, sha256_file, sha256_text
from ..vocab.vocabulary import Vocabulary
from .encoder import Encoder

log = logging.getLogger(__name__)

INDEX_FORMAT = 1
CHUNK_NAMES = 8192  # names per saved chunk: small enough to lose little on a kill
SEEDS = Path(__file__).resolve().parents[1] / "data" / "index"
SEED_SAMPLE = 32  # names re-embedded to check a seed: a fraction of a second
SEED_AGREEMENT = 0.999  # float16 storage and ONNX vs torch differ by < 1e-3; int8 by ~1e-2


@dataclass
class NameIndex:
    """Vectors of a vocabulary's names (row i = vocab.names row i) and a FAISS index over them."""

    vectors: np.ndarray
    faiss_index: faiss.Index
    folder: Path
    cache_hit: bool
    build_seconds: float
    shipped: bool = False  # the vectors came with the package (a seed), checked, not embedded

    @property
    def approximate(self) -> bool:
        """An IVF index: candidates come from its search, not from scoring every name."""
        return isinstance(self.faiss_index, faiss.IndexIVF)

    def search(self, queries: np.ndarray, k: int,
               texts: list[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-k names per query by inner product: (scores, name row numbers), -1 where fewer.
        (`texts`, the queries' texts, are what a two-stage index pools by; unused here.)"""
        k = min(k, self.faiss_index.ntotal)
        return self.faiss_index.search(np.ascontiguousarray(queries, dtype=np.float32), k)


def index_key(encoder: Encoder, vocab: Vocabulary) -> str:
    # The variant keeps torch, ONNX fp32 and int8 vectors apart even when one export folder
    # holds several precisions (the fingerprint hashes all its weight files).
    return sha256_text(str(INDEX_FORMAT), encoder.info.fingerprint(), encoder.variant,
                       vocab.content_hash)[:24]


def index_folder(cache_dir: Path, vocab: Vocabulary, encoder: Encoder) -> Path:
    """The cache folder of (model, runtime, vocabulary): its manifest.json says the build is complete."""
    return Path(cache_dir) / "index" / f"{vocab.id}-{index_key(encoder, vocab)}"


def is_built(cache_dir: Path, vocab: Vocabulary, encoder: Encoder) -> bool:
    """Whether every name of (model, vocabulary) is embedded and cached (`codemap vocab embed`)."""
    return (index_folder(cache_dir, vocab, encoder) / "manifest.json").exists()


def chunk_path(folder: Path, number: int) -> Path:
    """Where chunk `number` (names number·CHUNK_NAMES onwards) of a build in progress is saved;
    `codemap.engines.ray` writes the same files from its workers."""
    return folder / "chunks" / f"{number:06d}.npy"


def save_array(path: Path, array: np.ndarray) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as handle:
            np.save(handle, array)


def load_or_build_index(vocab: Vocabulary, encoder: Encoder, cache_dir: Path, *,
                        progress: bool = False, index_config: IndexConfig = IndexConfig()) -> NameIndex:
    """Load the cached vectors for (model, vocabulary) or embed them, resuming finished chunks,
    and build the FAISS index `index_config` asks for."""
    folder = index_folder(cache_dir, vocab, encoder)
    started = time.perf_counter()
    vectors = _load_cached(folder, len(vocab.names), encoder.dim)
    cache_hit, shipped = vectors is not None, False
    if vectors is None:
        with locked(folder, f"embedding the names of {vocab.id}"):
            # Asked again under the lock: a process that waited uses the build it waited for.
            vectors = _load_cached(folder, len(vocab.names), encoder.dim)
            cache_hit = vectors is not None
            if vectors is None:
                (folder / "manifest.json").unlink(missing_ok=True)  # stale: rebuilt below
                vectors = seeded_vectors(vocab, encoder)
                shipped = vectors is not None
                if shipped:
                    _save_complete(folder, vocab, encoder, vectors)
                else:
                    vectors = _build(folder, vocab, encoder, progress)
    index = (_load_or_train_ivf(folder, vectors, index_config)
             if len(vectors) > index_config.approximate_above else build_faiss_index(vectors, index_config))
    return NameIndex(vectors, index, folder, cache_hit, time.perf_counter() - started, shipped)


def build_faiss_index(vectors: np.ndarray, config: IndexConfig = IndexConfig()) -> faiss.Index:
    """Exact inner-product search, or IVF above `config.approximate_above` names.

    IVF uses about 4·sqrt(n) lists trained on a sample; float16 keeps the vectors in the index as
    scalar-quantized fp16 (half the memory of float32, scores differ by < 1e-3).
    """
    n, dim = vectors.shape
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if n <= config.approximate_above:
        index = (faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
                 if config.float16 else faiss.IndexFlatIP(dim))
        index.train(vectors)  # a no-op for the flat index
        index.add(vectors)
        return index
    nlist = int(4 * np.sqrt(n))
    quantizer = faiss.IndexFlatIP(dim)
    if config.float16:
        index = faiss.IndexIVFScalarQuantizer(quantizer, dim, nlist, faiss.ScalarQuantizer.QT_fp16,
                                              faiss.METRIC_INNER_PRODUCT)
    else:
        index = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
    sample = vectors[np.random.default_rng(0).choice(n, min(n, 64 * nlist), replace=False)]
    index.train(sample)
    index.add(vectors)
    index.nprobe = config.nprobe
    return index


def _load_or_train_ivf(folder: Path, vectors: np.ndarray, config: IndexConfig) -> faiss.Index:
    """The IVF index, trained once and kept beside the vectors: training its lists (k-means) takes
    minutes at a million names, loading it seconds. Checked against its sha256 like the vectors."""
    path = folder / f"ivf-{int(4 * np.sqrt(len(vectors)))}{'-fp16' if config.float16 else ''}.faiss"
    checksum = path.with_suffix(".sha256")

    def cached() -> faiss.Index | None:
        if path.exists() and checksum.exists() and checksum.read_text().strip() == sha256_file(path):
            index = faiss.read_index(str(path))  # FAISS's own format: no pickle
            if index.ntotal == len(vectors):
                index.nprobe = config.nprobe
                return index
        return None

    def build() -> faiss.Index:
        index = build_faiss_index(vectors, config)
        with atomic_path(path) as tmp:
            faiss.write_index(index, str(tmp))
        with atomic_path(checksum) as tmp:
            tmp.write_text(sha256_file(path))
        return index

    return build_once(path, cached, build, "training the approximate index")


def _load_cached(folder: Path, n_names: int, dim: int) -> np.ndarray | None:
    manifest_path = folder / "manifest.json"
    if not manifest_path.exists():
        return None
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        manifest = {}
    vectors_path = folder / "vectors.npy"
    if (not isinstance(manifest, dict) or manifest.get("format") != INDEX_FORMAT or manifest.get("count") != n_names
            or manifest.get("dim") != dim or not vectors_path.exists()
            or sha256_file(vectors_path) != manifest.get("sha256")):
        log.warning("index cache %s does not match its manifest; rebuilding", folder)
        return None
    return np.load(vectors_path, allow_pickle=False)


def _build(folder: Path, vocab: Vocabulary, encoder: Encoder, progress: bool) -> np.ndarray:
    chunks = folder / "chunks"
    chunks.mkdir(parents=True, exist_ok=True)
    names = vocab.names["name"].tolist()
    parts = []
    n_chunks = (len(names) + CHUNK_NAMES - 1) // CHUNK_NAMES
    finished = len(list(chunks.glob("*.npy")))
    if finished:
        log.info("resuming index build of %s: %d of %d chunks already embedded", vocab.id, finished, n_chunks)
    for number in range(n_chunks):
        path = chunk_path(folder, number)
        texts = names[number * CHUNK_NAMES:(number + 1) * CHUNK_NAMES]
        part = load_chunk(path, len(texts), encoder.dim)
        if part is None:
            part = encoder.encode(texts, progress=progress,
                                  desc=f"indexing {vocab.id} {number + 1}/{n_chunks}")
            save_array(path, part)
        parts.append(part)
    vectors = np.concatenate(parts) if parts else np.zeros((0, encoder.dim), np.float32)
    _save_complete(folder, vocab, encoder, vectors)
    shutil.rmtree(chunks, ignore_errors=True)
    return vectors


def _save_complete(folder: Path, vocab: Vocabulary, encoder: Encoder, vectors: np.ndarray) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    save_array(folder / "vectors.npy", vectors)
    manifest = {"format": INDEX_FORMAT, "vocabulary": vocab.id, "version": vocab.version,
                "vocab_hash": vocab.content_hash, "model": encoder.info.id,
                "variant": encoder.variant, "count": len(vectors), "dim": encoder.dim,
                "sha256": sha256_file(folder / "vectors.npy")}
    # The manifest is written last: its presence says the vectors beside it are complete.
    with atomic_path(folder / "manifest.json") as tmp:
        tmp.write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def seed_path(vocab: Vocabulary, encoder: Encoder) -> Path:
    """Where the package keeps the vectors of (built-in target, model) when it ships them."""
    model = encoder.info.key().replace("@", "-")
    return SEEDS / f"{vocab.id}-{model}-{vocab.content_hash[:16]}.npy"


def seeded_vectors(vocab: Vocabulary, encoder: Encoder) -> np.ndarray | None:
    """The shipped vectors of this target for this model, when there are some and a sample of
    names embedded now agrees with them; else None (the names are embedded)."""
    path = seed_path(vocab, encoder)
    if not path.exists():
        return None
    seed = np.load(path, allow_pickle=False)
    if seed.shape != (len(vocab.names), encoder.dim):
        return None
    rows = np.random.default_rng(0).choice(len(seed), min(SEED_SAMPLE, len(seed)), replace=False)
    now = encoder.encode(vocab.names["name"].iloc[rows].tolist())
    agreement = float(np.min(np.sum(now * seed[rows].astype(np.float32), axis=1)))
    if agreement < SEED_AGREEMENT:
        log.info("shipped vectors of %s do not fit %s (%s; cosine %.4f): embedding its names",
                 vocab.id, encoder.info.key(), encoder.variant, agreement)
        return None
    return seed.astype(np.float32)


def load_chunk(path: Path, rows: int, dim: int) -> np.ndarray | None:
    if not path.exists():
        return None
    try:
        part = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError):
        return None
    return part if part.shape == (rows, dim) else None
