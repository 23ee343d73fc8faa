"""Mapper: a list mapped block by block gives exactly the candidates of the whole list (its
hubness is the list's, whatever the blocks)."""
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
    mapper = Mapper.load(config).for_list(read_code_list(config.source).query_texts)
    parts = pd.concat([mapper.map_block(b) for b in read_code_list(config.source).blocks(37)],
                      ignore_index=True)
    assert list(parts.columns) == list(whole.columns)
    # A block embeds its texts in other batches than the whole list, so the float scores (and the
    # confidence computed from them, rounded to 4 places) may move by noise, and two candidates
    # with equal shown scores may swap ranks. Order by (row, code), which noise cannot change:
    # the candidates and every other column must then be identical, the floats close.
    noisy = {"score": 1e-4, "encoder_score": 1e-4, "confidence": 2e-3}
    noisy = {column: tol for column, tol in noisy.items() if column in whole.columns}
    assert "confidence" in noisy  # the shipped LOINC calibration is used
    order = lambda f: f.sort_values(["source_row", "target_code"]).reset_index(drop=True)
    parts, whole = order(parts), order(whole)
    exact = [c for c in whole.columns if c not in noisy and c not in ("rank", "explanation")]
    pd.testing.assert_frame_equal(parts[exact], whole[exact])
    for column, tolerance in noisy.items():
        assert (parts[column] - whole[column]).abs().max() <= tolerance, column
