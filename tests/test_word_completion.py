"""Cut words completed from the target's own words: the ICD-10-PCS target in the repo, the
built-in LOINC and drug targets, and the ranking through `codemap eval`."""
import pandas as pd
import pytest
from typer.testing import CliRunner

from codemap.cli import app
from codemap.config import RankConfig
from codemap.domains import prepare_target
from codemap.rank.prepare import text_expander
from codemap.readings.word_completion import WordCompleter, word_completer
from codemap.vocab import builtin_loinc, load_vocab_file
from codemap.vocab.target import load_target

from .conftest import REPO

runner = CliRunner()
PCS = REPO / "benchmarks/data"


@pytest.fixture(scope="module")
def pcs():
    return word_completer(load_vocab_file(PCS / "icd10pcs_short_target.csv"))


def test_cut_words_are_completed_beside_the_rows_other_words(pcs):
    read = pcs("Replace of Oculomotor Nrv with Synth Sub, Perc Endo Approach")
    assert read == ("Replace of Oculomotor Nrv with synthetic substitute, percutaneous endoscopic "
                    "Approach")
    assert pcs("Drainage of Oculomotor Nerve with Drain Dev, Open Approach") == (
        "Drainage of Oculomotor Nerve with drainage device, Open Approach")


@pytest.mark.parametrize("text", [
    "Excision of Nerve NOS",  # ALL-CAPS: an acronym, not a cut
    "Drainage of Optic Nerve, Open Approach",  # every word a word of the target
    "Bypass Cereb Ventriculoperitoneal",  # a long unknown word is no cut ("Cereb" is: 5 letters)
])
def test_what_is_not_a_cut_is_left_alone(pcs, text):
    kept = [w for w in text.split() if w.isupper() or len(w) > 6 or w.lower() in pcs.__self__.known]
    read = pcs(text).split()
    for word in kept:
        assert word in read


def test_a_word_form_and_a_completion_without_context_support_are_left_alone():
    completer = WordCompleter(["Nebivolol 5 MG Oral Tablet", "Budesonide 0.25 MG/ML Inhalation "
                               "Suspension", "Insulin 100 units/ML Injectable Solution",
                               "Nebivolol 10 MG Oral Tablet"])
    # "Neb" begins "nebivolol", which never meets budesonide or suspension in the target.
    assert completer.complete("Budesonide Neb Suspension") == "Budesonide Neb Suspension"
    # Without other known words, the target's most frequent completion is taken.
    assert completer.complete("Nebiv") == "nebivolol"
    assert completer.complete("Insulin 100 unit/mL") == "Insulin 100 unit/mL"  # "units": a form


def test_the_targets_own_short_name_words_are_left_alone():
    loinc = builtin_loinc()
    complete = word_completer(loinc)
    # "Creat" and "Ser" are words of LOINC's short names, read by its short names and lab evidence.
    assert complete("Creat Ser") == "Creat Ser"


def test_the_default_ranking_reads_completed_texts_and_the_switch_turns_it_off():
    target = prepare_target(load_vocab_file(PCS / "icd10pcs_short_target.csv"))
    expand = text_expander(target, RankConfig())
    assert expand("Division of Thoracic Sympathetic Nerve, Perc Endo Approach").endswith(
        "percutaneous endoscopic Approach")
    plain = text_expander(target, RankConfig(complete_words=False))
    assert plain("Perc Endo Approach") == "Perc Endo Approach"


def test_eval_on_procedure_short_names_beats_the_ranking_without_completion(tmp_path, shared_cache):
    """The real CLI on 40 real ICD-10-PCS short names against their codes' sibling groups, with
    the untrained base: the trained default has seen ICD-10-PCS names and gains less from it."""
    gold = pd.read_csv(PCS / "icd10pcs_short_dev.tsv", sep="\t", dtype=str).head(40)
    target = pd.read_csv(PCS / "icd10pcs_short_target.csv", dtype=str)
    target = target[target["code"].str[:4].isin(set(gold["pcs_code"].str[:4]))]
    gold.to_csv(tmp_path / "pcs.tsv", sep="\t", index=False)
    target.to_csv(tmp_path / "target.csv", index=False)
    result = runner.invoke(app, ["eval", str(tmp_path / "pcs.tsv"), "--target",
                                 str(tmp_path / "target.csv"), "--gold-col", "pcs_code",
                                 "--text-col", "short_name", "--model", "default-base",
                                 "--cache-dir", str(shared_cache), "-q"])
    assert result.exit_code == 0, result.output
    acc1 = {}
    for line in result.output.splitlines():
        cells = [c.strip() for c in line.strip("│┃ ").split("│")]
        if len(cells) > 2 and cells[0] in ("hybrid, no evidence", "hybrid + completed words"):
            acc1[cells[0]] = float(cells[2])
    assert acc1["hybrid + completed words"] >= acc1["hybrid, no evidence"] + 0.1, result.output


def test_a_word_with_an_accented_letter_is_one_word():
    completer = WordCompleter(["Protein [Mass/volume] in Urine", "Prothrombin time"])
    # "Prot" of "Protéines" was completed as a cut word: "proteinéines".
    assert completer.complete("Protéines Urines") == "Protéines Urines"
    german = WordCompleter(["Leukozyten Zählung im Blut", "Kalium im Serum", "Natrium im Serum"])
    assert german.complete("Leukozyten Zähl") == "Leukozyten zählung"
