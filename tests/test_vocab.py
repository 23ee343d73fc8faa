"""Vocabulary files and the built-in LOINC subset."""
import pytest

from codemap.errors import CodemapError
from codemap.vocab import builtin_loinc, load_target, load_vocab_file

from .conftest import REPO


def test_vocab_file_with_synonyms(tmp_path):
    path = tmp_path / "my_vocab.tsv"
    path.write_text("concept_code\tconcept_name\tsynonyms\tdomain\n"
                    "A1\tPotassium\tK+ | Kalium\tLab\n"
                    "A2\tSodium\t\tLab\n", encoding="utf-8")
    vocab = load_vocab_file(path)
    assert vocab.id == "my_vocab"
    assert list(vocab.concepts.columns) == ["code", "name", "domain"]
    assert sorted(vocab.names["name"]) == ["K+", "Kalium", "Potassium", "Sodium"]
    assert set(vocab.names.loc[vocab.names["name"] == "Kalium", "name_type"]) == {"synonym"}
    assert load_target(str(path)).content_hash == vocab.content_hash


def test_content_hash_follows_content(tmp_path):
    one = tmp_path / "v.csv"
    one.write_text("code,name\n1,Potassium\n")
    first = load_vocab_file(one).content_hash
    one.write_text("code,name\n1,Potassium [Moles/volume]\n")
    assert load_vocab_file(one).content_hash != first


def test_vocab_file_errors(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("identifier,text\n1,a\n")
    with pytest.raises(CodemapError, match="v.csv: no code column found among identifier, text"):
        load_vocab_file(path)
    path.write_text("code,name\n1,a\n2,\n")
    with pytest.raises(CodemapError, match="v.csv: row 3 has an empty code or name"):
        load_vocab_file(path)


def test_builtin_loinc_subset():
    vocab = load_target("loinc")
    assert vocab.id == "LOINC" and "subset" in vocab.notice
    concepts = vocab.concepts.set_index("code")
    assert concepts.loc["2823-3", "name"] == "Potassium [Moles/volume] in Serum or Plasma"
    assert concepts.loc["2823-3", "class"] == "Chem"
    assert len(vocab.concepts) > 2000 and vocab.concepts["code"].is_unique
    short = vocab.names[(vocab.names["code"] == "2823-3") & (vocab.names["name_type"] == "short")]
    assert list(short["name"]) == ["Potassium SerPl-sCnc"]
    assert builtin_loinc().content_hash == vocab.content_hash


def test_builtin_loinc_names_are_read_as_loinc_writes_them():
    """The shipped list writes 6690-2 without the space before its bracket, with a trailing
    space; read as written, its component was "Leukocytes[#/volume]", no variant of
    "Leukocytes", and "WBC" lost its rank-15 code to the rank-33 one."""
    from codemap.domains.lab.loinc import concept_axes
    concepts = load_target("loinc").concepts.set_index("code")
    assert concepts.loc["6690-2", "name"] == "Leukocytes [#/volume] in Blood by Automated count"
    assert concept_axes(concepts.loc["6690-2"].to_dict()).component == "leukocytes"


def test_unknown_target():
    with pytest.raises(CodemapError, match=r"unknown target 'SNOMED-XYZ': not a file and not a "
                                           r"known vocabulary"):
        load_target("SNOMED-XYZ")


def test_builtin_drug_target_is_the_shipped_file():
    from codemap.vocab.vocabulary import BUILTINS

    vocab = load_target("drugs")
    shipped = load_vocab_file(REPO / "codemap" / "data" / "drugs" / "drug_targets.tsv")
    assert (vocab.id, vocab.source) == ("DRUGS", "built-in") and "RxNorm" in vocab.notice
    assert vocab.concepts.equals(shipped.concepts) and vocab.names.equals(shipped.names)
    assert vocab.content_hash != shipped.content_hash  # its own index cache, under its own id
    assert list(BUILTINS) == ["LOINC", "DRUGS"]


def test_vocab_list_and_target_help_name_every_builtin(tmp_path):
    from typer.testing import CliRunner

    from codemap.cli import app
    from codemap.vocab.vocabulary import BUILTINS

    listed = CliRunner().invoke(app, ["vocab", "list", "--store", str(tmp_path)])
    assert listed.exit_code == 0, listed.output
    lines = listed.output.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["LOINC", "DRUGS"]
    drugs = lines[1].split("\t")
    assert drugs[2] == "1,175 concepts" and drugs[4].startswith("built in: medications")
    assert drugs[5].startswith("licence: Apache-2.0")
    help_text = CliRunner().invoke(app, ["map", "--help"], env={"COLUMNS": "200"}).output
    assert all(name in help_text for name in BUILTINS)


@pytest.mark.parametrize("typed, meant", [("LIONC", "LOINC"), ("drug", "DRUGS"),
                                          ("omop-lab", "OMOP_LAB")])
def test_unknown_target_suggests_a_close_name(tmp_path, typed, meant):
    (tmp_path / "OMOP_LAB.duckdb").touch()  # a store name counts as known, unopened
    with pytest.raises(CodemapError, match=f"not a known vocabulary; did you mean {meant}\\?"):
        load_target(typed, store_dir=tmp_path)


def test_unknown_model_suggests_a_close_name():
    from codemap.embed.models import resolve_model

    with pytest.raises(CodemapError, match=r"model 'multilingal' not found: .*; did you mean "
                                           r"multilingual\?"):
        resolve_model("multilingal")
    with pytest.raises(CodemapError) as caught:
        resolve_model("no-such-model-name")
    assert "did you mean" not in str(caught.value)
