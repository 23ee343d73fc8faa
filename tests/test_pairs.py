"""The second stage's training rows: the noise model writes rows the way lab catalogues and
pharmacy lists do, from codemap's own vocabulary tables, never from an evaluation set's names."""
import random

import pandas as pd
import pytest

from codemap.train.pairs import build, noise
from codemap.train.pairs.noise import DrugConcept, LabCode


def test_surface_moves_are_the_habits_they_name():
    rng = random.Random(0)
    assert noise.dotted("SGPT", rng) in {"S.G.P.T", "S G P T", "S. G. P. T"}
    assert noise.dotted("T4", rng) == "T 4" and noise.dotted("Sodium", rng) == "Sodium"
    cut = noise.cut("Creatinine", rng)
    assert "Creatinine".startswith(cut) and 4 <= len(cut) <= 7 and cut[-1] not in "aeiou"
    slipped = noise.typo("Potassium serum", rng)
    assert slipped != "Potassium serum" and abs(len(slipped) - len("Potassium serum")) <= 1
    assert noise.component_words("Cholesterol.in HDL", random.Random(1)) in {
        "HDL cholesterol", "Cholesterol HDL"}


def test_lab_rows_are_deterministic_and_use_every_source_of_a_code():
    lab = LabCode(code="2823-3", component="Potassium", short_component="Potassium",
                  german="Kalium", group="serum/plasma", prop="SCnc", timing="Pt", method="",
                  units=("mmol/L",), abbreviations=("K",), symbol="K")
    first = [noise.lab_row(lab, random.Random(7)) for _ in range(1)]
    assert first == [noise.lab_row(lab, random.Random(7))]
    rows = [noise.lab_row(lab, random.Random(seed)) for seed in range(300)]
    moves = {move for row in rows for move in row.how.split("+")}
    assert {"component", "german", "abbreviation", "symbol", "specimen in text",
            "specimen column", "unit column"} <= moves
    assert all(row.text.strip() for row in rows)
    assert {row.unit for row in rows} == {"", "mmol/L"}
    assert any("Kalium" in row.text or "KALIUM" in row.text for row in rows)


def test_drug_rows_rewrite_strength_form_and_name():
    drug = DrugConcept("1", "acetaminophen 325 MG Oral Tablet [Tylenol]",
                       ("acetaminophen|paracetamol",))
    forms = {"Oral Tablet": ["tablet", "tab", "tabs"]}
    texts = {noise.drug_row(drug, forms, random.Random(seed)).text.lower() for seed in range(200)}
    assert any("paracetamol" in t for t in texts) and any(t.startswith("tylenol") for t in texts)
    assert any("325mg" in t for t in texts) and any("325 mg" in t for t in texts)
    assert any(t.endswith(" tab") for t in texts) and not any("oral tablet" in t and "tab " in t
                                                              for t in texts)


def test_dose_form_words_come_from_the_shipped_table():
    forms = build.dose_form_abbreviations()
    assert {"tab", "tabs"} <= set(forms["Oral Tablet"]) and "susp" in forms["Oral Suspension"]
    assert "inj" in forms["Injectable Solution"] and "dr caps" in forms["Delayed Release Oral Capsule"]
    assert "susp" not in forms["Oral Tablet"]


def test_evaluation_sets_names_are_not_training_sources():
    codes = {lab.code: lab for lab in build.lab_codes()}
    short_held = build._gold_codes(build.SHORT_NAMES_HELD)
    german_held = build._gold_codes(build.GERMAN_NAMES_HELD)
    assert short_held and german_held
    assert all(codes[c].short_component == "" for c in short_held if c in codes)
    assert all(codes[c].german == "" for c in german_held if c in codes)
    # the others keep them: the rows still learn short and German names
    assert sum(1 for lab in codes.values() if lab.short_component) > 1000
    assert sum(1 for lab in codes.values() if lab.german) > 1000


def test_rows_equal_to_an_evaluation_query_are_dropped():
    rows = pd.DataFrame({"gold": ["a", "b"], "text": ["Potassium", "Kalium i.S. xyz"],
                         "unit": "", "specimen": "", "how": ""})
    kept = build.without_held_out(rows, {"potassium"})
    assert kept["text"].tolist() == ["Kalium i.S. xyz"]
