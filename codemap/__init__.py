"""codemap: map local lab, procedure and medication codes onto standard vocabularies.

Public API: `map_codes`, `read_code_list`, `load_target`, `Encoder`, `write_candidates`.
"""
__version__ = "0.1.0"

from .config import EncoderConfig, MapConfig, RankConfig, ReadOptions  # noqa: E402
from .errors import CodemapError  # noqa: E402

__all__ = ["CodemapError", "EncoderConfig", "MapConfig", "RankConfig", "ReadOptions",
           "__version__", "map_codes", "read_code_list", "load_target", "Encoder",
           "write_candidates"]


def __getattr__(name):
    # Heavy modules (torch, faiss) load on first use, so `codemap --help` stays fast.
    if name == "map_codes":
        from .engines.local import map_codes
        return map_codes
    if name == "read_code_list":
        from .read.readers import read_code_list
        return read_code_list
    if name == "load_target":
        from .vocab.vocabulary import load_target
        return load_target
    if name == "Encoder":
        from .embed.encoder import Encoder
        return Encoder
    if name == "write_candidates":
        from .write.writers import write_candidates
        return write_candidates
    raise AttributeError(name)
