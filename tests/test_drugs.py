"""The drug-string parser on real dev strings, and the drug agreement ordering contract."""
import csv
from importlib import resources

import pandas as pd
import pytest
from typer.testing import CliRunner

from .conftest import DATA
from codemap.cli import app
from codemap.config import RankConfig
from codemap.domains.drug.agreement import TIER_INGREDIENT_ALL, DrugMatcher, drug_scorers
from codemap.domains.evidence import weigh
from codemap.embed import load_or_build_index
from codemap.rank import load_or_build_lexical
from codemap.domains import prepare_target
from codemap.rank import rank_hybrid
from codemap.vocab import Vocabulary
from codemap.vocab.vocabulary import builtin_drugs
from codemap.domains.drug.parse import FORM_TABLE, Strength, parse_drug, strengths_agree

DEV = DATA / "ohdsi-mimic-drugs" / "dev_local_drug_to_concept.tsv"


def _dev_pairs():
    with open(DEV, encoding="utf-8") as handle:
        return [(row[0], row[2]) for row in list(csv.reader(handle, delimiter="\t"))[1:]]


# Table test on the parser: (source string, expected normalised strengths, expected form groups).
CASES = [
    ("budesonide 0.5 mg/2 mL Neb Suspension", ["0.25 MG/ML"], {"inhalation"}),
    ("Combigan 0.2-0.5%", ["0.2 %", "0.5 %"], set()),
    ("Defibrotide (IND) 80 mg / mL - 2.5 mL Amp", ["80 MG/ML"], {"injection"}),
    ("Lodosyn 5O MG", ["50 MG"], set()),
    ("Synthroid 150 mcg Tab", ["0.15 MG"], {"tablet"}),
    ("ATRIPLA 600-200-300 mg", ["600 MG", "200 MG", "300 MG"], set()),
    ("Cryselle (28) 0.3-30 mg-mcg", ["0.3 MG", "0.03 MG"], set()),
    ("Novolog 100u/ml-10ml x 2", ["100 UNT/ML"], set()),
    ("Premarin 0.625 mg/gram Vaginal Cream", ["0.000625 MG/MG"], {"vaginal", "topical"}),
    ("Femhrt 1/5 5mcg/1mg", ["1", "5", "0.005 MG", "1 MG"], set()),
    ("Combigan 1 Drop", [], set()),
    ("Levemir 100 unit/mL Sub-Q", ["100 UNT/ML"], {"injection"}),
    ("Exelon 9.5 mg/24 hour Transderm 24 hr Patch", ["0.395833 MG/HR"], {"patch"}),
    ("Symbicort 160/4.5", ["160", "4.5"], set()),
    ("Vancomycin HCl 1GM FROZ. BAG", ["1000 MG"], {"injection"}),
    ("Epoetin Alfa 20,000 UNIT VIAL", ["20000 UNT"], {"injection"}),
    ("Saccharomyces BOULARDII 1 Capsule", [], {"capsule"}),
    ("Pulmicort ea", [], set()),
]


@pytest.mark.parametrize("text,strengths,forms", CASES)
def test_parser_table(text, strengths, forms):
    parsed = parse_drug(text)
    assert [str(s) for s in parsed.strengths] == strengths
    assert set(parsed.product_forms) == forms


# Every 6th dev string (120 real strings), with the name words, normalised strengths and form
# groups a reader expects (reviewed by hand; see the file).
TABLE = DEV.parent / "parser_table.tsv"


def _table():
    with open(TABLE, encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def test_parser_table_covers_at_least_100_dev_strings():
    sources = {row[0].strip() for row in _dev_pairs()}
    table = _table()
    assert len(table) >= 100
    assert all(row["source"] in sources for row in table)


@pytest.mark.parametrize("row", _table(), ids=lambda row: row["source"])
def test_parser_dev_table(row):
    parsed = parse_drug(row["source"])
    assert " ".join(parsed.words) == row["name_words"]
    assert "; ".join(str(s) for s in parsed.strengths) == row["strengths"]
    assert " ".join(sorted(parsed.product_forms)) == row["forms"]


def test_unitless_concept_numbers_are_name_parts():
    parsed = parse_drug("Folic Acid / Vitamin B 12 / Vitamin B6 Oral Tablet [Folgard]", concept=True)
    assert parsed.strengths == ()


def test_mg_per_gram_agrees_with_rxnorm_mg_per_ml():
    cream = parse_drug("Premarin 0.625 mg/gram Vaginal Cream").strengths[0]
    assert strengths_agree(cream, Strength(0.625, "MG/ML"))
    assert not strengths_agree(cream, Strength(1.25, "MG/ML"))
    assert strengths_agree(Strength(0.137, "MG"), Strength(0.137, "MG/ACTUAT"))


def test_noise_words_are_not_name_words():
    parsed = parse_drug("Defibrotide <IND> 80 mg / mL - 2.5 mL Amp")
    assert parsed.words == ("defibrotide",)
    assert str(parsed.quantity) == "2.5 ML"
    assert parse_drug("Pulmicort ea").words == ("pulmicort",)


def test_concept_names_parse():
    parsed = parse_drug("Brimonidine tartrate 2 MG/ML / Timolol 5 MG/ML Ophthalmic Solution [Combigan]",
                        concept=True)
    assert parsed.ingredients == ("Brimonidine tartrate", "Timolol")
    assert [str(s) for s in parsed.strengths] == ["2 MG/ML", "5 MG/ML"]
    assert parsed.dose_form == "Ophthalmic Solution" and parsed.brand == "Combigan"


def test_equal_strengths_after_normalisation():
    source = parse_drug("budesonide 0.5 mg/2 mL").strengths[0]
    assert strengths_agree(source, Strength(0.25, "MG/ML"))
    assert not strengths_agree(source, Strength(0.5, "MG/ML"))
    assert strengths_agree(Strength(0.1, "%"), Strength(1, "MG/ML"))  # w/v
    assert strengths_agree(Strength(0.05, "%"), Strength(0.0005, "MG/MG"))  # w/w


def test_dev_strings_agree_with_their_gold_strength():
    """On the real dev pairs (>100 strings): where both sides state a comparable strength in the
    same dimension, the parse of the source agrees with the gold concept's parse for most."""
    pairs = _dev_pairs()
    assert len(pairs) >= 100
    both = agree = 0
    for source, gold in pairs:
        s, c = parse_drug(source), parse_drug(gold, concept=True)
        if s.strengths and c.strengths:
            both += 1
            agree += all(any(strengths_agree(x, y) for x in s.strengths) for y in c.strengths)
    assert both > 200
    assert agree / both > 0.8


BUDESONIDE = pd.DataFrame({"code": ["a", "b", "c", "d", "e"], "name": [
    "Budesonide 0.5 MG/ML", "Budesonide 0.25 MG/ML", "Budesonide",
    "Budesonide 0.25 MG/ML Inhalant Suspension [Pulmicort]", "Formoterol 0.02 MG/ML"]})


@pytest.fixture(scope="module")
def budesonide(tmp_path_factory, default_encoder):
    """A tiny drug vocabulary with its real embedding and lexical indexes."""
    folder = tmp_path_factory.mktemp("budesonide")
    concepts = BUDESONIDE.assign(domain_id="Drug")
    names = concepts[["code", "name"]].assign(name_type="preferred", lang="en")
    vocab = Vocabulary(id="BUDE", version="1", concepts=concepts, names=names)
    return (vocab, load_or_build_index(vocab, default_encoder, folder),
            load_or_build_lexical(vocab, folder), default_encoder)


def _rank(budesonide, text, evidence=True, method="hybrid"):
    vocab, index, lexical, encoder = budesonide
    rank = RankConfig(top_k=5, method=method,
                      evidence_off=() if evidence else ("ingredients", "strength", "form", "brand"))
    found = rank_hybrid(index, lexical, vocab, encoder.encode([text]), [{"text": text}],
                        prepare_target(vocab).scorers(rank), rank)
    return found.set_index("target_code")


def test_contradicting_strength_never_outranks_agreeing(budesonide):
    # Without evidence the contradicting concept has the best name score; with it, it comes below
    # the agreeing one, and the explanation says why.
    text = "budesonide 0.5 mg/2 mL"
    plain = _rank(budesonide, text, evidence=False)
    assert plain["rank"]["a"] < plain["rank"]["b"]
    for method in ("hybrid", "encoder", "lexical"):
        ranked = _rank(budesonide, text, method=method)
        assert ranked["rank"]["b"] < ranked["rank"]["a"], method
        assert ranked["rank"]["d"] < ranked["rank"]["a"], method
    explained = _rank(budesonide, text)["explanation"]
    assert "strength 0.25 MG/ML = source 0.5 mg / 2 mL ✔" in explained["b"]
    assert "strength 0.5 MG/ML ≠ source 0.5 mg / 2 mL ✘" in explained["a"]


def test_strength_tier_beats_any_score_gap():
    # Evidence tiers order before scores: the score adjustment alone could not guarantee it.
    matcher = DrugMatcher(BUDESONIDE)
    scorers = drug_scorers(BUDESONIDE)
    row = {"text": "budesonide 0.5 mg/2 mL"}
    agree = weigh(scorers, row, {"code": "b"})
    contradict = weigh(scorers, row, {"code": "a"})
    assert contradict[2] and not agree[2]
    assert agree[3] > contradict[3]
    assert matcher.strength(parse_drug(row["text"]), "a").contradicts


def test_source_without_strength_prefers_less_specific(budesonide):
    ranked = _rank(budesonide, "budesonide")
    assert ranked.index[0] == "c"


def test_brand_implies_ingredients_and_offers_candidates(budesonide):
    ranked = _rank(budesonide, "Pulmicort 0.5 mg/2 mL")
    assert ranked.index[0] == "d"
    assert "brand Pulmicort ✔" in ranked["explanation"]["d"]
    ingredients = drug_scorers(BUDESONIDE)[0]
    assert ingredients.candidates({"text": "Pulmicort ea"}) == {"d"}


def test_a_word_with_an_accented_letter_is_one_name_word():
    assert parse_drug("Paracétamol 500 mg").words == ("paracétamol",)  # not ("parac", "tamol")


def test_ingredients_read_international_and_us_names_on_both_sides():
    """The shipped INN table (codemap.domains.drug.names) on both sides of the comparison: a list
    writing paracetamol or salbutamol meets the shipped target's US names (it had read
    "ingredients acetaminophen not in source ✘"), and a target written with international names
    meets a list writing the US ones."""
    shipped = DrugMatcher(builtin_drugs().concepts)
    paracetamol, salbutamol = parse_drug("Paracetamol 500mg tab"), parse_drug("Salbutamol 100mcg inh")
    assert shipped.ingredients(paracetamol, "19119236").reason == "ingredients acetaminophen ✔"
    assert shipped.ingredients(salbutamol, "46234507").reason == "ingredients albuterol ✔"
    assert "19119236" in shipped.lexical_candidates(paracetamol)
    assert shipped.ingredients(paracetamol, "1177480").adjust < 0  # ibuprofen: still not in it
    international = DrugMatcher(pd.DataFrame({"code": ["p", "s"], "name": [
        "Paracetamol 500 MG Oral Tablet", "Salbutamol 0.1 MG/ACTUAT Metered Dose Inhaler"]}))
    assert international.ingredients(parse_drug("Acetaminophen 500 mg Tab"), "p").tier == \
        TIER_INGREDIENT_ALL
    assert international.ingredients(parse_drug("Albuterol HFA 90 mcg"), "s").reason == \
        "ingredients salbutamol ✔"


# The usual pharmacy abbreviations of dose forms, routes and release types; several had been read
# as name words ("gastro", "resistant", "mr") or not at all ("inh").
@pytest.mark.parametrize("written", [
    "tab", "tabs", "cap", "caps", "susp", "soln", "sol", "inj", "supp", "oint", "crm", "EC", "ER",
    "XR", "DR", "CR", "SR", "MR", "ODT", "neb", "syr", "gtt", "patch", "eff", "disp", "inh",
    "gastro-resistant", "prolonged-release", "modified release"])
def test_dose_form_abbreviations_are_read_as_forms(written):
    parsed = parse_drug(f"Examplumab 10 mg {written}")
    assert parsed.forms and parsed.words == ("examplumab",), parsed


def test_the_dose_form_table_says_where_each_word_comes_from():
    lines = (resources.files("codemap") / FORM_TABLE).read_text(encoding="utf-8").splitlines()
    header = [line for line in lines if line.startswith("#")]
    rows = list(csv.DictReader([line for line in lines if not line.startswith("#")],
                               delimiter="\t"))
    sources = {row["source"] for row in rows}
    assert sources == {"rxnorm", "edqm", "pharmacy", "local"}
    assert all(any(line.startswith(f"#   {source} ") for line in header) for source in sources)
    assert len({row["written"] for row in rows}) == len(rows)  # each word once


def test_abbreviated_forms_agree_with_rxnorm_dose_forms():
    concepts = pd.DataFrame({"code": ["susp", "caps", "dr"], "name": [
        "Amoxicillin 50 MG/ML Oral Suspension", "Amoxicillin 250 MG Oral Capsule",
        "Omeprazole 20 MG Delayed Release Oral Capsule"]})
    matcher = DrugMatcher(concepts)
    amoxicillin = parse_drug("Amoxicillin 250mg/5ml susp")
    assert matcher.form(amoxicillin, "susp").reason == "form Oral Suspension ~ source liquid ✔"
    assert matcher.form(amoxicillin, "caps").reason == "form Oral Capsule ≠ source liquid ✘"
    omeprazole = parse_drug("Omeprazole 20mg gastro-resistant caps")
    assert omeprazole.words == ("omeprazole",) and "delayed" in omeprazole.forms
    assert matcher.form(omeprazole, "dr").adjust > 0


def test_cli_maps_an_english_medication_list_in_the_targets_language(tmp_path, shared_cache):
    """The real CLI on a UK-style medication list against the built-in DRUGS: its language is
    not guessed from drug names (it had been Danish), paracetamol and salbutamol meet their US
    names, and "susp" is a liquid, not a capsule."""
    out = tmp_path / "meds.csv"
    result = CliRunner().invoke(app, ["map", str(DATA / "meds_en.csv"), "--target", "DRUGS",
                                      "-o", str(out), "--cache-dir", str(shared_cache)])
    assert result.exit_code == 0, result.output
    assert "language unknown (too few words carry a language)" in " ".join(result.output.split())
    found = pd.read_csv(out, dtype=str, keep_default_na=False)
    top = found[found["rank"] == "1"].set_index("source_code")["explanation"]
    assert "ingredients acetaminophen ✔" in top["M01"]
    assert "ingredients albuterol ✔" in top["M03"]
    capsule = found[(found["source_code"] == "M02") & (found["target_code"] == "19073184")]
    assert "form Oral Capsule ≠ source liquid ✘" in capsule["explanation"].iloc[0]
