"""Ship the built-in LOINC's name vectors for the default model (codemap/data/index/): the
README's first run then embeds no target names (codemap.embed.index, "seed"). Run again whenever
the built-in LOINC's names or the default model change; tests/test_index.py fails until then.

    python recipes/build_index_seed.py
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from codemap.config import EncoderConfig, default_cache_dir
from codemap.domains import prepare_target
from codemap.embed import Encoder
from codemap.embed.index import SEEDS, _build, seed_path
from codemap.vocab.target import load_target


def main() -> None:
    vocab = prepare_target(load_target("LOINC")).vocab
    encoder = Encoder.load(EncoderConfig(), default_cache_dir(), progress=True)
    with tempfile.TemporaryDirectory() as folder:  # embedded afresh, never from a cache
        vectors = _build(Path(folder), vocab, encoder, progress=True)
    for old in SEEDS.glob(f"{vocab.id}-*.npy"):
        old.unlink()
    path = seed_path(vocab, encoder)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors.astype(np.float16))
    print(f"{path}: {vectors.shape[0]} names, {path.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
