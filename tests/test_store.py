"""The vocabulary store and its importers on real release slices (tests/data/store/*), the
`codemap vocab` commands, and `codemap map --target NAME --filter …` end to end."""
import shutil

import pandas as pd
import pytest
from typer.testing import CliRunner

from codemap.cli import app
from codemap.config import VocabFilter
from codemap.errors import CodemapError
from codemap.vocab import ImportOptions, VocabStore
from codemap.vocab import load_target

from .conftest import DATA

STORE_DATA = DATA / "store"
HPO = STORE_DATA / "hpo" / "hp.obo"
EUNOMIA = STORE_DATA / "eunomia"
LOINC_DE = STORE_DATA / "loinc-de"
runner = CliRunner()


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> VocabStore:
    """HPO, Eunomia OMOP and German LOINC imported once for the module."""
    store = VocabStore(tmp_path_factory.mktemp("store"))
    store.import_files("obo", HPO, ImportOptions())
    store.import_files("omop", EUNOMIA, ImportOptions())
    store.import_files("loinc", LOINC_DE, ImportOptions(name="LOINC-DE"))
    return store


def test_obo_import_keeps_names_synonyms_and_hierarchy(store):
    assert [v.name for v in store.list()] == ["HP", "LOINC-DE", "OMOP"]
    meta = store.show("HP")
    assert meta["version"] == "releases/2015-01-27" and meta["concepts"] == 300
    shown = store.show("HP", "HP:0000003")
    assert shown["concept"]["name"] == "Multicystic kidney dysplasia"
    names = shown["names"].set_index("name")["name_type"]
    assert names["Multicystic dysplastic kidney"] == "exact_synonym"
    rels = set(map(tuple, shown["relations"].values))
    assert ("HP:0000003", "is_a", "HP:0000107") in rels
    assert ("HP:0000003", "xref", "UMLS:C0345335") in rels


def test_omop_import_synonyms_ancestors_and_version(store):
    vocab = store.load("OMOP")
    assert vocab.version == "v5.0 18-JAN-19" and len(vocab.concepts) == 436
    names = vocab.names[vocab.names["code"] == "192671"]
    assert "Gastrointestinal hemorrhage" in set(names["name"])
    assert len(names) > 1  # CONCEPT_SYNONYM rows joined in, language 4180186 → en
    assert set(vocab.names["lang"]) == {"en"}
    # CONCEPT_ANCESTOR with one level of separation becomes "Is a" between kept concepts.
    is_a = vocab.relations[vocab.relations["relation"] == "Is a"]
    assert len(is_a) > 10 and not (is_a["head"] == is_a["tail"]).any()


def test_filters_on_store_vocabularies(store):
    drugs = store.load("OMOP", VocabFilter.from_options(["domain=Drug"]))
    assert len(drugs.concepts) == 214 and set(drugs.concepts["domain"]) == {"Drug"}
    two = store.load("OMOP", VocabFilter.from_options(["domain=Drug", "domain=Condition"]))
    assert len(two.concepts) == 214 + 84
    both = store.load("OMOP", VocabFilter.from_options(["domain=Drug", "vocabulary=CVX"]))
    assert len(both.concepts) == 16 and set(both.concepts["vocabulary"]) == {"CVX"}
    assert drugs.content_hash != store.load("OMOP").content_hash  # the index cache sees filters
    standard = store.load("OMOP", VocabFilter(standard_only=True))
    assert set(standard.concepts["standard_concept"]) == {"S"}
    german = store.load("LOINC-DE", VocabFilter.from_options(langs=["de"]))
    assert len(german.concepts) == 200 and set(german.names["lang"]) == {"de-DE"}
    with pytest.raises(CodemapError, match=r"no name is left after lang=fr \(languages tagged: de-DE"):
        store.load("LOINC-DE", VocabFilter.from_options(langs=["fr"]))  # once an empty target
    chem = store.load("LOINC-DE", VocabFilter.from_options(
        ["class=Klinische Chemie (keine Funktionstests)"]))
    assert 0 < len(chem.concepts) < 200
    with pytest.raises(CodemapError, match="no concept attribute 'colour'"):
        store.load("OMOP", VocabFilter.from_options(["colour=red"]))
    with pytest.raises(CodemapError, match="key=value"):
        VocabFilter.from_options(["domain"])


def test_filters_on_built_in_and_file_targets(tmp_path):
    """`--lang`, `--filter`, `--standard-only` hold for every target, not only store imports:
    `--target LOINC --lang en` once kept the German names beside the English ones."""
    full = load_target("LOINC")
    english = load_target("LOINC", VocabFilter.from_options(langs=["en"]))
    assert set(full.names["lang"]) == {"en", "de"} and set(english.names["lang"]) == {"en"}
    assert len(english.concepts) == len(full.concepts)  # every code has an English name
    assert english.content_hash != full.content_hash and "Filtered: lang=en" in english.notice
    german = load_target("LOINC", VocabFilter.from_options(langs=["de"]))
    assert 0 < len(german.concepts) < len(full.concepts)  # codes without a German name go
    chem = load_target("LOINC", VocabFilter.from_options(["class=CHEM"]))
    assert set(chem.concepts["class"].str.upper()) == {"CHEM"}  # values match case aside
    table = DATA / "loinc_long_names.tsv"
    assert len(load_target(str(table), VocabFilter.from_options(["class=CHEM"])).concepts) > 0
    with pytest.raises(CodemapError, match=r"loinc_long_names\.tsv: no name is left after lang=en"):
        load_target(str(table), VocabFilter.from_options(langs=["en"]))  # no language tags
    source, out = tmp_path / "one.csv", tmp_path / "one.out.csv"
    source.write_text("code,name\nA,Sodium\n", encoding="utf-8")
    result = runner.invoke(app, ["map", str(source), "--target", "LOINC", "--lang", "fr",
                                 "-o", str(out)])
    assert result.exit_code == 2 and not out.exists()  # once a traceback from an empty target
    assert "no name is left after lang=fr (languages tagged: de, en)" in result.output


def test_import_time_filters_and_loinc_german_columns(tmp_path):
    store = VocabStore(tmp_path)
    stored = store.import_files("omop", EUNOMIA, ImportOptions(vocabularies=("RxNorm",),
                                                                standard_only=True))
    vocab = store.load(stored.name)
    assert set(vocab.concepts["vocabulary"]) == {"RxNorm"}
    assert set(vocab.concepts["status"]) == {"active"}
    loinc = store.load(store.import_files("loinc", LOINC_DE, ImportOptions()).name)
    row = loinc.concepts.set_index("code").loc["14394-1"]
    assert row["component"] == "Harnstoff-Stickstoff" and row["system"] == "Pleuraflüssigkeit"
    assert "LOINC" in loinc.notice


def _store_files(store: VocabStore) -> list[str]:
    """The store folder's files but the import locks (.NAME.duckdb.lock, kept on purpose:
    codemap.files.locked): no temporary or half-written file may stay."""
    return sorted(p.name for p in store.folder.iterdir() if not p.name.endswith(".lock"))


def test_reimport_replaces_atomically_and_a_failed_import_keeps_the_old(tmp_path):
    store = VocabStore(tmp_path / "store")
    first = tmp_path / "first"
    first.mkdir()
    shutil.copy(HPO, first / "hp.obo")
    store.import_files("obo", first / "hp.obo", ImportOptions())
    old = store.show("HP")
    # A new release (here: 100 terms fewer) replaces the old one under the same name.
    text = HPO.read_text(encoding="utf-8")
    cut = text.split("[Term]")
    (first / "hp.obo").write_text("[Term]".join(cut[:201]), encoding="utf-8")
    store.import_files("obo", first / "hp.obo", ImportOptions())
    new = store.show("HP")
    assert (old["concepts"], new["concepts"]) == (300, 200)
    assert new["content_hash"] != old["content_hash"]
    # A broken release fails with file and line, and the 200-term release stays as it was.
    lines = text.splitlines()
    broken = lines[:40] + ["this line is not OBO"] + lines[40:]
    (first / "hp.obo").write_text("\n".join(broken), encoding="utf-8")
    with pytest.raises(CodemapError, match=r"hp\.obo: line 41: not an OBO"):
        store.import_files("obo", first / "hp.obo", ImportOptions())
    assert store.show("HP")["concepts"] == 200
    assert _store_files(store) == ["HP.duckdb"]


def test_bad_files_name_file_and_line_and_leave_nothing(tmp_path):
    store = VocabStore(tmp_path / "store")
    omop = tmp_path / "omop"
    shutil.copytree(EUNOMIA, omop)
    lines = (EUNOMIA / "concept.csv").read_text(encoding="utf-8").splitlines()
    lines[5] = ",".join(lines[5].split(",")[:4])  # truncated row: line 6 of the file
    (omop / "concept.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(CodemapError, match=r"concept\.csv: line: 6.*expected number of columns"):
        store.import_files("omop", omop, ImportOptions())
    (omop / "concept.csv").unlink()
    with pytest.raises(CodemapError, match="no CONCEPT file found"):
        store.import_files("omop", omop, ImportOptions())
    loinc = tmp_path / "loinc"
    loinc.mkdir()
    source = (LOINC_DE / "deDE15LinguisticVariant.csv").read_text(encoding="utf-8")
    (loinc / "deDE15LinguisticVariant.csv").write_text(source.replace('","', '";"'),
                                                       encoding="utf-8")
    with pytest.raises(CodemapError, match=r"deDE15LinguisticVariant\.csv: line 1: missing "
                                           r"column\(s\) LOINC_NUM"):
        store.import_files("loinc", loinc, ImportOptions())
    assert not (tmp_path / "store").exists() or _store_files(store) == []


def test_vocab_commands(tmp_path):
    folder = str(tmp_path / "store")
    imported = runner.invoke(app, ["vocab", "import", "omop", str(EUNOMIA), "--store", folder,
                                   "--vocabulary", "SNOMED", "--vocabulary", "RxNorm",
                                   "--standard-only", "--name", "GIBLEED"])
    assert imported.exit_code == 0, imported.output
    assert "GIBLEED" in imported.output and (tmp_path / "store" / "GIBLEED.duckdb").exists()
    listed = runner.invoke(app, ["vocab", "list", "--store", folder])
    assert listed.exit_code == 0 and "LOINC" in listed.output and "GIBLEED" in listed.output
    shown = runner.invoke(app, ["vocab", "show", "GIBLEED", "192671", "--store", folder])
    assert shown.exit_code == 0 and "Gastrointestinal hemorrhage" in shown.output
    meta = runner.invoke(app, ["vocab", "show", "GIBLEED", "--store", folder])
    assert '"version": "v5.0 18-JAN-19"' in meta.output and "sha256" in meta.output
    missing = runner.invoke(app, ["vocab", "show", "GIBLEED", "no-such-code", "--store", folder])
    assert missing.exit_code == 2 and "no concept with code" in missing.output
    bad = runner.invoke(app, ["vocab", "import", "omop", str(tmp_path / "nowhere"), "--store",
                              folder])
    assert bad.exit_code == 2 and "not found" in bad.output
    removed = runner.invoke(app, ["vocab", "rm", "GIBLEED", "--store", folder])
    assert removed.exit_code == 0 and not (tmp_path / "store" / "GIBLEED.duckdb").exists()
    again = runner.invoke(app, ["vocab", "rm", "GIBLEED", "--store", folder])
    assert again.exit_code == 2 and "no vocabulary 'GIBLEED'" in again.output


def test_map_onto_an_imported_vocabulary_with_filters(tmp_path):
    """The real default model ranks Eunomia's condition concepts; the filter keeps drugs out."""
    folder = str(tmp_path / "store")
    assert runner.invoke(app, ["vocab", "import", "omop", str(EUNOMIA), "--store",
                               folder]).exit_code == 0
    source = tmp_path / "conditions.csv"
    source.write_text("code,text\nC1,GI bleeding\nC2,acute sinusitis caused by a virus\n"
                      "C3,degenerative joint disease\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    result = runner.invoke(app, ["map", str(source), "--target", "OMOP", "--store", folder,
                                 "--filter", "domain=Condition", "--standard-only", "-o", str(out),
                                 "--cache-dir", str(tmp_path / "cache"), "--method", "encoder"])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    concepts = pd.read_csv(EUNOMIA / "concept.csv", dtype=str).set_index("concept_id")
    assert set(concepts.loc[frame["target_code"], "domain_id"]) == {"Condition"}
    top = frame[frame["rank"] == "1"].set_index("source_code")["target_code"]
    assert top["C1"] == "192671"  # Gastrointestinal hemorrhage
    assert top["C2"] == "40481088"  # Viral sinusitis
    assert top["C3"] == "80180"  # Osteoarthritis
    gold = tmp_path / "gold.csv"
    gold.write_text("text,concept\nGI bleeding,192671\nosteoarthritis of the knee,80180\n",
                    encoding="utf-8")
    scored = runner.invoke(app, ["eval", str(gold), "--target", "OMOP", "--store", folder,
                                 "--gold-col", "concept", "--text-col", "text", "--filter",
                                 "domain=Condition", "--cache-dir", str(tmp_path / "cache")])
    assert scored.exit_code == 0, scored.output
    assert "acc@1" in scored.output
    wrong = runner.invoke(app, ["map", str(source), "--target", "OMOP", "--store", folder,
                                "--filter", "domain", "-o", str(out)])
    assert wrong.exit_code == 2 and "key=value" in wrong.output


def test_target_loads_through_load_target(store):
    vocab = load_target("hp", VocabFilter(), store.folder)
    assert vocab.id == "HP" and len(vocab.concepts) == 300


ICD10CM = STORE_DATA / "icd10cm" / "icd10cm_tabular_slice.xml"
UMLS = STORE_DATA / "umls" / "META"
RXNORM = STORE_DATA / "rxnorm" / "rrf"


def test_icd10cm_inclusion_terms_and_hierarchy(tmp_path):
    store = VocabStore(tmp_path)
    store.import_files("icd10cm", ICD10CM, ImportOptions())
    vocab = store.load("ICD10CM")
    assert vocab.version == "2026" and len(vocab.concepts) == 158  # 155 codes, 2 sections, 1 chapter
    shown = store.show("ICD10CM", "A01.02")
    assert {"Typhoid endocarditis", "Typhoid myocarditis"} <= set(shown["names"]["name"])
    rels = set(map(tuple, vocab.relations.values))
    assert {("A01.02", "is_a", "A01.0"), ("A01.0", "is_a", "A01"), ("A01", "is_a", "A00-A09"),
            ("A00-A09", "is_a", "Chapter 1")} <= rels
    billable = store.load("ICD10CM", VocabFilter.from_options(["billable=yes"]))
    assert "A01.02" in set(billable.concepts["code"]) and "A01.0" not in set(billable.concepts["code"])
    broken = tmp_path / "broken.xml"
    broken.write_text(ICD10CM.read_text(encoding="utf-8")[:20000], encoding="utf-8")
    with pytest.raises(CodemapError, match=r"broken\.xml: line \d+: not well-formed XML"):
        store.import_files("icd10cm", broken, ImportOptions(name="BROKEN"))
    assert store.find("BROKEN") is None


def test_icd10_national_editions_line_up_with_dotted_codes(tmp_path):
    store = VocabStore(tmp_path)
    folder = DATA / "store" / "icd10"
    store.import_files("icd10", folder / "icd10gm2024syst_kodes.txt", ImportOptions())
    gm = store.load("ICD10GM")
    assert gm.version == "2024" and len(gm.concepts) == 40
    assert set(gm.names["lang"]) == {"de"}
    row = gm.concepts.set_index("code").loc["A00.0"]
    assert row["name"] == "Cholera durch Vibrio cholerae O:1, Biovar cholerae"
    assert ("A00.0", "is_a", "A00") in set(map(tuple, gm.relations.values))
    with pytest.raises(CodemapError, match=r"cie10_es\.csv: .*add --lang"):
        store.import_files("icd10", folder / "cie10_es.csv", ImportOptions(name="CIE10"))
    store.import_files("icd10", folder / "cie10_es.csv", ImportOptions(name="CIE10", langs=("es",)))
    es = store.load("CIE10")
    assert set(es.names["lang"]) == {"es"} and "A05.3" in set(es.concepts["code"])
    bad = tmp_path / "bad.csv"
    bad.write_text("A00,Colera\nnot a code,Nada\n", encoding="utf-8")
    with pytest.raises(CodemapError, match=r"bad\.csv: line 2: 'NOT A CODE' is not an ICD-10 code"):
        store.import_files("icd10", bad, ImportOptions(name="BAD", langs=("es",)))
    assert store.find("BAD") is None


def test_umls_rrf_sab_lang_suppression_and_semantic_types(tmp_path):
    store = VocabStore(tmp_path)
    store.import_files("umls", UMLS, ImportOptions())
    vocab = store.load("UMLS")
    concepts = vocab.concepts.set_index("code")
    assert concepts.loc["C0428289", "name"] == "Serum potassium measurement"
    assert concepts.loc["C0032821", "semantic_types"] == "Pharmacologic Substance|Element, Ion, or Isotope"
    assert "Potassium deficiency" not in set(vocab.names["name"])  # SUPPRESS=E
    assert "Potassium measurement (procedure)" not in set(vocab.names["name"])  # SUPPRESS=O
    assert set(vocab.names["lang"]) == {"en", "de", "fr"}
    rels = set(map(tuple, vocab.relations.values))
    # MRREL reads "CUI2 has REL/RELA to CUI1"; the suppressed MSH row is left out.
    assert ("C0428289", "CHD:isa", "C0202194") in rels
    assert ("C0428289", "RO:has_component", "C0032821") in rels  # the measurement has K
    assert not any(r[1] == "RN" for r in rels)
    store.import_files("umls", UMLS, ImportOptions(name="LNC", sabs=("LNC",), langs=("ENG",)))
    lnc = store.load("LNC")
    assert list(lnc.concepts["code"]) == ["C0428289"]
    assert list(lnc.names["name"]) == ["Potassium [Moles/volume] in Serum or Plasma"]
    german = store.load("UMLS", VocabFilter.from_options(langs=["de"]))
    assert set(german.concepts["code"]) == {"C0032821", "C0202194"}


def test_rxnorm_rrf_term_types_and_relations(tmp_path):
    store = VocabStore(tmp_path)
    store.import_files("rxnorm", RXNORM, ImportOptions())
    scd = store.load("RXNORM", VocabFilter.from_options(["tty=SCD"]))
    assert list(scd.concepts["code"]) == ["198116"]
    assert {"KCl 20 MEQ ER Oral Tablet", "POTASSIUM CHLORIDE 20MEQ TAB,SA"} <= set(scd.names["name"])
    rels = set(map(tuple, store.load("RXNORM").relations.values))
    assert ("198116", "RO:has_ingredient", "8591") in rels
    assert ("198116", "RN:has_tradename", "628953") in rels


def test_truncated_rrf_row_is_named_and_nothing_is_stored(tmp_path):
    meta = tmp_path / "META"
    shutil.copytree(UMLS, meta)
    lines = (UMLS / "MRCONSO.RRF").read_text(encoding="utf-8").splitlines()
    lines[6] = "|".join(lines[6].split("|")[:12])  # line 7 cut short
    (meta / "MRCONSO.RRF").write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = VocabStore(tmp_path / "store")
    with pytest.raises(CodemapError, match=r"MRCONSO\.RRF: line: 7.*expected number of columns"):
        store.import_files("umls", meta, ImportOptions())
    (meta / "MRCONSO.RRF").unlink()
    with pytest.raises(CodemapError, match="no MRCONSO file found"):
        store.import_files("umls", meta, ImportOptions())
    assert store.list() == []


SNOMED = STORE_DATA / "snomed" / "Snapshot"


def test_snomed_rf2_preferred_terms_tags_and_relationships(tmp_path):
    store = VocabStore(tmp_path)
    store.import_files("snomed", SNOMED, ImportOptions())
    vocab = store.load("SNOMED")
    assert vocab.version == "20240101"
    concepts = vocab.concepts.set_index("code")
    assert concepts.loc["22298006", "name"] == "Myocardial infarction"
    assert concepts.loc["22298006", "semantic_tag"] == "disorder"
    assert concepts.loc["1847009", "status"] == "deprecated"
    names = vocab.names[vocab.names["code"] == "22298006"].set_index("name")["name_type"]
    assert names["Heart attack"] == "synonym" and names["Myocardial infarction"] == "preferred"
    assert "Cardiac infarction" not in names  # inactive description
    rels = set(map(tuple, vocab.relations.values))
    assert ("22298006", "Finding site", "80891009") in rels
    assert ("57054005", "Is a", "22298006") in rels
    assert ("22298006", "Is a", "138875005") not in rels  # inactive relationship
    disorders = store.load("SNOMED", VocabFilter.from_options(["semantic_tag=disorder"],
                                                              standard_only=True))
    assert set(disorders.concepts["code"]) == {"22298006", "57054005", "64572001"}
    no_desc = tmp_path / "nodesc"
    shutil.copytree(SNOMED, no_desc)
    for path in no_desc.rglob("sct2_Description*"):
        path.unlink()
    with pytest.raises(CodemapError, match="no RF2 description file"):
        store.import_files("snomed", no_desc, ImportOptions(name="BROKEN"))
    assert store.find("BROKEN") is None
