"""Source language detection on real code lists of the repository."""
import pytest

from codemap.read import detect_language, source_language
from codemap.read import read_code_list

from .conftest import DATA, EXAMPLES, REPO


@pytest.mark.parametrize("path, lang", [
    (EXAMPLES / "labs_de.csv", "de"),
    (EXAMPLES / "labs.csv", "en"),  # short English lab labels: Latin would win if it were allowed
    (DATA / "labs_de_cp1252.csv", "de"),  # four rows only
    (DATA / "mimic_labs_gold.tsv", "en"),
    (REPO / "benchmarks/data/cie10_es.tsv", "es"),
    (REPO / "benchmarks/data/icd10gm_de.tsv", "de"),
])
def test_detects_language_of_real_lists(path, lang):
    guess = detect_language(read_code_list(path).texts)
    assert (guess.lang, guess.method) == (lang, "detected"), guess


def test_no_text_is_unknown_and_given_wins():
    assert detect_language(["", "  "]).describe() == "unknown (no text)"
    assert source_language(["Kalium im Serum"], " DE ").describe() == "de (given)"
