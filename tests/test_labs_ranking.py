"""Units parser, LOINC axes, evidence explanations, fusion and the side-by-side eval command."""
import numpy as np
import pytest
from typer.testing import CliRunner

from codemap.cli import app
from codemap.config import RankConfig
from codemap.domains.lab.columns import UnitScorer, property_from_name, system_from_name
from codemap.domains.lab.text import SpecimenScorer
from codemap.rank.hybrid import _fuse
from codemap.domains.lab.units import parse_unit

from .conftest import DATA


@pytest.mark.parametrize("raw,prop", [
    ("mg/dl", "MCnc"), ("mg/dL", "MCnc"), ("g/dL", "MCnc"), ("mmol/l", "SCnc"),
    ("mEq/L", "SCnc"), ("10^3/uL", "NCnc"), ("x10E9/L", "NCnc"), ("K/uL", "NCnc"),
    ("%", "NFr"), ("U/L", "CCnc"), ("IU/L", "ACnc"), ("sec", "Time"), ("ratio", "Ratio"),
    # US spellings and annotated units (benchmarks/results/unit-spellings/RULE.md)
    ("mmHg", "PPres"), ("#/mm3", "NCnc"), ("cells/mcL", "NCnc"), ("mcg/dL", "MCnc"),
    ("mm/hr", "Vel"), ("#/HPF", "Naric"), ("mg/L FEU", "MCnc"), ("mg/g creat", "MRto"),
    ("mOsm/kg H2O", "Osmol"), ("U/g Hgb", "CCnt"),
])
def test_parse_unit_reads_local_spellings(raw, prop):
    assert prop in parse_unit(raw).properties


def test_parse_unit_unknown_or_blank_has_no_property():
    assert parse_unit("").properties == frozenset()
    assert parse_unit("banana").properties == frozenset()
    assert "SCnc" not in parse_unit("mg/dL").properties
    assert parse_unit("cu µm").properties == frozenset()  # a first word is read only if a ratio


def test_loinc_axes_from_long_name():
    name = "Creatinine [Mass/volume] in Serum or Plasma"
    assert property_from_name(name) == "MCnc"
    assert system_from_name(name) == "Serum or Plasma"
    assert property_from_name("Neutrophils/100 leukocytes in Blood by Automated count") == "NFr"


def test_scorers_explain_and_adjust():
    mass = {"code": "2160-0", "property": "MCnc", "system": "Serum or Plasma",
            "specimen_group": "blood", "example_units": "mg/dL"}
    fits = UnitScorer().score({"unit": "mg/dl"}, mass)
    clash = UnitScorer().score({"unit": "mmol/L"}, mass)
    assert fits.adjust > 0 and "fits MCnc" in fits.reason and not fits.contradicts
    assert clash.adjust < 0 and clash.contradicts and "contradicts" in clash.reason
    assert UnitScorer().score({"unit": ""}, mass).reason == ""
    assert SpecimenScorer().score({"specimen": "Blood"}, mass).adjust > 0
    against = SpecimenScorer().score({"specimen": "Urine"}, mass)
    assert against.adjust < 0 and against.contradicts and against.tier < 0  # a stated axis binds


def test_fusion_weighted_and_rrf():
    enc = np.array([[0.9, 0.5, 0.1]], dtype=np.float32)
    lex = np.array([[0.1, 0.6, 0.2]], dtype=np.float32)
    weighted = _fuse(enc, lex, RankConfig(encoder_weight=0.5))
    assert np.argmax(weighted[0]) == 1  # the concept good on both wins
    rrf = _fuse(enc, lex, RankConfig(fusion="rrf"))
    assert rrf[0, 1] > rrf[0, 2]
    assert _fuse(enc, None, RankConfig()) is enc


def test_eval_prints_methods_side_by_side(shared_cache):
    runner = CliRunner()
    result = runner.invoke(app, ["eval", str(DATA / "mimic_labs_gold.tsv"), "--target", "LOINC",
                                 "--gold-col", "loinc_code", "--text-col", "label",
                                 "--cache-dir", str(shared_cache), "-q"])
    assert result.exit_code == 0, result.output
    for method in ("encoder", "lexical", "hybrid, no evidence", "hybrid + specimen"):
        assert method in result.output
    assert (shared_cache / "lexical").is_dir()
    bad = runner.invoke(app, ["eval", str(DATA / "mimic_labs_gold.tsv"), "--target", "LOINC",
                              "--gold-col", "nope", "--cache-dir", str(shared_cache), "-q"])
    assert bad.exit_code == 2


def test_map_writes_explanations_and_hides_contradicted(tmp_path, shared_cache):
    import pandas as pd

    source = tmp_path / "labs.tsv"
    source.write_text("code\tname\tunit\tfluid\nA1\tCreatinine\tmg/dL\tBlood\n", encoding="utf-8")
    out = tmp_path / "out.tsv"
    result = CliRunner().invoke(app, ["map", str(source), "--target", "LOINC", "-o", str(out),
                                      "-k", "5", "--hide-contradicted", "-q",
                                      "--cache-dir", str(shared_cache)])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out, sep="\t")
    # every candidate shown either fits the unit or has a property no unit speaks to ("clearance"),
    # and none contradicts a stated axis (urine creatinine contradicts the Blood column)
    assert "unit mg/dL fits MCnc" in frame["explanation"].iloc[0]
    assert frame["explanation"].str.contains("unit mg/dL fits MCnc").sum() >= 3
    assert not frame["explanation"].str.contains("contradicts|✘").any()
    assert not frame["target_name"].str.contains("Moles/volume").any()


def _eval_ranks_as_map(tmp_path, shared_cache, header: str, lines: list[str]):
    """Map a list through the CLI and rank it through eval: each row's top five, by item id,
    and eval's rows."""
    import pandas as pd

    from codemap.config import EvalConfig
    from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods, gold_queries

    source = tmp_path / "list.tsv"
    source.write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")
    out = tmp_path / "out.tsv"
    result = CliRunner().invoke(app, ["map", str(source), "--target", "LOINC", "-o", str(out),
                                      "-k", "5", "-q", "--cache-dir", str(shared_cache)])
    assert result.exit_code == 0, result.output
    mapped = pd.read_csv(out, sep="\t", dtype=str)
    by_map = {t: list(c) for t, c in mapped.groupby("source_code", sort=False)["target_code"]}

    g = gold_queries(EvalConfig(gold=source, target="LOINC", gold_col="loinc_code",
                                progress=False, cache_dir=shared_cache))
    found = g.rank(eval_methods(g.base, drugs=False)[DEFAULT_METHOD[False]]).sort_values(["query", "rank"])
    by_eval = {str(g.rows[q]["itemid"]): list(c)[:5] for q, c in found.groupby("query")["target_code"]}
    return by_eval, {code: by_map[code] for code in by_eval}, g


def test_eval_ranks_a_specimen_column_list_as_map_does(tmp_path, shared_cache):
    """A list with a specimen column: map embeds each row's text with its specimen but reads the
    text alone for the n-grams, pools and evidence; eval must rank the same way, or its figures
    (and the calibrations fitted through it) describe another ranking than the one users get."""
    lines = []
    for row in (DATA.parent.parent / "benchmarks" / "data" / "mimic_labs_fluid_dev.tsv").read_text(
            encoding="utf-8").splitlines()[1:40]:
        itemid, label, fluid, _, code = row.split("\t")
        lines.append(f"{itemid}\t{label}\t{fluid}\t{code}")
    by_eval, by_map, g = _eval_ranks_as_map(tmp_path, shared_cache, "itemid\tlabel\tfluid\tloinc_code", lines)
    assert g.rows[0]["specimen"] == "Blood" and "Blood" not in g.rows[0]["text"]
    assert len(by_eval) >= 20
    assert by_eval == by_map


def test_eval_reads_the_lists_language_from_its_text_as_map_does(tmp_path, shared_cache):
    """English aliases with a specimen column in Chinese ("WBC", "全血"): map reads the list's
    language from the text alone (English here); eval read it from the text with the specimen
    (Chinese), ranked the list cross-lingually, and reported 19 of 27 right where map gets 20."""
    rows = (DATA.parent.parent / "benchmarks" / "data" / "taiwan_labs.tsv").read_text(
        encoding="utf-8").splitlines()[1:]
    lines = [f"{i}\t{alias}\t{specimen}\t{unit}\t{code}"
             for i, (alias, _, specimen, unit, code) in enumerate(r.split("\t") for r in rows)]
    by_eval, by_map, g = _eval_ranks_as_map(tmp_path, shared_cache,
                                            "itemid\tlabel\tspecimen\tunit\tloinc_code", lines)
    assert g.language.lang != "zh"
    assert len(by_eval) == 27 and by_eval == by_map
