"""Learned abbreviations, category → CLASS and usage evidence, and the hybrid's margin on MIMIC."""
from dataclasses import replace

import pytest

from codemap.domains.lab.abbreviations import (builtin_abbreviations, expand_abbreviations,
                                   learn_abbreviations, with_expanded_short_names)
from codemap.config import EvalConfig, RankConfig
from codemap.domains.evidence import Evidence, for_row, weigh
from codemap.domains.lab.scorers import lab_scorers
from codemap.domains.lab.commonness import UsageScorer
from codemap.domains.lab.columns import CategoryScorer, category_classes, class_stem
from codemap.evaluate import eval_methods, evaluate_gold
from codemap.vocab import builtin_loinc

from .conftest import DATA


@pytest.fixture(scope="module")
def loinc_pairs():
    concepts = builtin_loinc().concepts
    return list(zip(concepts["short_name"], concepts["name"]))


def test_abbreviations_learned_from_loinc_pairs(loinc_pairs):
    learned = {a.short: a for a in learn_abbreviations(loinc_pairs)}
    assert learned["hgb"].expansion == "hemoglobin"
    assert learned["serpl"].expansion == "serum or plasma"
    assert learned["bld"].expansion == "blood"
    assert learned["ur"].expansion == "urine"
    assert learned["ppp"].how == "initials" and learned["ppp"].expansion == "platelet poor plasma"
    assert learned["bun"].expansion == "urea nitrogen"  # co-occurrence, not spelled out
    # English words and LOINC's own long-name words are never abbreviations.
    assert not {"at", "if", "ab", "ag"} & set(learned)


def test_shipped_table_is_the_learned_one(loinc_pairs):
    learned = {a.short: a.expansion for a in learn_abbreviations(loinc_pairs)}
    assert builtin_abbreviations() == learned


def test_expand_abbreviations_keeps_the_abbreviation():
    assert expand_abbreviations("Hgb Bld") == "Hgb hemoglobin Bld blood"
    assert expand_abbreviations("Hemoglobin Blood") == "Hemoglobin Blood"
    assert expand_abbreviations("Glucose at 2h", {"at": "antithrombin"}) == "Glucose at antithrombin 2h"
    vocab = builtin_loinc()
    expanded = with_expanded_short_names(vocab)
    extra = expanded.names[expanded.names["name_type"] == "short expanded"]
    assert len(extra) > 1000 and expanded.content_hash != vocab.content_hash
    assert "Creat creatinine SerPl serum or plasma-mCnc" in set(extra["name"])


def test_a_run_together_alias_reads_as_the_component_words_its_parts_spell():
    """benchmarks/results/camel-case/RULE.md: "TnT" is troponin T; where two word runs fit, the
    one more built-in codes hold ("TnI": troponin I, not trypsinogen I); a token that is no
    run-together ("MCV", "pH"), a learned abbreviation ("SerPl") or a word of the target
    ("HbA1c" stays, LOINC's German names write it) is left alone."""
    from codemap.domains.lab.run_together import run_together_parts, run_together_reader

    read = run_together_reader(builtin_loinc())
    assert read("TnT") == "TnT troponin t" and read("TnI") == "TnI troponin i"
    assert read("AnGap (bloed)") == "AnGap anion gap (bloed)"
    assert run_together_parts("TnT") == ("tn", "t") and run_together_parts("MCV") == ()
    assert run_together_parts("pH") == () and run_together_parts("B12") == ()
    for text in ("K+ SerPl", "Troponin T", "HbA1c", "Hgb"):
        assert read(text) == text


def test_a_loinc_table_that_types_no_short_names_has_every_name_expanded(tmp_path):
    """A site's LOINC table of code and short name: its names are expanded as short names are;
    the built-in LOINC, whose short names are typed, gets exactly what it got before."""
    from codemap.config import RankConfig
    from codemap.rank.lexical import load_or_build_lexical
    from codemap.domains import prepare_target
    from codemap.vocab import load_vocab_file

    builtin = builtin_loinc()
    assert (prepare_target(builtin).vocab.content_hash
            == with_expanded_short_names(builtin).content_hash)
    short = builtin.names[builtin.names["name_type"] == "short"]
    table = tmp_path / "lab_codes.csv"
    short[["code", "name"]].drop_duplicates("code").to_csv(table, index=False)
    site = prepare_target(load_vocab_file(table)).vocab
    # Names that read as short names, with no long name beside them: the expansions count
    # lexically too (typed "expanded", not the encoder-only "short expanded").
    extra = site.names[site.names["name_type"] == "expanded"]
    assert "Creat creatinine SerPl serum or plasma-mCnc" in set(extra["name"])
    assert len(extra) > 1000
    lexical = load_or_build_lexical(site, tmp_path).similarity(["creatinine serum"])[0]
    assert lexical[extra.index].max() > 0.5


def test_category_points_to_loinc_class():
    assert category_classes("Chemistry") == {"CHEM"}
    assert category_classes("Klinische Chemie") == {"CHEM"}
    assert "HEM/BC" in category_classes("Hämatologie")
    assert category_classes("Gerinnung") == {"COAG"}
    assert category_classes("") == frozenset() and category_classes("Misc stuff") == frozenset()
    assert class_stem("Chem") == "CHEM" and class_stem("MOLPATH.MUT") == "MOLPATH"
    scorer = CategoryScorer()
    fits = scorer.score({"category": "Hematology"}, {"class": "HEM/BC"})
    assert fits.adjust > 0 and "fits class HEM/BC" in fits.reason
    assert scorer.score({"category": "Hematology"}, {"class": "UA"}).adjust == 0
    assert scorer.score({"Fachbereich": "Hämatologie"}, {"class": "HEM/BC"}).adjust > 0


def test_usage_prefers_common_tests():
    scorer = UsageScorer()
    first, common, rare = (scorer.score({}, {"rank": r}) for r in ("1", "150", "9000"))
    assert first.adjust > common.adjust > rare.adjust > 0
    assert "rank 150" in common.reason
    assert scorer.score({}, {"rank": "0"}).reason == ""
    assert scorer.score({}, {"rank": ""}).reason == ""


def test_without_the_usage_prior_exact_twin_ties_still_go_to_the_counted_code():
    """Across languages the usage prior is off; its tie-break stays: the molar twin that only
    the SI list ranks (at its US twin's rank) sits a hair below, the counted code gets nothing."""
    ties = UsageScorer(ties_only=True)
    counted, twin = ({"code": "2160-0"}, {"code": "14682-9"})  # creatinine mass, moles
    assert ties.score({}, counted).adjust == 0 and ties.score({}, counted).reason == ""
    assert -0.01 < ties.score({}, twin).adjust < 0 and "SI twin" in ties.score({}, twin).reason
    full = UsageScorer()
    gap = full.score({}, counted).adjust - full.score({}, twin).adjust
    assert gap == pytest.approx(full.borrowed_hair) == ties.borrowed_hair  # the same hair
    names = lambda **kw: [s.name for s in lab_scorers(**kw)]
    assert "usage" in names(usage=False) and "usage" not in names(off=("usage",))


class _FlagScorer:
    """A plug-in scorer with only `score` (no `for_row`), as the evidence protocol allows."""

    name = "flag"

    def score(self, row, concept):
        return Evidence(0.01, "flagged") if row.get("flag") == concept["code"] else Evidence()


def test_scorers_bound_once_per_row():
    """Ranking binds the scorers to each row once (`for_row`): a scorer that cannot speak for the
    row (no unit, specimen or category) is left out, a score-only plug-in is still asked, and the
    evidence is what the per-candidate `score` calls give."""
    # The column scorers only: the text and usual-variant scorers have their own tests
    # (tests/test_lab_text_evidence.py).
    scorers = [*lab_scorers(off=("text_specimen", "text_property", "text_timing", "text_method",
                                 "text_subpart", "text_variant", "usual_specimen", "usual_method",
                                 "plainer_test")), _FlagScorer()]
    plain = {"text": "Glucose", "unit": "", "specimen": "", "flag": "2345-7"}
    assert len(for_row(scorers, plain)) == 2  # usage (row-independent) and the plug-in
    full = {**plain, "unit": "mg/dL", "specimen": "Blood", "category": "Chemistry"}
    assert len(for_row(scorers, full)) == 5
    concept = {"code": "2345-7", "name": "Glucose [Mass/volume] in Serum or Plasma",
               "property": "MCnc", "system": "Serum or Plasma", "specimen_group": "blood",
               "class": "CHEM", "rank": "1", "example_units": "mg/dL"}
    for row in (plain, full):
        each = [s.score(row, concept) for s in scorers]
        total, reasons, contradicted, tier = weigh(scorers, row, concept)
        assert total == sum(e.adjust for e in each) and not contradicted and tier == 0
        assert reasons[-1] == "flagged (+0.01)"
    assert [r.split(" ")[0] for r in weigh(scorers, full, concept)[1]] == [
        "unit", "specimen", "category", "common", "flagged"]


def test_eval_has_a_row_per_evidence():
    rows = eval_methods(RankConfig())
    for name in ("hybrid + unit", "hybrid + specimen", "hybrid + category", "hybrid + usage",
                 "hybrid + abbreviations"):
        assert name in rows
    assert rows["hybrid + abbreviations"].expand_abbreviations
    assert "category" in rows["hybrid + usage"].evidence_off
    assert "usage" not in rows["hybrid + usage"].evidence_off


def test_hybrid_beats_encoder_and_lexical_on_mimic(shared_cache):
    base = RankConfig()
    config = EvalConfig(gold=DATA / "mimic_labs_gold.tsv", target="LOINC", gold_col="loinc_code",
                        cache_dir=shared_cache, progress=False,
                        rank=replace(base, expand_abbreviations=False))
    scores = evaluate_gold(config)["scores"]
    hybrid, encoder, lexical = (scores[m] for m in ("hybrid (all evidence)", "encoder", "lexical"))
    assert hybrid.n == 177
    for k, margin in ((1, 0.05), (10, 0.02)):
        assert hybrid.acc[k] >= max(encoder.acc[k], lexical.acc[k]) + margin
    assert scores["hybrid + usage"].acc[1] > scores["hybrid, no evidence"].acc[1]


def test_a_percent_unit_fits_fractions_not_mass_concentration():
    """'%' is a fraction by its own dimensions; the LHNCBC table lists mass concentration too
    (some lab reported it in '%'), which then neither fits nor contradicts
    (benchmarks/results/unit-dimensions/RULE.md)."""
    from codemap.domains.lab.columns import UnitScorer
    from codemap.domains.lab.units import parse_unit

    percent = parse_unit("%")
    assert {"MFr", "NFr"} <= percent.properties - percent.loose and "MCnc" in percent.loose
    scorer = UnitScorer()
    row = {"unit": "%"}
    assert scorer.score(row, {"code": "4625-0", "property": "MFr"}).adjust > 0
    assert scorer.score(row, {"code": "718-7", "property": "MCnc"}).reason == ""  # no opinion
    assert scorer.score(row, {"code": "718-7", "property": "NCnc"}).contradicts
    assert scorer.score({"unit": "mg/dL"}, {"code": "2345-7", "property": "MCnc"}).adjust > 0


def test_a_short_name_gives_the_property_its_long_name_brackets_not():
    """"Methemoglobin/Hemoglobin.total in Blood" writes no property; "MetHgb MFr Bld" does
    (benchmarks/results/short-name-property/RULE.md)."""
    from codemap.domains.lab.loinc import concept_axes, short_name_property

    assert short_name_property("MetHgb MFr Bld") == "MFr"
    assert short_name_property("Chol SerPl-mCnc") == "MCnc"
    assert short_name_property("Hgb Bld") == ""
    axes = concept_axes({"code": "2614-6", "name": "Methemoglobin/Hemoglobin.total in Blood",
                         "short_name": "MetHgb MFr Bld"})
    assert axes.properties == frozenset({"MFr"})
