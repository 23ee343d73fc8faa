"""A specimen written in another language, as a compound's head or cut short is read as stated
(issue #52, benchmarks/results/specimen-words/RULE.md); a short name's hours word is its code's
timing."""
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from codemap.cli import app
from codemap.domains.lab.loinc import text_axes, with_short_name_axes, concept_axes
from codemap.domains.lab.specimen_forms import foreign_spellings, hour_words

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


@pytest.mark.parametrize("text, group, said", [
    ("Potasio en orina", "urine", "orina"),                  # learned from the ICD-10 titles
    ("Proteínas en líquido cefalorraquídeo", "csf", "cefalorraquideo"),  # CSF before "fluid"
    ("Potassio na urina", "urine", "urina"),
    ("Kreatinin Sammelurin", "urine", "urin"),               # a compound's head
    ("Kalium Vollblut", "blood", "blut"),
    ("Kalium i.U.", "urine", "U."),                           # a cut after "i."
    ("Harnstoff i.Sp.U.", "urine", "U."),
    ("Toxoplasma IgG", "", ""),                               # an organism, not a compound
    ("Thiopurine methyltransferase", "", ""),                 # a drug, likewise
    ("Coombs directo", "", ""),                               # a learned word is no head
    ("Natrium i.S.", "blood", "S."),          # serum: blood holds most codes its spellings name
    ("Glucose i.Liq.", "csf", "Liq."),        # liquor; the learned líquido does not compete
    ("Serum Na.", "blood", "serum"),                          # "Na." is no cut
    ("M.C.V.", "", ""),                                       # capital initials: an acronym
    ("e.G.F.R.", "", ""),
])
def test_the_specimen_a_row_writes_is_read(text, group, said):
    axes = text_axes(text)
    assert axes.group == group
    assert axes.said.get("system", "") == said


def test_hour_words_of_other_languages_time_the_collection():
    assert {"horas", "heures", "stunden"} <= hour_words()
    assert text_axes("Creatinina en orina de 24 horas").timing == "24H"
    assert text_axes("Calcium im 24-Stunden-Urin").timing == "24H"
    # Hours after something time a challenge, read against its hours; a decimal's fraction
    # digits are no hours (benchmarks/results/challenge-hours/RULE-2.md).
    assert text_axes("Glucose 1h post 50 g").timing == "1H"
    assert text_axes("Creatinin --1,5 Stunden nach Stimulation").timing == ""


def test_the_learned_words_are_translations_of_specimen_words():
    learned = dict(foreign_spellings())
    assert learned["orina"] == "urine" and learned["suero"] == "serum"
    assert learned["cefalorraquideo"] == "cerebrospinal"
    assert all(len(word) >= 4 and word.isalpha() for word in learned)


def test_the_alignment_keeps_mutual_best_matches_only():
    sys.path.insert(0, str(ROOT / "recipes"))
    from build_specimen_words import aligned

    english = {"urine": {"a", "b", "c", "d"}, "blood": {"e", "f", "g"}, "other": {"a", "e"}}
    foreign = {"orina": {"a", "b", "c", "d"}, "sangre": {"e", "f", "g", "h", "i"},
               "de": {"a", "b", "c", "d", "e", "f", "g", "h"}}
    assert aligned(english, foreign, "urine") == ("orina", 1.0, 4)
    assert aligned(english, foreign, "blood") == ("sangre", 0.75, 3)
    assert aligned(english, foreign, "other") is None  # shares fewer than three titles


def test_a_short_names_hours_word_is_its_codes_timing():
    table = pd.DataFrame({"code": ["25954-9", "2601-3"],
                          "name": ["Magnesium 24h Ur-sCnc", "Magnesium SerPl-sCnc"]})
    read = with_short_name_axes(table)
    axes = [concept_axes(row) for row in read.to_dict("records")]
    assert (axes[0].component, axes[0].timing, axes[0].group) == ("magnesium", "24H", "urine")
    assert axes[1].timing == "Pt"


def test_map_keeps_the_specimen_a_german_or_spanish_row_writes(tmp_path, shared_cache):
    source = tmp_path / "labs.csv"
    source.write_text("code,name\n1,Kalium i.U.\n2,Potasio en orina\n3,Kreatinin Sammelurin\n"
                      "4,Natrium i.S.\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    result = runner.invoke(app, ["map", str(source), "--target", "LOINC", "-o", str(out),
                                 "--cache-dir", str(shared_cache)])
    assert result.exit_code == 0, result.output
    found = pd.read_csv(out, dtype=str, keep_default_na=False)
    first = found[found["rank"] == "1"].set_index("source_text")
    assert first.loc["Kalium i.U.", "target_code"] == "2828-2"  # Potassium in Urine
    assert first.loc["Potasio en orina", "target_code"] == "2828-2"
    assert "Urine" in first.loc["Kreatinin Sammelurin", "target_name"]
    assert "Serum or Plasma" in first.loc["Natrium i.S.", "target_name"]
    assert "from 'U.'" in first.loc["Kalium i.U.", "explanation"]


def test_a_one_letter_comma_field_is_a_cut_specimen():
    """benchmarks/results/comma-cuts/RULE.md: "Creatinine,U" states urine; a letter whose
    spellings split between groups ("F": fluid, feces, fetus) says nothing."""
    from codemap.domains.lab.loinc import text_axes

    assert text_axes("Creatinine,U").group == "urine" and text_axes("Glucose, S").group == "blood"
    assert text_axes("Thing, F").group == "" and text_axes("Protein, Total").group == ""
    assert text_axes("Kalium i.U.").said["system"] == "U."  # the German cut as before
