"""What a row states binds its candidates (issue #52): the specimen read from LOINC's own
systems, short names and German variant; a contradicted stated axis ranks below every
candidate that does not contradict it; the confidence of a contradicted candidate is capped."""
import pandas as pd
import pytest
from typer.testing import CliRunner

from codemap.cli import app
from codemap.domains.lab.loinc import (component_parts, row_specimen_table, specimen_table,
                                       system_specimen_of, text_axes, with_short_name_axes)
from codemap.domains.lab.specimens import LIQUID, Specimen, shared_start
from codemap.domains.lab.text import SpecimenScorer, TextAxisScorer
from codemap.rank.candidates import CONTRADICTED_CAP, candidate_features, capped, FEATURES

runner = CliRunner()


@pytest.mark.parametrize("text, group, qualifier", [
    ("Urinary potassium", "urine", ""),        # a bent word: "urinary" of "urine"
    ("Potassium, urinaire", "urine", ""),
    ("Sweat chloride", "sweat", ""),           # a specimen LOINC names, not in the hand table
    ("Saliva cortisol", "saliva", ""),
    ("CSF glucose", "csf", ""),
    ("Glucose LCR", "csf", ""),
    ("Kalium im Urin", "urine", ""),
    ("Zink in Sperma", "semen", ""),           # the German variant's system, learned by code
    ("pO2 arterial", "blood", "arterial"),     # a qualifier alone states its group
    ("pO2 arteriell", "blood", "arterial"),
    ("Cord blood pH", "blood", "cord"),
    ("Chloride Sweat", "sweat", ""),           # a short name's system word
    ("PO2-BldA", "blood", "arterial"),         # a short name's word for a qualified blood
    ("O2 Sat BldV", "blood", "venous"),
    ("Red blood cell count", "", ""),          # cells, not the specimen
    ("Plasma Cells %", "", ""),
    ("Sodium", "", ""),
])
def test_the_row_states_its_specimen(text, group, qualifier):
    axes = text_axes(text)
    assert (axes.group, axes.qualifier) == (group, qualifier)
    if group:
        assert axes.said["system"]  # the words that told us, for the explanation


def test_specimen_tables_are_learned_from_loinc():
    table = specimen_table()
    own = {specimen.group for _, specimen in table.spellings}
    assert {"sweat", "saliva", "semen"} <= own  # systems of the shipped names, groups of their own
    assert {"arterial", "venous", "capillary", "cord"} <= set(table.qualifiers)
    assert "cells" not in table.qualifiers and "tissue" not in own  # analyte words are not
    assert system_specimen_of("Arterial blood") == Specimen("blood", "arterial")
    assert system_specimen_of("Serum or Plasma") == Specimen("blood", "", part=LIQUID)
    assert system_specimen_of("Blood") == Specimen("blood", "")
    assert ("schwei", Specimen("sweat")) in row_specimen_table().spellings  # German "Schweiß"


@pytest.mark.parametrize("text, part", [
    ("Serum bicarbonate", LIQUID), ("Plasma lactate", LIQUID), ("Kalium i.S.", LIQUID),
    ("Glucose SerPl", LIQUID), ("Lactate blood", ""),
])
def test_a_stated_serum_or_plasma_is_no_whole_blood(text, part):
    """Serum and plasma are blood without its cells: a row that states one is contradicted by a
    whole-blood system, and agrees with Serum, Plasma, Serum or Plasma; a row's "blood" states
    no part (lists write it of serum tests). benchmarks/results/stated-serum/RULE.md"""
    axes = text_axes(text)
    assert axes.group == "blood" and axes.part == part
    stated = Specimen(axes.group, axes.qualifier, part=axes.part)
    assert stated.contradicted_by(system_specimen_of("Blood")) == bool(part)
    assert stated.contradicted_by(system_specimen_of("Arterial blood")) == bool(part)
    for system in ("Serum or Plasma", "Serum", "Plasma", "Platelet poor plasma"):
        assert not stated.contradicted_by(system_specimen_of(system))


def test_shared_start_bends_long_spellings_only():
    assert shared_start("urinary", "urine") and shared_start("arteriell", "arterial")
    assert not shared_start("serology", "serum") and not shared_start("liquid", "liquor")
    assert not shared_start("urn", "ur") and shared_start("urines", "urine")  # a plural bends


def test_a_contradicted_stated_axis_binds():
    serum = {"code": "2823-3", "name": "Potassium [Moles/volume] in Serum or Plasma",
             "system": "Serum or Plasma"}
    urine = {"code": "2828-2", "name": "Potassium [Moles/volume] in Urine", "system": "Urine"}
    text = TextAxisScorer("text_specimen")
    against, fits = text.score({"text": "Urinary potassium"}, serum), text.score(
        {"text": "Urinary potassium"}, urine)
    assert against.contradicts and against.tier < 0 and "from 'urinary'" in against.reason
    assert not fits.contradicts and fits.tier == 0 and fits.reason.endswith("✔")
    column = SpecimenScorer().score({"specimen": "Arterial blood"},
                                    {"code": "11556-8", "system": "Blood"})
    assert column.contradicts and column.tier < 0  # a stated qualifier: plain "Blood" lacks it


def test_analyte_and_its_tests():
    assert component_parts("bilirubin.direct") == ("bilirubin", frozenset({"direct"}))
    analyte, detail = component_parts("glomerular filtration rate/1.73 sq m.predicted among blacks")
    assert analyte == "glomerular filtration rate" and "blacks" in detail
    assert component_parts("sodium") == ("sodium", frozenset())


def test_confidence_reads_contradictions_and_caps_them():
    found = pd.DataFrame({
        "query": [0, 0, 1, 1], "rank": [1, 2, 1, 2], "score": [0.95, 0.90, 0.9, 0.5],
        "encoder_score": [0.9, 0.8, 0.9, 0.5], "lexical_score": [0.9, 0.8, 0.9, 0.5],
        "explanation": ["text says urine, from 'urinary'; candidate is Serum or Plasma ✘ (-0.08); "
                        "common test rank 4 ~ (+0.07)",
                        "text says urine, from 'urinary'; candidate is Urine ✔ (+0.03)",
                        "common test rank 20 ~ (+0.05)", ""]})
    features = dict(zip(FEATURES, candidate_features(found).T))
    assert list(features["contradicting"]) == [1, 0, 0, 0]
    assert list(features["agreeing"]) == [0, 1, 0, 0]
    assert list(features["top_contradicted"]) == [1, 1, 0, 0]
    assert features["margin_consistent"][0] == pytest.approx(0.95 - 0.90)  # its rival agrees
    assert features["margin_consistent"][2] == pytest.approx(0.4)
    assert capped(pd.Series([0.99, 0.99, 0.99, 0.2]).to_numpy(), found).tolist() == [
        CONTRADICTED_CAP, 0.99, 0.99, 0.2]


@pytest.mark.slow
def test_stated_specimens_keep_their_candidates_through_the_cli(tmp_path, shared_cache):
    source = tmp_path / "labs.csv"
    source.write_text("code,label\n1,Urinary potassium\n2,Sweat chloride\n3,pO2 arterial\n"
                      "4,CSF glucose\n5,Kalium im Urin\n")
    out = tmp_path / "out.csv"
    result = runner.invoke(app, ["map", str(source), "--target", "LOINC", "-o", str(out), "-q",
                                 "--cache-dir", str(shared_cache)])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    top = frame[frame["rank"] == "1"].set_index("source_code")
    assert top["target_code"].to_dict() == {"1": "2828-2", "2": "2077-6", "3": "2703-7",
                                           "4": "2342-4", "5": "2828-2"}
    contradicted = frame[frame["explanation"].str.contains("✘")]
    assert (pd.to_numeric(contradicted["confidence"]) <= CONTRADICTED_CAP).all()


def test_short_name_system_words_are_learned_in_either_order():
    from codemap.domains.lab.loinc import short_name_readings

    systems = short_name_readings()[1]
    assert systems["blda"] == "Arterial blood" and systems["bldcov"] == "Venous cord blood"
    assert "est" not in systems  # "Blood Estimated from glycated hemoglobin" spells no "est"


def test_a_stated_quantitative_scale_binds_against_presence_codes():
    from codemap.domains.lab.loinc import property_scales

    scales = property_scales()  # learned from the German variant's SCALE, by property
    assert scales["PrThr"] == scales["Imp"] == "Ord" and scales["MCnc"] == scales["ACnc"] == "Qn"
    assert "Titr" not in scales  # semi-quantitative: says nothing
    assert text_axes("Mumps IgG Ser Qn EIA").scale == "Qn" and text_axes("HCV Quant PCR").scale
    assert not text_axes("Mumps IgG Ser").scale
    scale = TextAxisScorer("text_scale", 0.03, -0.05)
    row = {"text": "Mumps IgG Ser Qn EIA", "unit": "[IU]/mL"}  # read beside a unit column too
    presence = scale.score(row, {"code": "7966-5", "name": "Mumps virus IgG Ab [Presence] in Serum"})
    amount = scale.score(row, {"code": "40749-4",
                               "name": "Mumps virus IgG Ab [Units/volume] in Serum by Immunoassay"})
    assert presence.contradicts and presence.tier < 0 and "(Ord) ✘" in presence.reason
    assert not amount.contradicts and amount.adjust > 0


def test_stated_hours_agree_with_a_challenge_and_a_rate_fits_its_period():
    """benchmarks/results/stated-period/RULE.md: "Glucose - 2 hour" agrees with a "--2 hours
    post" challenge code and contradicts a point-in-time one; "mL/24 hr" fits a 24-hour volume."""
    from codemap.domains.lab.columns import UnitScorer

    timing = TextAxisScorer("text_timing", 0.03, -0.08)
    row = {"text": "Glucose - 2 hour"}
    challenge = timing.score(row, {"code": "1514-9", "name": "Glucose [Mass/volume] in Serum or "
                                                             "Plasma --2 hours post 100 g glucose PO"})
    other_hours = timing.score(row, {"code": "1504-0", "name": "Glucose [Mass/volume] in Serum or "
                                                               "Plasma --1 hour post 50 g glucose PO"})
    point = timing.score(row, {"code": "2345-7", "name": "Glucose [Mass/volume] in Serum or Plasma"})
    assert not challenge.contradicts and "2H post ✔" in challenge.reason
    assert other_hours.contradicts and point.contradicts and point.tier < 0
    # As LOINC's short names write a challenge ("1H p Glc"), on the row's side and on a short-name
    # table's (benchmarks/results/challenge-hours/RULE-2.md).
    short = {"text": "Glucose 1H p Glc SerPl"}
    assert not timing.score(short, {"code": "1504-0", "name": "Glucose [Mass/volume] in Serum or "
                                    "Plasma --1 hour post 50 g glucose PO"}).contradicts
    assert timing.score(short, {"code": "2345-7", "name": "Glucose [Mass/volume] in Serum or "
                                "Plasma"}).contradicts
    table = with_short_name_axes(pd.DataFrame({"code": ["32997-9", "3520-4"], "name": [
        "cycloSPORINE 2h p Bld-mCnc", "cycloSPORINE Bld-mCnc"]}))
    dosed = {"text": "Cyclosporin [Masse/Volumen] in Blut --2 Stunden nach Dosis"}
    after_dose, plain = (timing.score(dosed, concept) for concept in table.to_dict("records"))
    assert not after_dose.contradicts and after_dose.adjust > 0 and plain.contradicts
    unit = UnitScorer()
    day = unit.score({"unit": "mL/24 hr"}, {"code": "3167-4", "name": "Volume of 24 hour Urine",
                                           "property": "Vol"})
    spot = unit.score({"unit": "mL/24 hr"}, {"code": "28009-9", "name": "Volume of Urine",
                                            "property": "Vol"})
    assert day.adjust > 0 and not day.contradicts and spot.contradicts


def test_six_misreadings_of_a_row_are_read_right():
    """benchmarks/results/misreadings/RULE.md."""
    from codemap.domains.lab.units import parse_unit

    cord = text_axes("HCO3 BldCoA")  # itself a spelling: not bent into "bldcov"
    assert (cord.group, cord.qualifier) == ("blood", "arterial")
    assert text_axes("urinary blood").group == "urine"  # a bent word still reads as before
    assert not text_axes("Codeine (cutoff 40 ng/mL)").properties  # a screen's cutoff
    assert "MCnc" in text_axes("Codeine ng/mL").properties
    assert not text_axes("HSV type 1 DNA PCR").properties and text_axes("Anti-A Titr Ser").properties
    assert text_axes("GTT 75Gm 1.0Hr").timing == "1H" and text_axes("Urine 24 hr").timing == "24H"
    assert parse_unit("#/100 WBC").properties == {"NFr"} and not parse_unit("units").properties


def test_a_property_code_loinc_writes_inside_components_states_no_property():
    """benchmarks/results/component-words/RULE.md: "time" and "type" are learned from the
    built-in components ("Prothrombin time (PT)", "Blood product type"); written in a row they
    name an analyte or a method as often as the property. A bracket still states it."""
    from codemap.domains.lab.loinc import component_word_codes

    assert {"time", "type"} <= component_word_codes() and "mcnc" not in component_word_codes()
    for text in ("HIV-1 RNA Pl Qn Real Time PCR", "B-Type Natriuretic Peptide", "Prothrombin Time"):
        assert not text_axes(text).properties, text
    assert text_axes("Blood product [Type]").properties == {"Type"}
    assert text_axes("Chol SerPl-mCnc").properties == {"MCnc"}


def test_a_subpart_the_row_writes_binds_like_a_stated_axis():
    """benchmarks/results/stated-subpart/RULE.md: "ionized" of "Calcium, ionized" is the
    subpart of Calcium.ionized's component; plain Calcium contradicts it; a row that writes no
    subpart of the analyte, and an analyte with none learned, get no evidence."""
    from codemap.domains.lab.columns import CONTRADICTS
    from codemap.domains.lab.loinc import analyte_subparts, own_subparts
    from codemap.domains.lab.text import SubpartScorer

    assert {"direct", "total"} <= analyte_subparts()["bilirubin"]
    assert "total" not in analyte_subparts().get("cholesterol", ())  # only in a ratio
    assert own_subparts("Protein.monoclonal/Protein.total") == {"monoclonal"}
    assert own_subparts("Albumin/Creatinine") == frozenset()
    plain = {"code": "17861-6", "name": "Calcium [Mass/volume] in Serum or Plasma"}
    ionized = {"code": "1994-3", "name": "Calcium.ionized [Moles/volume] in Blood"}
    scorer = SubpartScorer()
    said = {"text": "Calcium, ionized"}
    assert scorer.score(said, ionized).adjust > 0 and not scorer.score(said, ionized).contradicts
    assert scorer.score(said, plain).contradicts and scorer.score(said, plain).tier == CONTRADICTS
    assert scorer.score({"text": "Calcium"}, plain).adjust == 0
    # RULE-2: an initial right before the analyte's word states the subpart it begins ("T Bil");
    # a cut does not ("gas" is no cut of gastrointestinal in "Hemoglobin blood gas").
    direct = {"code": "1968-7", "name": "Bilirubin.direct [Mass/volume] in Serum or Plasma"}
    assert scorer.score({"text": "T-Bil"}, direct).contradicts
    assert scorer.score({"text": "Bili T"}, direct).adjust == 0
    hgb = {"code": "718-7", "name": "Hemoglobin [Mass/volume] in Blood"}
    assert scorer.score({"text": "Hemoglobin blood gas"}, hgb).adjust == 0
    assert scorer.score({"text": "Sodium ionized"}, {"code": "2951-2",
                        "name": "Sodium [Moles/volume] in Serum or Plasma"}).adjust == 0


def test_the_total_of_an_analyte_shares_the_analytes_name_score():
    """benchmarks/results/whole-analyte/RULE.md: urine's "Bilirubin" and serum's
    "Bilirubin.total" are one component to the backoff, so a row naming bilirubin alone is
    settled by commonness, not by the bare name of the urine codes."""
    from codemap.domains.lab.loinc import whole_analyte
    from codemap.domains.lab.text import ComponentBackoff

    assert whole_analyte("Bilirubin.total") == "Bilirubin"
    assert whole_analyte("Bilirubin.direct") == "Bilirubin.direct"
    assert whole_analyte("Cholesterol.total/Cholesterol in HDL") == "Cholesterol.total/Cholesterol in HDL"
    key = ComponentBackoff().sibling_key({"text": "Bili"})
    urine = {"code": "5770-3", "name": "Bilirubin [Presence] in Urine by Test strip"}
    serum = {"code": "1975-2", "name": "Bilirubin.total [Mass/volume] in Serum or Plasma"}
    direct = {"code": "1968-7", "name": "Bilirubin.direct [Mass/volume] in Serum or Plasma"}
    assert key(urine) == key(serum) != key(direct)
    stated = ComponentBackoff().sibling_key({"text": "Bilirubin urine"})
    assert stated(urine) != stated(serum)  # a stated specimen keeps them apart


def test_level_states_an_amount_of_either_kind():
    """benchmarks/results/level-filler/RULE-2.md: "HbA1c level" is a fraction, "Tobramycin
    level" a mass concentration: "level" admits both and no susceptibility ("level" read as a
    concentration alone sent "HbA1c level (IFCC)" to an antibody in units per volume)."""
    read = text_axes("HbA1c level (IFCC)").properties
    assert {"MFr", "MCnc"} <= read and "Susc" not in read and "PrThr" not in read
    assert text_axes("Glucose conc").properties.isdisjoint({"MFr", "NFr"})


def test_a_british_spelling_states_its_american_specimen():
    """benchmarks/results/british-spellings/RULE.md: "Faecal occult blood" is stool (it read
    "blood" and went to pH of Blood); "Faeces" and "Urine" read as before."""
    assert text_axes("Faecal occult blood").group == "stool"
    assert text_axes("Faeces").group == "stool" and text_axes("Urine").group == "urine"


def test_a_word_telling_sibling_tests_apart_binds():
    """benchmarks/results/variant-words/RULE-2.md: "IgG" and "IgM" tell rubella antibody tests
    apart (learned from built-in components differing in one word), so the IgM code contradicts
    "Rubella IgG"; the IgG code and a one-word test get no evidence (no agreement bonus); a word
    of one or two characters counts only beside the component's word next to its place; an
    abbreviation of two or three letters also where a row word spells it out (RULE-3)."""
    from codemap.domains.lab.columns import CONTRADICTS
    from codemap.domains.lab.loinc import variant_words
    from codemap.domains.lab.text import VariantScorer

    assert variant_words("Rubella virus IgM Ab") == (("igm", frozenset({"igg"}),
                                                      frozenset({"virus", "ab"})),)
    assert variant_words("Calcium.ionized") == ()  # a subpart: text_subpart's
    igm = {"code": "5335-5", "name": "Rubella virus IgM Ab [Units/volume] in Serum by Immunoassay"}
    igg = {"code": "5334-8", "name": "Rubella virus IgG Ab [Units/volume] in Serum by Immunoassay"}
    scorer = VariantScorer()
    said = {"text": "Rubella IgG Ser Qn EIA (D)"}
    assert scorer.score(said, igm).contradicts and scorer.score(said, igm).tier == CONTRADICTS
    assert "text says igg; candidate is igm" in scorer.score(said, igm).reason
    assert scorer.score(said, igg).adjust == 0
    assert scorer.score({"text": "Rubella"}, igm).adjust == 0
    troponin_t = {"code": "6598-7", "name": "Troponin T.cardiac [Mass/volume] in Serum or Plasma"}
    assert scorer.score({"text": "Troponin I"}, troponin_t).contradicts
    protein_s = {"code": "27822-6", "name": "Protein S Ag actual/normal in Platelet poor plasma"}
    assert scorer.score({"text": "Protein C Ag"}, protein_s).contradicts
    assert scorer.score({"text": "C reactive protein"}, protein_s).adjust == 0  # "c" not beside
    assert scorer.for_row({"text": "Sodium"}) is None
    # RULE-3: a row word that spells out a variant abbreviation writes it ("antigen": Ag).
    surface_ab = {"code": "22322-2", "name": "Hepatitis B virus surface Ab [Presence] in Serum"}
    surface_ag = {"code": "5196-1", "name": "Hepatitis B virus surface Ag [Presence] in Serum"}
    antigen = {"text": "Hepatitis B Surface Antigen"}
    assert "text says antigen; candidate is ab" in scorer.score(antigen, surface_ab).reason
    assert scorer.score(antigen, surface_ag).adjust == 0
    assert scorer.score({"text": "Hepatitis B Surface Antibody"}, surface_ag).contradicts


def test_a_loinc_class_named_beside_other_words_states_its_specimen():
    """benchmarks/results/class-specimens/RULE.md: "RBC:UA" is urine (UA: 99 % urine codes);
    "UA" alone may be uric acid and says nothing; a class of mixed specimens (Chem) says nothing."""
    from codemap.domains.lab.loinc import class_specimens

    classes = class_specimens()
    assert classes["ua"] == "urine" and "chem" not in classes and "micro" not in classes
    assert text_axes("RBC:UA").group == "urine" and text_axes("RBC:UA").said["system"] == "UA"
    assert text_axes("UA").group == "" and text_axes("Glucose Chem").group == ""


def test_a_row_that_names_its_tests_specimen_field_maps_to_the_field(tmp_path, shared_cache):
    """benchmarks/results/specimen-fields/RULE.md: "HPV Source" and "BRCA Specimen" name the
    specimen a test was run on (31208-2, of unspecified specimen), not the test; the heads are
    learned from the field components; "Random Urine Specimen" and "Volume of Semen" state a
    specimen, "Blood Product Source" is a component of its own."""
    from codemap.domains.lab.specimen_fields import named_field, target_fields
    from codemap.domains.lab.text import SpecimenFieldScorer
    from codemap.vocab.vocabulary import builtin_loinc

    assert named_field("HPV Source") == ("Source", "source")
    assert named_field("BRCA Specimen") == ("Specimen", "")
    assert named_field("Cancer Panel, Hereditary, Spcm") == ("Spcm", "")
    for text in ("Random Urine Specimen", "Volume of Semen", "Blood Product Source",
                 "Specimen Comment:", "Sodium"):
        assert named_field(text) == ("", ""), text
    fields = target_fields(builtin_loinc().concepts)
    assert {"31208-2", "19763-2"} <= fields.codes and fields.commonest == "31208-2"
    scorer = SpecimenFieldScorer(fields=fields)
    row = {"text": "HPV Source"}
    field = scorer.score(row, {"code": "31208-2",
                               "name": "Specimen source [Identifier] of Unspecified specimen"})
    smear = scorer.score(row, {"code": "19763-2", "name": "Specimen source [Identifier] in "
                               "Cervical or vaginal smear or scraping by Cyto stain"})
    result = scorer.score(row, {"code": "44547-8", "name": "Human papilloma virus DNA [Presence] "
                                "in Unspecified specimen by Probe and target amplification"})
    assert field.reason.endswith("✔") and not field.contradicts
    assert smear.contradicts and result.contradicts and result.tier < 0
    assert scorer.candidates(row) == fields.codes and not scorer.candidates({"text": "Sodium"})
    source = tmp_path / "fields.csv"
    source.write_text("code,name\n1,HPV Source\n2,BRCA Specimen\n3,Cytomegalovirus PCR Source\n")
    out = tmp_path / "out.csv"
    result = runner.invoke(app, ["map", str(source), "--target", "LOINC", "-o", str(out), "-q",
                                 "--cache-dir", str(shared_cache)])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert set(frame[frame["rank"] == "1"]["target_code"]) == {"31208-2"}


def test_a_test_adding_words_the_row_leaves_unwritten_yields_to_the_plainer_test():
    """benchmarks/results/plainer-test/RULE.md: "Creatine kinase.MB" adds "MB" to the built-in
    "Creatine kinase"; a row naming creatine kinase without "MB" gives it a small unbinding
    malus. A row that writes the added word (or a word it abbreviates: "ab" of "antibody"), a
    row naming no word of the plainer test, and "Bilirubin.total" (the analyte itself) get none."""
    from codemap.domains.lab.plainer import PlainerTestScorer, plainer_tests

    ck_mb = {"code": "13969-1", "name": "Creatine kinase.MB [Mass/volume] in Serum or Plasma"}
    scorer = PlainerTestScorer()
    found = scorer.score({"text": "Serum creatine kinase"}, ck_mb)
    assert found.adjust < 0 and not found.contradicts and "mb" in found.reason
    assert scorer.score({"text": "Creatine kinase MB"}, ck_mb).adjust == 0
    assert scorer.score({"text": "Creatinkinase"}, ck_mb).adjust < 0  # the German variant's word
    assert scorer.score({"text": "Troponin"}, ck_mb).adjust == 0
    ab = {"code": "8098-6", "name": "Thyroglobulin Ab [Units/volume] in Serum or Plasma"}
    assert scorer.score({"text": "Thyroglobulin"}, ab).adjust < 0
    assert scorer.score({"text": "Thyroglobulin antibody"}, ab).adjust == 0
    assert plainer_tests("Bilirubin.total") == ()
    total = {"code": "1975-2", "name": "Bilirubin.total [Mass/volume] in Serum or Plasma"}
    assert scorer.score({"text": "Bilirubin"}, total).adjust == 0
    # the second reading's words count as the row's
    assert scorer.score({"text": "CK", "reading": ("CK creatine kinase MB", None)}, ck_mb).adjust == 0
    # RULE-2: initials write an added word; a component read from a short name is not judged
    hdl = {"code": "2085-9", "name": "Cholesterol in HDL [Mass/volume] in Serum or Plasma"}
    assert scorer.score({"text": "Cholesterol"}, hdl).adjust < 0
    assert scorer.score({"text": "high density lipoprotein cholesterol"}, hdl).adjust == 0
    assert plainer_tests("Serine Spec") == () and plainer_tests("Gentamicin Dose") == ()


def test_a_method_word_some_test_also_has_binds_against_its_tests_other_methods():
    """benchmarks/results/shared-methods/RULE.md, RULE-2.md: "screen" is a component word
    ("Blood group antibody screen"), so the row's method reader leaves it out; against a test
    that has a code by "Screen method" it states that method, and the test's codes by another
    method or by none contradict the row. The test's own word, a test with no such code and a
    row writing no such word are not judged; the code by the method earns nothing."""
    from codemap.domains.lab.loinc import method_words, shared_method_words
    from codemap.domains.lab.shared_methods import SharedMethodScorer

    assert "scree" in shared_method_words() and "scree" not in method_words()
    assert "stool" not in shared_method_words()  # a specimen word: the specimen readers'
    scorer = SharedMethodScorer()
    row = {"text": "Benzodiazepines Screen, Urine"}
    plain = {"code": "3390-2", "name": "Benzodiazepines [Presence] in Urine"}
    confirmed = {"code": "16195-0", "name": "Benzodiazepines [Presence] in Urine by Confirmatory method"}
    screened = {"code": "14316-4", "name": "Benzodiazepines [Presence] in Urine by Screen method"}
    for other in (plain, confirmed):
        found = scorer.score(row, other)
        assert found.contradicts and found.tier < 0 and found.adjust < 0, found
    assert scorer.score(row, screened).adjust == 0 and not scorer.score(row, screened).contradicts
    antibody = {"code": "890-4", "name": "Blood group antibody screen [Presence] in Serum or Plasma"}
    assert not scorer.score({"text": "Antibody Screen"}, antibody).contradicts  # its own word
    sodium = {"code": "2951-2", "name": "Sodium [Moles/volume] in Serum or Plasma"}
    assert not scorer.score({"text": "Sodium screen"}, sodium).contradicts  # no screen code
    assert scorer.for_row({"text": "Sodium"}) is None
    crp = {"code": "1988-5", "name": "C reactive protein [Mass/volume] in Serum or Plasma"}
    assert scorer.score({"text": "CRP, High Sensitivity"}, crp).contradicts
