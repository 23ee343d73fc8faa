"""Lab text read as LOINC axes, the usual-variant priors and the usage prior keyed by code, on
the shipped LOINC lists and a real OMOP LOINC sample (codemap.domains.lab.loinc, loinc_commonness,
lab_text_evidence)."""
import csv

import pandas as pd
from typer.testing import CliRunner

from codemap.cli import app

from codemap.domains.lab.text import SpecimenScorer, UsualMethodScorer, UsualSpecimenScorer, text_scorers
from codemap.domains.lab.scorers import lab_scorers
from codemap.domains.lab.commonness import UsageScorer
from codemap.domains.lab.commonness import code_rank, usual_systems
from codemap.domains.lab.loinc import (bracket_properties, concept_axes, is_loinc_code, linguistic_variant,
                                      method_words, ranked_codes, text_axes, variant_specimens,
                                      _method_from_name)

from codemap.domains import prepare_target
from codemap.rank.prepare import row_fields
from codemap.read import read_code_list
from codemap.vocab import builtin_loinc

from .conftest import DATA

OMOP_LOINC = DATA / "omop_loinc_synthea.csv"


def _shipped(code: str) -> dict:
    """A concept of the shipped Top-2000 lists as ranking sees it (code, name, short name…)."""
    table = ranked_codes()
    return table[table["code"] == code].iloc[0].to_dict()


def test_long_names_state_their_property_in_english_and_in_the_shipped_german_variant():
    """A long name read as a local label states its property exactly, in either language: every
    shipped English long name and German linguistic-variant name with a bracket phrase the table
    knows reads as the property of the code's English long name."""
    german = linguistic_variant().set_index("code")["long_common_name"]
    assert {"masse volumen", "mol volumen", "# volumen"} <= {k.strip() for k in bracket_properties()}
    read = agree = 0
    for row in ranked_codes().to_dict("records"):
        prop = concept_axes(row).properties
        for name in (row["name"], german.get(row["code"], "")):
            said = text_axes(name).properties
            if "[" in name and said and prop:
                read += 1
                agree += said == prop
    assert read > 2500 and agree / read > 0.99, (read, agree)
    # A label without brackets is read as before: "Kalium i.S." states no property.
    assert not text_axes("Kalium i.S.").properties


def test_german_variant_names_state_their_specimen_group():
    """Every German linguistic-variant long name whose specimen the reader finds (hand-listed or
    learned from the variant by code) names the specimen group of the code's English system; the
    learned words reach the body fluids the hand list lacks, and an analyte word stays an analyte."""
    groups = {row["code"]: concept_axes(row).group for row in ranked_codes().to_dict("records")}
    read = agree = 0
    for code, name in linguistic_variant()[["code", "long_common_name"]].itertuples(index=False):
        said, has = text_axes(name).group, groups.get(code, "")
        if said and has:
            read += 1
            agree += said == has
    assert read > 1200 and agree / read > 0.97, (read, agree)
    assert variant_specimens()[" zerebrospinalflussigkeit "] == "csf"
    assert text_axes("Albumin in Zerebrospinalflüssigkeit").group == "csf"
    assert text_axes("Amylase in Körperflüssigkeit").group == "fluid"
    assert text_axes("Leukozyten im Urinsediment").group == "urine"
    assert not text_axes("Erythrozyten").group  # the red-cell count, not the system "RBC"


def test_german_variant_names_state_their_method():
    """A German long name that states a method is read as stating the English method of its code
    (learned from the variant by code); one without a method word states none, and analyte words
    stay analytes."""
    english = {row["code"]: _method_from_name(row["name"]) for row in ranked_codes().to_dict("records")}
    read = agree = 0
    for code, name in linguistic_variant()[["code", "long_common_name"]].itertuples(index=False):
        said = text_axes(name).methods
        if said and english.get(code):
            read += 1
            agree += english[code] in said
    assert read > 350 and agree / read > 0.95, (read, agree)
    assert "manual count" in text_axes("Lymphozyten/100 Leukozyten in Blut mit manueller Zählung").methods
    assert not text_axes("Thrombozyten [#/Volumen] in Blut").methods
    assert not text_axes("Kalium").methods


def test_short_names_read_as_text_agree_with_their_long_names():
    """Every shipped short name, read as a local label, against its own long name: the specimen
    group and the timing the text parser finds must be the long name's (a challenge code's:
    its challenge hours, as the timing axis compares them)."""
    table = ranked_codes()
    groups = timings = 0
    disagree = []
    for row in table.to_dict("records"):
        said, has = text_axes(row["short_name"]), concept_axes(row)
        if said.group and has.group:
            groups += 1
            if said.group != has.group and "+" not in row["short_name"]:
                disagree.append(row["code"])
        if said.timing and said.timing != "Pt":
            timings += 1
            assert said.timing == (has.challenge_hours or has.timing), row
    assert groups > 1500 and timings > 50
    # Two shipped rows disagree with themselves: short name "… Vag …", long name "… in Urethra"
    # and "… in Genital specimen" (groups of their own since the systems are learned).
    assert sorted(disagree) == ["32705-6", "53879-3"]


def test_parser_on_shipped_names():
    neutro = _shipped("770-8")  # "Neutrophils/leuk NFr Bld Auto"
    said = text_axes(neutro["short_name"])
    assert said.properties == {"NFr"} and said.group == "blood"
    assert said.methods == {"automated count"} == concept_axes(neutro).methods
    chol = _shipped("2093-3")  # "Cholest SerPl-mCnc"
    assert text_axes(chol["short_name"]).properties == {"MCnc"} == concept_axes(chol).properties
    creat = _shipped("14684-5")  # Creatinine [Moles/time] in 24 hour Urine, "Creat 24H Ur-mRate"
    assert (concept_axes(creat).timing, concept_axes(creat).group) == ("24H", "urine")
    assert (text_axes(creat["short_name"]).timing, text_axes(creat["short_name"]).group) == ("24H", "urine")
    # The long names themselves, read as text: property words and methods come through.
    count = _shipped("751-8")  # Neutrophils [#/volume] in Blood by Automated count
    assert {"NCnc"} <= text_axes(count["short_name"]).properties
    assert "calculation" in method_words()["calcu"]


def test_loinc_check_digit():
    assert all(is_loinc_code(code) for code in ranked_codes()["code"])
    assert not is_loinc_code("2160-1") and not is_loinc_code("HP:0001") and not is_loinc_code("2160")


def test_text_scorers_agree_and_contradict_with_reasons():
    specimen, prop, timing, method, _, _, _ = text_scorers()
    urine_24h, serum = _shipped("14684-5"), _shipped("2160-0")
    row = {"text": "Creat 24H Ur", "unit": "", "specimen": ""}
    assert timing.score(row, urine_24h).adjust > 0 > timing.score(row, serum).adjust
    assert timing.score(row, urine_24h).reason == "text says 24h, from '24h'; candidate is 24H ✔"
    assert specimen.score(row, urine_24h).adjust > 0 > specimen.score(row, serum).adjust
    assert specimen.score(row, serum).reason == \
        "text says urine, from 'ur'; candidate is Serum or Plasma ✘"
    assert specimen.score(row, serum).tier < 0 < timing.score(row, urine_24h).adjust  # it binds
    # A specimen column the specimen scorer reads is not counted a second time from the text.
    assert specimen.for_row({**row, "specimen": "Urine"}) is None
    # A unit column the unit scorer reads keeps the text's property words out.
    percent = {"text": "Neutrophils %", "unit": "", "specimen": ""}
    assert prop.score(percent, _shipped("770-8")).adjust > 0
    assert prop.score(percent, _shipped("751-8")).adjust < 0
    assert prop.for_row({**percent, "unit": "%"}) is None
    strip = {"text": "Prot Ur Strip", "unit": "", "specimen": ""}
    assert method.score(strip, _shipped("2888-6")).reason == ""  # no method: silent


def test_usual_variant_priors_learned_from_ranks():
    """Urate is ordered mostly in serum/plasma: with no specimen stated, the serum code gets the
    larger bonus; a text that names urine gives no bonus (the serum code's contradiction is the
    specimen scorers' to bind)."""
    assert max(usual_systems("urate"), key=usual_systems("urate").get) == "serum or plasma"
    prior = UsualSpecimenScorer()
    bare = {"text": "Urate", "unit": "", "specimen": ""}
    assert prior.score(bare, _shipped("3084-1")).adjust > prior.score(bare, _shipped("3086-6")).adjust > 0
    urine = {**bare, "text": "Urate Ur"}
    assert prior.score(urine, _shipped("3084-1")).adjust == 0
    assert prior.score(urine, _shipped("3086-6")).adjust <= 0
    method = UsualMethodScorer()
    assert method.for_row({"text": "Neutrophils/leuk NFr Bld Auto"}) is None  # method named
    assert method.score(bare, _shipped("3084-1")).reason.startswith("no method stated")


def test_usage_prior_applies_to_a_user_table_of_loinc_codes():
    """The OMOP LOINC sample has no rank column: the rank comes from the shipped lists by code."""
    table = pd.read_csv(OMOP_LOINC, dtype=str, keep_default_na=False)
    concepts = [{"code": c, "name": n} for c, n in zip(table["concept_code"], table["concept_name"])]
    usage = UsageScorer()
    ranked = [c for c in concepts if usage.score({}, c).adjust > 0]
    assert ranked and all(usage.score({}, c).reason == f"common test rank {code_rank(c['code'])} ~"
                          for c in ranked)
    assert usage.score({}, {"code": "2160-1", "name": "x"}).adjust == 0  # not a LOINC code


def test_scorers_switch_off_by_name():
    names = [s.name for s in lab_scorers()]
    assert {"text_specimen", "text_property", "text_timing", "text_method", "usual_specimen",
            "usual_method"} <= set(names)
    assert "usual_method" not in [s.name for s in lab_scorers(off=("usual_method",))]


def test_map_cli_explains_text_and_prior_evidence(tmp_path, shared_cache):
    """Urine short names of the short-name dev list whose code is in the OMOP sample, mapped onto
    that user table through the CLI: the explanation names the text's specimen and the rank."""
    codes = set(pd.read_csv(OMOP_LOINC, dtype=str)["concept_code"])
    with open(DATA / "loinc_short_units_dev.tsv", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle, delimiter="\t")
                if r["loinc_code"] in codes and " Ur" in r["label"]]
    source = tmp_path / "labs.csv"
    pd.DataFrame({"code": [r["loinc_code"] for r in rows],
                  "name": [r["label"] for r in rows]}).to_csv(source, index=False)
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(app, ["map", str(source), "--target", str(OMOP_LOINC), "-o",
                                      str(out), "-k", "3", "--cache-dir", str(shared_cache), "-q"])
    assert result.exit_code == 0, result.output
    found = pd.read_csv(out, dtype=str, keep_default_na=False)
    top = found[found["rank"] == "1"]
    assert top["explanation"].str.contains("text says urine, from 'ur'; candidate is Urine ✔").all()
    assert top["explanation"].str.contains("common test rank").any()


def test_usual_specimen_tells_serum_from_whole_blood():
    """Serum/plasma and whole blood are one specimen group, but not one usual specimen: with no
    specimen stated, the serum/plasma sodium (the far more ordered one) gets the larger bonus."""
    prior, bare = UsualSpecimenScorer(), {"text": "Natrium", "unit": "", "specimen": ""}
    serum, blood = prior.score(bare, _shipped("2951-2")), prior.score(bare, _shipped("2947-0"))
    assert serum.adjust > 5 * blood.adjust and "serum or plasma" in serum.reason


def test_a_stated_blood_group_lowers_the_less_usual_system():
    """"Blood" states the blood group and leaves Serum or Plasma and Blood open: the whole-blood
    potassium, ordered far less than the serum or plasma one, is lowered and says why; the
    commonest is not touched, nor a code of another group (its contradiction binds elsewhere)."""
    prior = UsualSpecimenScorer()
    row = {"text": "Potassium", "unit": "", "specimen": "Blood"}
    serum, blood = prior.score(row, _shipped("2823-3")), prior.score(row, _shipped("6298-4"))
    assert serum.adjust == 0 and blood.adjust < -0.02
    assert blood.reason.startswith("blood stated; blood is") and "serum or plasma" in blood.reason
    assert prior.score({**row, "specimen": "Urine"}, _shipped("2823-3")).adjust == 0
    # A component ordered in urine alone gets nothing either, so it does not gain on a component
    # whose urine orders are split between two systems (RULE-3's loss).
    assert prior.score({**row, "specimen": "Urine"}, _shipped("2756-5")).adjust == 0  # pH of Urine


def test_component_backoff_groups_only_what_the_row_cannot_tell_apart():
    """Siblings share a key when the row states no axis that separates them; a stated specimen
    or unit separates them again; a code that is not LOINC has no key."""
    from codemap.domains.lab.text import ComponentBackoff
    mass, moles, urine = _shipped("1975-2"), _shipped("14631-6"), _shipped("70199-5")
    bare = ComponentBackoff().sibling_key({"text": "Bilirubin, Total"})
    assert bare(mass) == bare(moles) == bare(urine) is not None
    in_urine = ComponentBackoff().sibling_key({"text": "Bilirubin, Total, urine"})
    assert in_urine(mass) == in_urine(moles) != in_urine(urine)
    with_unit = ComponentBackoff().sibling_key({"text": "Bilirubin, Total", "unit": "mg/dL"})
    assert with_unit(mass) != with_unit(moles)
    assert bare({"code": "HP:0001250", "name": "Seizure"}) is None


def test_sibling_scores_lift_a_variant_and_keep_its_own_score():
    """The lift: each candidate takes the best name score of its key; the one that has it, and
    candidates without a key, keep their own (the tie-break of the ranking)."""
    import numpy as np
    from codemap.rank.hybrid import _sibling_scores
    records = {0: {"k": "a"}, 1: {"k": "a"}, 2: {"k": None}, 3: {"k": "b"}}
    fused = np.array([0.6, 0.8, 0.9, 0.5])
    found = _sibling_scores(fused, [0, 1, 2, 3], records.__getitem__, lambda r: r["k"])
    assert found == {0: (0.6, 1), 1: (0.8, None), 2: (0.9, None), 3: (0.5, None)}
    assert _sibling_scores(fused, [0, 1], records.__getitem__, None) == {0: (0.6, None), 1: (0.8, None)}


def test_twins_apart_by_float_noise_do_not_lend_to_each_other():
    """A mass and a moles code with one name score the same up to float noise, which differs
    between a pooled search and the full one: neither takes the other's score, whichever order
    the noise puts them in, so both paths explain the row alike."""
    import numpy as np
    from codemap.rank.hybrid import _sibling_scores
    records = {0: {"k": "a"}, 1: {"k": "a"}}
    for noise in (1e-7, -1e-7):
        fused = np.array([0.74200001, 0.74200001 + noise])
        assert _sibling_scores(fused, [1, 0], records.__getitem__, lambda r: r["k"]) == {
            0: (float(fused[0]), None), 1: (float(fused[1]), None)}


def test_a_short_name_table_is_read_with_the_axes_its_long_names_give(tmp_path, shared_cache):
    """A LOINC table named by short names: a Top-2000 code takes its long name's axes, another
    code its short name's, read through what the shipped short names are learned to stand for;
    so the usual-specimen prior sends a bare "Sodium" to serum sodium, not urine or stool."""
    from codemap.domains.lab.loinc import reads_as_short_names, short_name_parts, with_short_name_axes
    from codemap.vocab import builtin_loinc

    assert short_name_parts("Bilirub Direct SerPl-mCnc") == ("Bilirub Direct", "SerPl", "mCnc")
    assert short_name_parts("WBC # Bld Auto") == ("WBC #", "Bld", "")
    rows = [("2951-2", "Sodium SerPl-sCnc"), ("2955-3", "Sodium Ur-sCnc"),
            ("15207-4", "Sodium Stl-sCnc"), ("1975-2", "Bilirub SerPl-mCnc"),
            ("2345-7", "Glucose SerPl-mCnc"), ("47620-0", "Glucose Stl-sCnc")]
    table = pd.DataFrame(rows, columns=["code", "name"])
    assert reads_as_short_names(table["name"]) and not reads_as_short_names(builtin_loinc().concepts["name"])
    read = with_short_name_axes(table).set_index("code")
    stool = concept_axes(read.loc["15207-4"].to_dict() | {"code": "15207-4"})  # not in the Top 2000
    assert (stool.component, stool.system, stool.properties) == ("sodium", "Stool", frozenset({"SCnc"}))
    assert concept_axes(read.loc["1975-2"].to_dict()).component == "bilirubin.total"
    assert read.loc["2955-3", "name"] == "Sodium Ur-sCnc"  # the table's own names are shown
    # A table that gives LOINC's COMPONENT (as a release does) keeps it: read from its short
    # name, "ACP SerPl-cCnc" is an analyte "acp" of its own.
    given = with_short_name_axes(pd.DataFrame([("1715-2", "ACP SerPl-cCnc", "Acid phosphatase"),
                                               ("15207-4", "Sodium Stl-sCnc", "")],
                                              columns=["code", "name", "component"]))
    assert [concept_axes(r).component for r in given.to_dict("records")] == ["acid phosphatase", "sodium"]
    target = tmp_path / "lab_codes.csv"
    table.to_csv(target, index=False)
    source = tmp_path / "labs.csv"
    source.write_text("code,name\nA,Sodium\nB,Glucose\n", encoding="utf-8")
    out = tmp_path / "labs.out.csv"
    result = CliRunner().invoke(app, ["map", str(source), "--target", str(target), "-o", str(out),
                                      "--cache-dir", str(shared_cache)])
    assert result.exit_code == 0, result.output
    top = pd.read_csv(out, dtype=str, keep_default_na=False).query("rank == '1'")
    assert top["target_code"].tolist() == ["2951-2", "2345-7"]
    assert "serum or plasma is" in top["explanation"].iloc[0]


def test_a_table_file_gives_each_code_its_analyte_by_a_component_column(tmp_path):
    """A LOINC table file with a `component` column (what a release gives every code): the
    code's analyte, which the two stages' analyte search finds, is its component, not its name
    ("ACP SerPl-cCnc" alone is no analyte a row would be near)."""
    from codemap.domains.lab.text import ComponentBackoff
    from codemap.vocab import load_target
    table = tmp_path / "loinc_table.csv"
    table.write_text("code,name,component\n1715-2,ACP SerPl-cCnc,Acid phosphatase\n"
                     "1975-2,Bilirubin.total [Mass/volume] in Serum or Plasma,\n", encoding="utf-8")
    prepared = prepare_target(load_target(str(table))).vocab.concepts
    family = ComponentBackoff().family
    assert [family(row) for row in prepared.to_dict("records")] == ["acid phosphatase", "bilirubin"]


def test_a_french_list_states_its_specimen():
    """A French list's specimen column ("Sérum" had been no specimen: the column was read with its
    accent) and French specimen words of a row's text: "Urines" (a plural), "LCR", "Selles"."""
    rows = {row["code"]: row for row in row_fields(read_code_list(DATA / "labs_fr.csv"))}
    loinc = prepare_target(builtin_loinc()).vocab.concepts.set_index("code")
    concept = lambda code: {"code": code, **loinc.loc[code].to_dict()}
    column = SpecimenScorer()
    assert column.score(rows["B01"], concept("2160-0")).reason == \
        "specimen Sérum fits Serum or Plasma ✔"
    assert column.score(rows["B01"], concept("2161-8")).adjust < 0  # creatinine, urine
    assert column.score(rows["B05"], concept("2888-6")).adjust > 0  # "Urines": protein, urine
    assert column.score(rows["B06"], concept("2342-4")).adjust > 0  # "LCR": glucose, CSF
    text = text_scorers()[0]
    said = lambda label: {"text": label, "unit": "", "specimen": ""}
    assert text.score(said("Protéines Urines"), _shipped("2888-6")).reason == \
        "text says urine, from 'urines'; candidate is Urine ✔"
    assert text.score(said("Glucose LCR"), _shipped("2345-7")).adjust < 0
    assert text_axes("Leucocytes Selles").group == "stool"
    assert text_axes("Créatinine Sérum").group == "blood"


def test_usual_priors_read_a_release_components_as_the_release_names_them():
    """A LOINC release writes COMPONENT "Bilirubin" for 1975-2 (whose long name reads
    "Bilirubin.total") and for the urine codes alike: keyed by the long names, every bilirubin
    code of a release would borrow the urine-only share of "bilirubin"; keyed by the release's
    own components, serum or plasma is the usual system of its "Bilirubin"."""
    import pandas as pd

    from codemap.domains.lab.commonness import target_shares, usage_shares

    release = pd.DataFrame({
        "code": ["1975-2", "1978-6", "5770-3"],
        "name": ["Bilirubin.total [Mass/volume] in Serum or Plasma", "Bilirubin [Mass/volume] in Urine",
                 "Bilirubin [Presence] in Urine by Test strip"],
        "component": ["Bilirubin", "Bilirubin", "Bilirubin"]})
    shipped, own = usage_shares().usual_systems("bilirubin"), target_shares(release).usual_systems("bilirubin")
    assert max(shipped, key=shipped.get) == "urine"
    assert max(own, key=own.get) == "serum or plasma"
    prior = UsualSpecimenScorer(shares=target_shares(release))
    row = {"text": "Bilirubin, Total", "unit": "", "specimen": ""}
    serum, urine = (prior.score(row, release.iloc[i].to_dict()) for i in (0, 2))
    assert serum.adjust > urine.adjust > 0
    assert serum.reason.startswith("no specimen stated; serum or plasma is")
