"""codemap: map local lab, procedure and medication codes onto standard vocabularies.

Public API: `map_codes`, `read_code_list`, `load_target`, `VocabStore`, `Encoder`,
`write_candidates`. The stages live in packages named for them, in pipeline order: read, vocab,
embed, rank, evaluate, decide, write, review, engines (docs/architecture.md).
"""
__version__ = "0.1.0"

from .config import EncoderConfig, MapConfig, RankConfig, ReadOptions  # noqa: E402
from .errors import CodemapError  # noqa: E402

# name → the stage package it comes from. Heavy modules (torch, faiss) load on first use, so
# `codemap --help` stays fast.
_LAZY = {"map_codes": "engines", "read_code_list": "read", "load_target": "vocab",
         "VocabStore": "vocab", "Vocabulary": "vocab", "Encoder": "embed",
         "write_candidates": "write"}

__all__ = ["CodemapError", "EncoderConfig", "MapConfig", "RankConfig", "ReadOptions",
           "__version__", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(name)
