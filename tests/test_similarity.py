"""Similarity benchmarks (Spearman of cosine vs rating): the file formats of MayoSRS and UMNSRS,
and a real model ranking synonym pairs above unrelated pairs. The rated sets themselves are
research data that codemap does not ship, so the pairs here come from the shipped LOINC names."""
from importlib import resources

import pandas as pd
import pytest

from codemap.errors import CodemapError
from codemap.evaluate.similarity import read_rated_pairs, score_similarity


def _loinc_pairs(count=40):
    table = resources.files("codemap.data") / "loinc" / "LOINC_1.6_Top2000CommonLabResultsUS.csv"
    with resources.as_file(table) as path:
        loinc = pd.read_csv(path, dtype=str).head(count)
    same = [(row["Long Common Name"], row["Short Name"], 4.0) for _, row in loinc.iterrows()]
    shifted = loinc["Short Name"].tolist()[count // 2:] + loinc["Short Name"].tolist()[:count // 2]
    other = [(name, short, 1.0) for name, short in zip(loinc["Long Common Name"], shifted)]
    return same + other


def test_both_published_layouts_read_the_same(tmp_path):
    pairs = _loinc_pairs(6)
    mayo = tmp_path / "mayo.csv"
    pd.DataFrame([{"Mean": r, "CUI1": "C1", "CUI2": "C2", "TERM1": a, "TERM2": b}
                  for a, b, r in pairs]).to_csv(mayo, index=False)
    umn = tmp_path / "umn.txt"
    umn.write_text("".join(f"{a}\t{b}\t{r}\n" for a, b, r in pairs), encoding="utf-8")
    expected = pd.DataFrame(pairs, columns=["term1", "term2", "rating"])
    pd.testing.assert_frame_equal(read_rated_pairs(mayo), expected)
    pd.testing.assert_frame_equal(read_rated_pairs(umn), expected)


def test_bad_rating_names_the_pair(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("renal failure\tkidney failure\t4\nheart\tmyocardium\tx\n", encoding="utf-8")
    with pytest.raises(CodemapError, match=r"bad.txt, pair 2"):
        read_rated_pairs(path)


def test_default_model_rates_name_pairs_of_one_code_above_mixed_pairs(tmp_path, default_encoder):
    path = tmp_path / "pairs.txt"
    path.write_text("".join(f"{a}\t{b}\t{r}\n" for a, b, r in _loinc_pairs()), encoding="utf-8")
    result = score_similarity(default_encoder, path)
    assert result.pairs == 80 and result.spearman > 0.5


def test_cli_prints_one_spearman_per_file_and_names_a_bad_file(tmp_path):
    from typer.testing import CliRunner

    from codemap.cli import app

    path = tmp_path / "pairs.txt"
    path.write_text("".join(f"{a}\t{b}\t{r}\n" for a, b, r in _loinc_pairs(10)), encoding="utf-8")
    result = CliRunner().invoke(app, ["similarity", str(path), "--backend", "torch"])
    assert result.exit_code == 0, result.output
    assert "\t20\t" in result.output
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n", encoding="utf-8")
    failed = CliRunner().invoke(app, ["similarity", str(bad)])
    assert failed.exit_code == 2 and "bad.csv" in failed.output
