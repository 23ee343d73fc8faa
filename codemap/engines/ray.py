"""`--engine ray`: the same mapping, spread over a Ray cluster with Ray Data.

    read blocks (driver: read_code_list, SourceTable.blocks)
      → map_batches over an ActorPoolStrategy of actors, each holding one `Mapper` (model,
        vocabulary, FAISS and lexical indexes loaded once) and turning a block into a Parquet part
      → the driver writes each part and the manifest as results stream in (codemap.write.parts)

Every row is ranked by `Mapper.map_block`, the code the local engine runs, so the candidates are
the local engine's whatever the number of workers. A lost actor is restarted and its block retried
by Ray (`max_restarts`, `max_task_retries`); a rerun into the same folder skips finished parts.
The driver writes the parts, so the output folder need not be shared with the workers; the model,
the index cache and a mapping memory must be readable on every node (shared storage).

`embed_vocabulary` is the dictionary side: the names are embedded in the index cache's chunks
(codemap.embed.index.chunk_path) by a pool of actors, then the normal index build loads the chunks.

Ray is imported inside the functions: the core install neither needs nor imports it.
"""
from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import pickle
import time
import warnings
from collections import Counter
from dataclasses import asdict, replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from .. import __version__
from ..config import EncoderConfig, IndexConfig, MapConfig, RayConfig
from ..decide.confidence import calibration_fingerprint
from ..decide.triage import tally
from ..embed.encoder import Encoder
from ..embed.index import CHUNK_NAMES, chunk_path, index_folder, load_or_build_index
from ..embed.models import resolve_model
from ..embed.name_encoder import name_encoder
from ..errors import CodemapError
from ..files import atomic_path, sha256_file, sha256_text
from ..rank.hubness import reference_texts
from ..rank.lexical import load_or_build_lexical
from ..rank.two_stage import TwoStageIndex, pools_by_size, two_stages
from ..domains import prepare_target
from ..rank.prepare import language_free_words
from ..read.language import source_language
from ..read.readers import SOURCE_FILE_COLUMN, read_code_list
from ..vocab.target import load_target
from ..vocab.vocabulary import Vocabulary
from ..write.parts import PartsFolder, parquet_bytes, part_name
from .local import Mapper

log = logging.getLogger(__name__)


class BlockMapper:
    """A Ray Data actor: loads one Mapper, then maps one block per call into Parquet bytes."""

    def __init__(self, config: MapConfig, templates: list, langs: list, references: list):
        mapper = Mapper.load(config)
        # One view per list: its language (detected on the whole list, as the local engine does)
        # sets the fusion weight, its reference rows (the driver's, from the whole list) its
        # hubness.
        self.mappers = [mapper.for_source_lang(lang).for_list(texts)
                        for lang, texts in zip(langs, references)]
        self.templates = templates  # each source's SourceTable with an empty frame (its roles)
        self.run = json.dumps(mapper.describe(), default=str)

    def __call__(self, batch: dict) -> dict:
        out = {key: [] for key in ("part", "data", "rows", "candidates", "seconds", "worker", "run")}
        for name, number, first_row, frame in zip(batch["part"], batch["source"],
                                                  batch["first_row"], batch["frame"]):
            started = time.perf_counter()
            template = self.templates[int(number)]
            block = replace(template, frame=pickle.loads(frame), first_row=int(first_row))
            candidates = self.mappers[int(number)].map_block(block)
            candidates.insert(0, SOURCE_FILE_COLUMN, template.path.name)
            out["part"].append(name)
            out["data"].append(parquet_bytes(candidates))
            out["rows"].append(len(block.frame))
            out["candidates"].append(len(candidates))
            out["seconds"].append(time.perf_counter() - started)
            out["worker"].append(os.getpid())
            out["run"].append(self.run)
        return {key: np.array(values, dtype=object) for key, values in out.items()}


class ChunkEmbedder:
    """A Ray Data actor: loads the encoder once, embeds one index chunk of names per call."""

    def __init__(self, config: EncoderConfig, cache_dir: Path):
        self.encoder = Encoder.load(config, cache_dir)

    def __call__(self, batch: dict) -> dict:
        data = []
        for texts in batch["texts"]:
            buffer = io.BytesIO()
            np.save(buffer, self.encoder.encode(pickle.loads(texts)))
            data.append(buffer.getvalue())
        return {"chunk": batch["chunk"], "data": np.array(data, dtype=object)}


def map_with_ray(config: MapConfig, sources: list[Path], ray_config: RayConfig, output: Path, *,
                 actor: type = BlockMapper) -> dict:
    """Map every row of `sources` into a folder of Parquet parts plus a manifest; returns counts.

    Raises CodemapError for unreadable sources, unknown targets or models, an output folder of
    another run, Ray missing or a cluster that cannot be reached or cannot hold the workers.
    """
    ray = _import_ray()
    tables = [read_code_list(path, config.read) for path in sources]
    target = prepare_target(load_target(config.target, config.vocab_filter,
                                        config.store_dir or config.cache_dir / "store"))
    neutral = language_free_words(target)
    guesses = [source_language(t.texts, config.source_lang, neutral) for t in tables]
    langs = [g.lang if g.method != "uncertain" else config.source_lang for g in guesses]
    settings = _run_settings(config, sources, ray_config)
    folder = PartsFolder(output, sha256_text(json.dumps(settings, sort_keys=True)), settings)
    blocks = [(part_name(n, table.path, block.first_row), n, block)
              for n, table in enumerate(tables) for block in table.blocks(ray_config.batch_rows)]
    pending = [item for item in blocks if not folder.finished(item[0])]
    source_of = {name: tables[n].path.name for name, n, _ in blocks}
    counts = {"sources": len(tables), "rows": sum(len(t.frame) for t in tables),
              "parts": len(blocks), "skipped": len(blocks) - len(pending), "mapped": 0}
    started = time.perf_counter()
    if pending:
        with ray_session(ray, ray_config):
            # the vocabulary as ranking uses it (prepared by its domain): the index a Mapper loads
            if not _index_ready(target.vocab, config.encoder, config.cache_dir, config.index):
                embed_vocabulary(target.vocab, config.encoder, config.cache_dir, ray_config,
                                 config.index)
            items = [{"part": name, "source": n, "first_row": block.first_row,
                      "frame": pickle.dumps(block.frame)} for name, n, block in pending]
            templates = [replace(t, frame=t.frame.iloc[:0]) for t in tables]
            references = [reference_texts(t.query_texts) for t in tables]
            mapped = _actor_stage(ray, items, actor, (replace(config, progress=False), templates,
                                                      langs, references), ray_config)
            for result in mapped.iter_rows():
                folder.add(result["part"], result["data"],
                           {"source": source_of[result["part"]],
                            "rows": int(result["rows"]), "candidates": int(result["candidates"]),
                            "seconds": round(float(result["seconds"]), 3),
                            "worker": int(result["worker"]), "written_at": round(time.time(), 3)})
                if not folder.manifest["run"]:
                    run = {**json.loads(result["run"]),
                           "source_language": "; ".join(g.describe() for g in guesses)}
                    folder.save(run=_run_sheet(run, sources, ray_config))
                counts["mapped"] += 1
    done = {name for name, _, _ in blocks} <= set(folder.manifest["parts"])
    folder.save(complete=done, rows=counts["rows"],
                candidates=sum(e["candidates"] for e in folder.manifest["parts"].values()))
    counts.update(seconds=time.perf_counter() - started, complete=done, folder=str(folder.folder),
                  tiers=_tiers(folder))
    return counts


def _tiers(folder: PartsFolder) -> dict:
    """Sources per review suggestion over every finished part, one part in memory at a time."""
    tiers = Counter()
    for name in sorted(folder.parts):
        columns = pq.read_schema(folder.folder / name).names
        if "suggestion" not in columns:  # no calibration for this run: no tiers to count
            continue
        wanted = [c for c in (SOURCE_FILE_COLUMN, "source_row", "suggestion") if c in columns]
        tiers.update(tally(folder.read(name, wanted)))
    return dict(tiers)


def embed_vocabulary(vocab: Vocabulary, encoder: EncoderConfig, cache_dir: Path,
                     ray_config: RayConfig | None = None,
                     index_config: IndexConfig = IndexConfig()) -> dict:
    """Index (model, vocabulary) in the cache as `codemap map` loads it. A large target gets its
    two stages (codemap.rank.two_stage), built here: the static stage distils the tokens its names
    use, minutes of work with nothing to spread, and the actors that map then embed the pooled
    names. Any other gets every name embedded, with `ray_config` in chunks by a pool of Ray actors
    first. Returns what was done (kind, chunks, seconds, folder)."""
    started = time.perf_counter()
    names = vocab.names["name"].tolist()
    # The encoders as `map` picks them (their runtime variants are part of the cache keys): the
    # model for the two stages, the name encoder for a full index, whose settings the actors use.
    model = Encoder.load(encoder, cache_dir)
    local = name_encoder(model, len(names), index_config, cache_dir,
                         made_only=pools_by_size(vocab, index_config))
    encoder = local.config
    if two_stages(vocab, local, cache_dir, index_config):
        index = TwoStageIndex.load(vocab, model, load_or_build_lexical(vocab, cache_dir), cache_dir)
        return {"kind": "two-stage", "names": len(names), "cache_hit": index.cache_hit,
                "seconds": time.perf_counter() - started, "folder": str(index.folder)}
    n_chunks = (len(names) + CHUNK_NAMES - 1) // CHUNK_NAMES
    folder = index_folder(cache_dir, vocab, local)
    cached = (folder / "manifest.json").exists()
    embedded = 0
    if ray_config is not None and not cached:
        ray = _import_ray()
        pending = [n for n in range(n_chunks) if not chunk_path(folder, n).exists()]
        items = [{"chunk": n, "texts": pickle.dumps(names[n * CHUNK_NAMES:(n + 1) * CHUNK_NAMES])}
                 for n in pending]
        with ray_session(ray, ray_config):
            if items:
                for result in _actor_stage(ray, items, ChunkEmbedder, (encoder, cache_dir),
                                           ray_config).iter_rows():
                    with atomic_path(chunk_path(folder, int(result["chunk"]))) as tmp:
                        tmp.write_bytes(result["data"])
                    embedded += 1
    # The normal build: loads the chunks the actors wrote (re-embedding any that do not fit) and
    # writes the vectors and the manifest, as a local build would.
    index = load_or_build_index(vocab, local, cache_dir)
    return {"kind": "full", "names": len(names), "chunks": n_chunks, "embedded_by_ray": embedded,
            "cache_hit": cached, "seconds": time.perf_counter() - started,
            "folder": str(index.folder)}


@contextlib.contextmanager
def ray_session(ray, ray_config: RayConfig):
    """Join the cluster at `ray_config.address`, or start Ray on this machine; stop only a Ray
    started here. Raises CodemapError when the cluster cannot be reached."""
    started = not ray.is_initialized()
    if started:
        try:
            ray.init(address=ray_config.address, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.WARNING)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise CodemapError(f"cannot reach a Ray cluster at {ray_config.address!r} "
                               f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}); "
                               "start one with `ray start --head` or leave out --ray-address") from None
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        _check_resources(ray, ray_config)
        yield
    finally:
        if started:
            ray.shutdown()


def _actor_stage(ray, items: list[dict], actor: type, args: tuple, ray_config: RayConfig):
    """One item per call on a fixed pool of `workers` actors (fewer for fewer items); Ray restarts a lost actor and
    retries the item it held.

    The retries are finite on purpose (Ray Data's default is forever): a block that kills every
    worker it reaches must end the run, not loop. Recent Ray warns that these two arguments will
    get named parameters; they are still the way to set them from Ray 2.9 on.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated")
        dataset = ray.data.from_items(items, override_num_blocks=len(items))
        return dataset.map_batches(
            actor, batch_size=1, fn_constructor_args=args,
            compute=ray.data.ActorPoolStrategy(size=min(ray_config.workers, len(items))),
            num_cpus=ray_config.num_cpus, num_gpus=ray_config.num_gpus or None,
            max_restarts=ray_config.max_retries, max_task_retries=ray_config.max_retries)


def _check_resources(ray, ray_config: RayConfig) -> None:
    available = ray.cluster_resources()
    for name, each in (("CPU", ray_config.num_cpus), ("GPU", ray_config.num_gpus)):
        need = each * ray_config.workers
        if need > available.get(name, 0):
            raise CodemapError(f"--workers {ray_config.workers} need {need:g} {name}s but the Ray "
                               f"cluster has {available.get(name, 0):g}; use fewer workers "
                               f"or {'--num-gpus' if name == 'GPU' else 'a bigger cluster'}")


def _index_ready(vocab: Vocabulary, encoder: EncoderConfig, cache_dir: Path,
                 index_config: IndexConfig) -> bool:
    names = name_encoder(Encoder.load(encoder, cache_dir), len(vocab.names), index_config, cache_dir,
                         made_only=True)  # an index its export built needs that export
    return (index_folder(cache_dir, vocab, names) / "manifest.json").exists()


def _run_settings(config: MapConfig, sources: list[Path], ray_config: RayConfig) -> dict:
    """What decides a run's candidates: a folder holds parts of one such run only."""
    info = resolve_model(config.encoder.model, config.cache_dir)
    return {"sources": [{"path": str(p), "sha256": sha256_file(p)} for p in sources],
            "target": config.target, "vocab_filter": config.vocab_filter.describe(),
            "store": str(config.store_dir or ""), "model": info.fingerprint(),
            "read": asdict(config.read), "rank": asdict(config.rank),
            "memory": str(config.memory or ""), "batch_rows": ray_config.batch_rows,
            # decision support: the parts hold confidence, suggestions and pre-approvals
            "calibration": calibration_fingerprint(config.calibration),
            "auto_accept": config.auto_accept, "no_match_below": config.no_match_below,
            "broader_below": config.broader_below,
            "llm": None if config.llm is None else [config.llm.url, config.llm.model]}


def _run_sheet(described: dict, sources: list[Path], ray_config: RayConfig) -> dict:
    return {"codemap_version": __version__,
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "source": ", ".join(str(p) for p in sources), **described, "engine": "ray",
            "ray_workers": ray_config.workers, "batch_rows": ray_config.batch_rows}


def _import_ray():
    try:
        import ray
        import ray.data  # noqa: F401  (Ray Data is a separate part of the ray[data] install)
    except ImportError:
        raise CodemapError("--engine ray needs Ray: pip install 'codemap[ray]'") from None
    return ray
