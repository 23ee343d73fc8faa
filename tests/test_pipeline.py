"""Mapper: a list mapped block by block gives exactly the candidates of the whole list."""
import pandas as pd

from codemap.config import MapConfig
from codemap.engines import Mapper, map_codes
from codemap.read import read_code_list

from .conftest import EXAMPLES


def test_blocks_keep_row_numbers():
    source = read_code_list(EXAMPLES / "labs.csv")
    blocks = list(source.blocks(40))
    assert [len(b.frame) for b in blocks] == [40, 40, 40, 30]
    assert sum((b.rows for b in blocks), []) == source.rows
    assert sum((b.codes for b in blocks), []) == source.codes


def test_map_block_by_block_equals_whole_list(shared_cache):
    config = MapConfig(source=EXAMPLES / "labs.csv", target="LOINC", cache_dir=shared_cache,
                       progress=False)
    whole = map_codes(config).candidates
    mapper = Mapper.load(config)
    parts = pd.concat([mapper.map_block(b) for b in read_code_list(config.source).blocks(37)],
                      ignore_index=True)
    assert list(parts.columns) == list(whole.columns)
    # A block embeds its texts in other batches than the whole list: scores may move by float
    # noise, so equal shown scores may swap; compare in (row, score, code) order.
    order = lambda f: f.sort_values(["source_row", "score", "target_code"],
                                    ascending=[True, False, True]).reset_index(drop=True)
    parts, whole = order(parts), order(whole)
    pd.testing.assert_frame_equal(parts.drop(columns=["score", "encoder_score", "rank", "explanation"]),
                                  whole.drop(columns=["score", "encoder_score", "rank", "explanation"]))
    for column in ("score", "encoder_score"):
        assert (parts[column] - whole[column]).abs().max() <= 1e-4
