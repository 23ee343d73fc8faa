"""`--target`: a vocabulary file, a vocabulary imported into the store, or a built-in one."""
from __future__ import annotations

import difflib
from pathlib import Path

from ..config import VocabFilter
from ..errors import CodemapError
from .store import VocabStore, filtered
from .vocabulary import BUILTIN_VOCABULARIES, Vocabulary, load_vocab_file


def load_target(target: str, vocab_filter=None, store_dir: str | Path | None = None) -> Vocabulary:
    """Resolve `--target`: a vocabulary file path, a store name, or a built-in vocabulary name.

    `vocab_filter` (a `codemap.config.VocabFilter`) applies to each: a store vocabulary filtered
    in DuckDB as it is read, a file or a built-in one after (`store.filtered`). Raises
    CodemapError when the target is none of these.
    """
    store, vocab_filter = VocabStore(store_dir), vocab_filter or VocabFilter()
    if not Path(target).suffix and store.find(target) is not None:
        return store.load(target, vocab_filter)
    path = Path(target)
    if path.suffix and path.exists():
        return filtered(load_vocab_file(path), vocab_filter)
    builtin = BUILTIN_VOCABULARIES.get(target.upper())
    if builtin is not None:
        return filtered(builtin(), vocab_filter)
    if path.exists():
        return filtered(load_vocab_file(path), vocab_filter)
    known = ", ".join(sorted(BUILTIN_VOCABULARIES))
    raise CodemapError(f"unknown target {target!r}: not a file and not a known vocabulary"
                       f"{did_you_mean(target, [*BUILTIN_VOCABULARIES, *store.names()])} "
                       f"(built in: {known}; see `codemap vocab list`)")


def did_you_mean(typed: str, known: list[str]) -> str:
    """"; did you mean LOINC?" when `typed` is close to one of the `known` names (case aside),
    else ""."""
    by_key = {name.upper(): name for name in known}
    close = difflib.get_close_matches(typed.upper(), list(by_key), n=1, cutoff=0.6)
    return f"; did you mean {by_key[close[0]]}?" if close else ""
