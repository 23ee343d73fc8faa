"""What the pool-scale probes change in codemap to read its pools, in one place (each probe had
its own copy, and a change of codemap.rank.two_stage's signature broke all four at once).

- `force_two_stages()`: two stages whatever the list's language (a German list on the 1M table,
  which carries German names but no language tags, is read as crossing and would get every name
  embedded: hours);
- `zero_vectors(asked)`: pooled names' vectors are zeros, so nothing is embedded and only the
  pool is read (`asked`, a set, gathers the name rows asked for);
- `record_pools(pools)`: each row's pooled concept codes into `pools` ({row: set of codes}).
"""
import numpy as np

from codemap.embed import lazy_vectors
from codemap.rank import assembly, hybrid


def force_two_stages() -> None:
    two = assembly.two_stages
    assembly.two_stages = lambda vocab, encoder, cache, config, *crossing: two(vocab, encoder, cache,
                                                                               config, False)


def zero_vectors(asked: set | None = None) -> None:
    def zeros(self, rows):
        rows = np.asarray(rows, dtype=np.int64)
        if asked is not None:
            asked.update(rows.tolist())
        return np.zeros((len(rows), self.shape[1]), np.float32)
    lazy_vectors.LazyVectors.__getitem__ = zeros


def record_pools(pools: dict) -> None:
    chunk = hybrid._rank_chunk

    def recorded(enc, lex, layout, record_of, rows, offset, scorers, config, names, allowed=None, *a, **k):
        if allowed is not None:
            for q in range(len(rows)):
                pools[offset + q] = set(layout.concept_codes[allowed[q]])
        return chunk(enc, lex, layout, record_of, rows, offset, scorers, config, names, allowed, *a, **k)
    hybrid._rank_chunk = recorded
