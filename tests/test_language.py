"""Source language detection on real code lists of the repository."""
import pytest

from codemap.read import detect_language, source_language
from codemap.read import read_code_list
from codemap.domains import prepare_target
from codemap.rank.prepare import language_free_words
from codemap.vocab import builtin_loinc
from codemap.vocab.vocabulary import builtin_drugs

from .conftest import DATA, EXAMPLES, REPO


@pytest.mark.parametrize("path, lang", [
    (EXAMPLES / "labs_de.csv", "de"),
    (EXAMPLES / "labs.csv", "en"),  # short English lab labels: Latin would win if it were allowed
    (DATA / "labs_de_cp1252.csv", "de"),  # four rows only
    (DATA / "labs_fr.csv", "fr"),
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


def test_drug_names_units_and_dose_forms_carry_no_language():
    """An English medication list ("Paracetamol 500mg tab", "Amoxicillin 250mg/5ml susp") had been
    read as Danish: its drug names look like words of some language. Against a drug target they
    carry none, nor do numbers, units and dose forms: the list is left unknown (ranked as the
    target's language); a list with words of its own language keeps it; a lab target takes no
    word out."""
    drugs = language_free_words(prepare_target(builtin_drugs()))
    english = read_code_list(DATA / "meds_en.csv").texts
    assert len(english) >= 10
    guess = source_language(english, None, drugs)
    assert guess.lang in ("", "en"), guess
    assert guess.describe() == "unknown (too few words carry a language)"
    german = ["Ibuprofen 400 mg Filmtabletten", "Metamizol 500 mg Tabletten", "Amoxicillin 500 mg "
              "Kapseln", "Pantoprazol 40 mg magensaftresistente Tabletten", "Metformin 500 mg "
              "Tabletten", "Morphin 10 mg Injektionslösung", "Paracetamol 500 mg Zäpfchen"]
    french = ["Paracétamol 500 mg comprimé", "Amoxicilline 500 mg gélule", "Oméprazole 20 mg "
              "gélule gastro-résistante", "Metformine 500 mg comprimé pelliculé", "Morphine 10 "
              "mg/ml solution injectable", "Ibuprofène 400 mg comprimé"]
    assert source_language(german, None, drugs).lang == "de"
    assert source_language(french, None, drugs).lang == "fr"
    assert language_free_words(prepare_target(builtin_loinc())) == frozenset()
