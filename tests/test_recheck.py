"""`codemap memory recheck`: a mapping memory re-checked against a new release of its target, on
real release slices (tests/data/recheck/*/SOURCE.txt): ICD-10-CM 2021 → 2026 end to end through
the CLI (map, apply --memory, import the new release under the same name, recheck, review, apply
back), the ICD-10-CM importer's seventh characters, and each publisher's replacements (OMOP,
LOINC MapTo, RxNorm RXNCUI, SNOMED CT historical associations)."""
import shutil
import sqlite3
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from typer.testing import CliRunner

from codemap.cli import app
from codemap.review.memory import MappingMemory
from codemap.review.recheck import recheck_memory
from codemap.vocab import ImportOptions, VocabStore, load_target

from .conftest import DATA

RECHECK = DATA / "recheck"
ICD_2021 = RECHECK / "icd10cm" / "icd10cm_codes_2021_slice.csv"
ICD_2026 = RECHECK / "icd10cm" / "icd10cm_tabular_2026_slice.xml"
runner = CliRunner()

# What the slices hold (RECHECK/icd10cm/SOURCE.txt), written out so the importer cannot set it.
LEFT_2026 = {  # 2021 codes the 2026 release no longer has: every one was split
    "O35.0XX0", "O35.0XX1", "O35.0XX2", "O35.0XX3", "O35.0XX4", "O35.0XX5", "O35.0XX9",
    "O35.1XX0", "O35.1XX1", "O35.1XX2", "O35.1XX3", "O35.1XX4", "O35.1XX5", "O35.1XX9",
    "S30.1XXA", "S30.1XXD", "S30.1XXS", "T78.07XA", "T78.07XD", "T78.07XS", "T78.08XA",
    "T78.08XD", "T78.08XS", "T78.1XXA", "T78.1XXD", "T78.1XXS",
    *(f"T40.7X{n}{s}" for n in "123456" for s in "ADS")}
NOW_CATEGORIES = {"B37.3", "F02.81"}  # 2021 codes that are 2026 categories with codes below
RENAMED = {"F02.80", "Q87.40", "Q87.410", "Q87.418", "Q87.42", "Q87.43"}
# A small diagnosis list and the 2021 code a reviewer approved for each.
DIAGNOSES = [("DX1", "Contusion of abdominal wall, initial encounter", "S30.1XXA"),
             ("DX2", "Cannabis poisoning, accidental, initial encounter", "T40.7X1A"),
             ("DX3", "Vulvovaginal candidiasis", "B37.3"),
             ("DX4", "Marfan syndrome with aortic dilatation", "Q87.410"),
             ("DX5", "Cholera, classical", "A00.0"),
             ("DX6", "Kienbock disease, left wrist", "M92.212"),
             ("DX7", "Maternal care for CNS malformation in fetus", "O35.0XX0"),
             ("DX8", "Anaphylaxis to milk, first visit", "T78.07XA")]


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def edit(path: Path, edits: dict) -> None:
    """Set cells as a reviewer would: {(source_code, target_code or rank): {column: value}}."""
    book = openpyxl.load_workbook(path)
    sheet = book["candidates"]
    col = {c.value: i for i, c in enumerate(sheet[1])}
    for row in sheet.iter_rows(min_row=2):
        code = str(row[col["source_code"]].value)
        for key in ((code, str(row[col["target_code"]].value)), (code, f"rank{row[col['rank']].value}")):
            for name, value in edits.get(key, {}).items():
                row[col[name]].value = value
    book.save(path)


def candidates(path: Path) -> pd.DataFrame:
    return pd.read_excel(path, sheet_name="candidates", dtype=str, engine="calamine").fillna("")


def stored(memory: Path, table: str = "decisions") -> pd.DataFrame:
    with sqlite3.connect(memory) as db:
        return pd.read_sql_query(f"SELECT * FROM {table}", db)


def test_icd10cm_2021_to_2026_through_the_cli(tmp_path):
    cache = tmp_path / "cache"
    result = invoke("vocab", "import", "icd10", ICD_2021, "--name", "ICD10CM", "--version", "2021",
                    "--lang", "en")
    assert result.exit_code == 0, result.output
    source = tmp_path / "dx.csv"
    pd.DataFrame([d[:2] for d in DIAGNOSES], columns=["code", "name"]).to_csv(source, index=False)
    mapped = tmp_path / "dx.codemap.xlsx"
    result = invoke("map", source, "--target", "ICD10CM", "-o", mapped, "-k", 3, "--cache-dir", cache,
                    "-q")
    assert result.exit_code == 0, result.output
    # The reviewer types the code they chose over rank 1 and approves it.
    edit(mapped, {(code, "rank1"): {"target_code": target, "decision": "approved",
                                    "equivalence": "equal", "reviewer": "ana"}
                  for code, _, target in DIAGNOSES})
    memory = tmp_path / "mappings.db"
    result = invoke("apply", mapped, "-o", tmp_path / "dx.csv.mappings.csv", "--memory", memory)
    assert result.exit_code == 0, result.output
    assert set(stored(memory)["target_version"]) == {"2021"}

    # The 2026 release, imported under the same name, replaces 2021 in the store.
    result = invoke("vocab", "import", "icd10cm", ICD_2026, "--name", "ICD10CM")
    assert result.exit_code == 0, result.output
    out = tmp_path / "recheck.xlsx"
    result = invoke("memory", "recheck", memory, "--target", "ICD10CM", "-o", out, "-k", 3,
                    "--cache-dir", cache)
    assert result.exit_code == 0, result.output
    assert ("8 approved mappings of ICD10CM (2021) re-checked against 2026: 0 retired, 5 split, "
            "0 replaced, 1 renamed, 2 unchanged") in result.output
    sheet = candidates(out)
    groups = {code: group for code, group in sheet.groupby("source_code", sort=False)}
    assert list(groups) == ["DX1", "DX2", "DX3", "DX7", "DX8", "DX4"]  # splits, then the rename
    first = lambda code, n: groups[code][groups[code]["rank"] != ""]["target_code"].tolist()[:n]
    assert first("DX1", 3) == ["S30.11XA", "S30.12XA", "S30.13XA"]  # the split, first
    assert first("DX2", 2) == ["T40.711A", "T40.721A"]
    assert first("DX3", 2) == ["B37.31", "B37.32"]
    assert first("DX7", 10) == [f"O35.0{n}X0" for n in range(10)]
    for code, group in groups.items():
        old = group[group["rank"] == ""]
        assert len(old) == 1 and old["memory"].iloc[0].endswith("by ana (ICD10CM 2021)"), code
        assert (group["decision"] == "").all()  # nothing pre-filled
        assert (group["rank"] != "").any() and (group["score"] != "").any()  # ranked candidates
    assert groups["DX4"]["memory"].iloc[0].startswith(
        "renamed: name in ICD10CM 2026: 'Marfan syndrome with aortic dilation'")
    run = pd.read_excel(out, sheet_name="run", dtype=str, engine="calamine")
    run = dict(zip(run["setting"], run["value"]))
    assert (run["mappings_split"], run["mappings_unchanged"], run["memory_site"]) == ("5", "2", "dx")

    # Review: a split resolved, a rename confirmed; the others left for later.
    reviewed = tmp_path / "recheck.reviewed.xlsx"
    shutil.copy(out, reviewed)
    edit(reviewed, {("DX1", "S30.11XA"): {"decision": "approved", "equivalence": "equal",
                                          "reviewer": "bo"},
                    ("DX4", "Q87.410"): {"decision": "approved", "equivalence": "equal",
                                         "reviewer": "bo"}})
    exported = tmp_path / "rechecked.sssom.tsv"
    result = invoke("apply", reviewed, "-o", exported, "--format", "sssom", "--memory", memory)
    assert result.exit_code == 0, result.output
    assert "6 sources, 2 approved mappings" in result.output
    assert {"local:DX1", "local:DX4"} <= set(pd.read_csv(exported, sep="\t", comment="#")["subject_id"])
    now = stored(memory).set_index("source_code")
    assert now.loc["DX1", ["target_code", "reviewer", "target_version"]].tolist() == \
        ["S30.11XA", "bo", "2026"]
    assert now.loc["DX4", ["target_name", "target_version"]].tolist() == \
        ["Marfan syndrome with aortic dilation", "2026"]
    assert now.loc["DX2", ["target_code", "decision", "target_version"]].tolist() == \
        ["T40.7X1A", "approved", "2021"]  # undecided: kept as it was
    history = stored(memory, "history").set_index("source_code")
    assert sorted(history.index) == ["DX1", "DX4"]
    assert history.loc["DX1", ["target_code", "reviewer", "target_version", "replaced_by"]].tolist() \
        == ["S30.1XXA", "ana", "2021", str(reviewed)]
    assert history.loc["DX4", "target_name"] == "Marfan's syndrome with aortic dilation"

    # Applying the same workbook again archives nothing more; the next re-check lists the rest.
    assert invoke("apply", reviewed, "-o", exported, "--memory", memory).exit_code == 0
    assert len(stored(memory, "history")) == 2
    again = tmp_path / "recheck2.xlsx"
    result = invoke("memory", "recheck", memory, "-t", "ICD10CM", "-o", again, "--no-candidates")
    assert result.exit_code == 0, result.output
    assert "0 retired, 4 split, 0 replaced, 0 renamed, 4 unchanged" in result.output
    assert list(dict.fromkeys(candidates(again)["source_code"])) == ["DX2", "DX3", "DX7", "DX8"]


def test_every_icd10cm_code_that_left_is_listed_with_what_took_its_place(tmp_path, monkeypatch):
    """All 633 codes of the 2021 slice as approved mappings: the ones that left 2026 (or became
    categories) are listed split, with the codes in their place first; the renamed ones renamed
    (an accent alone is no rename); none that is unchanged."""
    store = VocabStore(tmp_path / "store")
    store.import_files("icd10", ICD_2021, ImportOptions(name="ICD10CM", version="2021", langs=("en",)))
    old = store.load("ICD10CM")
    memory = tmp_path / "all.db"
    _remember(memory, old, old.concepts["code"].tolist())
    store.import_files("icd10cm", ICD_2026, ImportOptions())
    result = recheck_memory(memory, "ICD10CM", store_dir=store.folder)
    status = result.mappings.set_index("target_code")["status"]
    assert set(status[status == "split"].index) == LEFT_2026 | NOW_CATEGORIES
    assert set(status[status == "renamed"].index) == RENAMED
    assert result.counts == {"retired": 0, "split": 46, "replaced": 0, "renamed": 6,
                             "unchanged": 633 - 46 - 6}
    assert status["M92.212"] == "unchanged"  # Kienbock / Kienböck
    new = store.load("ICD10CM").concepts.set_index("code")
    for r in result.mappings[result.mappings["status"] == "split"].itertuples():
        codes = [code for code, _ in r.successors]
        assert codes and all(new.loc[c, "billable"] == "yes" for c in codes), r.target_code
        if len(r.target_code.replace(".", "")) == 7:  # the same seventh character
            assert all(c[-1] == r.target_code[-1] and len(c) == 8 for c in codes), r.target_code
    listed = set(result.workbook["target_code"][result.workbook["rank"].isna()])
    assert listed == LEFT_2026 | NOW_CATEGORIES | RENAMED  # none that is unchanged


def test_icd10cm_import_expands_seventh_characters(tmp_path):
    store = VocabStore(tmp_path)
    store.import_files("icd10cm", ICD_2026, ImportOptions())
    vocab = store.load("ICD10CM")
    concepts = vocab.concepts.set_index("code")
    assert concepts.loc["S30.11XA", "name"] == "Contusion of abdominal wall, initial encounter"
    assert concepts.loc["O35.00X9", "name"].endswith("unspecified, other fetus")
    assert concepts.loc["T40.711S", "billable"] == "yes" and concepts.loc["T40.711", "billable"] == "no"
    assert ("S30.11XA", "is_a", "S30.11") in set(map(tuple, vocab.relations.values))
    assert "S30.1XXA" not in concepts.index and "B37.3" in concepts.index
    store.import_files("icd10", ICD_2021, ImportOptions(name="OLD", langs=("en",)))
    old = store.load("OLD")  # the code table's header line is no code
    assert len(old.concepts) == 633 and "S30.1XXA" in set(old.concepts["code"])


def test_the_whole_2026_release_imports_every_code_once(tmp_path):
    """The April 2026 XML whole (shipped in simple-icd-10-cm, the `train` extra): every code of
    CMS's code file is a concept, and no two concepts share a code (a section of one category,
    id "B10", is "B10-B10")."""
    cm = pytest.importorskip("simple_icd_10_cm")
    data = Path(cm.__file__).parent / "data"
    store = VocabStore(tmp_path)
    store.import_files("icd10cm", data / "icd10c-tabular-April-1-2026.xml", ImportOptions())
    concepts = store.load("ICD10CM").concepts
    assert not concepts["code"].duplicated().any() and "B10-B10" in set(concepts["code"])
    official = (data / "code-list-April-2026.txt").read_text(encoding="utf-8").split()
    dotted = {c if len(c) <= 3 else f"{c[:3]}.{c[3:]}" for c in official
              if "-" not in c and c[:1].isalpha()}
    codes = set(concepts.loc[concepts["kind"] == "code", "code"])
    assert dotted <= codes and len(codes - dotted) == 76  # extensions a note's rule excludes


def _remember(memory: Path, vocab, codes: list, texts: list | None = None, site: str = "site"):
    """Approved decisions onto `codes`, one local source each, the targets named `texts` (as an
    earlier release named them) or as `vocab` names them."""
    names = dict(zip(vocab.concepts["code"], vocab.concepts["name"]))
    texts = texts or [names.get(c, c) for c in codes]
    reviews = pd.DataFrame({"source_code": [f"L{n}" for n in range(len(codes))],
                            "source_text": texts, "target_code": codes, "target_name": texts,
                            "decision": "approved", "equivalence": "equal", "reviewer": "ana",
                            "comment": "", "automatic": False})
    with MappingMemory(memory) as store:
        store.store(reviews, vocab, source=f"{site}.reviewed.xlsx")


def _status(memory, name, store) -> dict:
    result = recheck_memory(memory, name, store_dir=store.folder)
    return {r.target_code: (r.status, [c for c, _ in r.successors])
            for r in result.mappings.itertuples()}


def test_omop_replaced_by_and_deprecated_without(tmp_path):
    """Real Synthea OMOP rows: "Concept replaced by" and "Concept same_as to" lead to the
    successor; a deleted concept without one is retired. With --standard-only the deprecated
    concepts are not kept, their replacements onto kept concepts are."""
    store = VocabStore(tmp_path / "store")
    store.import_files("omop", RECHECK / "omop", ImportOptions())
    memory = tmp_path / "omop.db"
    # Decided on an earlier release, where these concepts were valid (names as stored then).
    _remember(memory, store.load("OMOP"), ["4215570", "4166590", "40521057", "4132546", "8684"])
    assert _status(memory, "OMOP", store) == {
        "4215570": ("replaced", ["42537112"]), "4166590": ("replaced", ["4132546"]),
        "40521057": ("retired", []), "4132546": ("unchanged", []), "8684": ("replaced", ["8737"])}
    why = recheck_memory(memory, "OMOP", store_dir=store.folder).mappings.set_index("target_code")
    assert why.loc["4166590", "successors"][0][1] == "Concept same_as to"
    assert "(updated)" in why.loc["4215570", "why"]
    store.import_files("omop", RECHECK / "omop", ImportOptions(standard_only=True))
    status = _status(memory, "OMOP", store)
    assert status["4166590"] == ("replaced", ["4132546"])  # its own row is gone, its successor not
    assert status["4215570"] == ("retired", [])  # its successor is not standard: not kept


def test_loinc_map_to_chains_rxnorm_remaps_and_snomed_associations(tmp_path):
    store = VocabStore(tmp_path / "store")
    store.import_files("loinc", RECHECK / "loinc", ImportOptions(name="LOINC"))
    loinc = tmp_path / "loinc.db"
    _remember(loinc, store.load("LOINC"), ["13453-6", "14473-3", "2345-7"])
    assert _status(loinc, "LOINC", store) == {
        "13453-6": ("replaced", ["27353-2", "53553-4"]),
        "14473-3": ("replaced", ["21191-2", "53925-4"]),  # through the deprecated 14472-5
        "2345-7": ("unchanged", [])}
    how = dict(recheck_memory(loinc, "LOINC", store_dir=store.folder).mappings["successors"][0])
    assert how["53553-4"] == "MAP_TO: if units are mmol/L"

    rrf = tmp_path / "rrf"
    shutil.copytree(DATA / "store" / "rxnorm" / "rrf", rrf)
    shutil.copy(RECHECK / "rxnorm" / "RXNCUI.RRF", rrf)
    store.import_files("rxnorm", rrf, ImportOptions())
    rxnorm = tmp_path / "rxnorm.db"
    _remember(rxnorm, store.load("RXNORM"), ["999901", "999902", "999903", "198116"],
              ["KCl ER 20 mEq (old)", "gone", "KCl (old)", "KCl 20 MEQ ER"])
    assert _status(rxnorm, "RXNORM", store) == {
        "999901": ("replaced", ["198116"]), "999902": ("retired", []),
        "999903": ("replaced", ["198116", "8591"]), "198116": ("renamed", [])}

    snapshot = tmp_path / "Snapshot"
    shutil.copytree(DATA / "store" / "snomed" / "Snapshot", snapshot)
    for path in (RECHECK / "snomed").glob("der2_*"):
        shutil.copy(path, snapshot / "Refset")
    store.import_files("snomed", snapshot, ImportOptions())
    snomed = tmp_path / "snomed.db"
    _remember(snomed, store.load("SNOMED"), ["1847009", "22298006"])
    assert _status(snomed, "SNOMED", store) == {"1847009": ("replaced", ["64572001"]),
                                                "22298006": ("unchanged", [])}
    assert "(outdated)" in recheck_memory(snomed, "SNOMED", store_dir=store.folder).mappings["why"][0]


def test_an_older_memory_gets_its_history_table_and_errors_are_one_line(tmp_path):
    memory = tmp_path / "old.db"
    with MappingMemory(memory):
        pass
    with sqlite3.connect(memory) as db:
        db.execute("DROP TABLE history")
    with MappingMemory(memory) as opened:
        assert opened.history("ICD10CM").empty  # migrated on open
    store = VocabStore(tmp_path / "store")
    store.import_files("icd10", ICD_2021, ImportOptions(name="ICD10CM", langs=("en",)))
    vocab = load_target("ICD10CM", store_dir=store.folder)
    _remember(memory, vocab, ["A00.0"], site="leeds")
    _remember(memory, vocab, ["A00.1"], site="york")
    out = tmp_path / "out.xlsx"
    for args, message in [
            (["missing.db"], "missing.db: no such mapping memory"),
            ([memory, "--store", store.folder, "-t", "NOPE"], "unknown target 'NOPE'"),
            ([memory, "--store", store.folder], "decisions of 2 sites (leeds, york); re-check one "
                                                "at a time with --site"),
            ([memory, "--store", store.folder, "--site", "kent"], "no decisions of site 'kent'")]:
        result = invoke("memory", "recheck", *args[:1], "-t", "ICD10CM", *args[1:], "-o", out,
                        "--no-candidates")
        assert result.exit_code == 2 and message in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1 and not out.exists()
    result = invoke("memory", "recheck", memory, "-t", "ICD10CM", "--store", store.folder,
                    "--site", "york", "-o", out, "--no-candidates")
    assert result.exit_code == 0 and "1 approved mappings" in result.output and "1 unchanged" in result.output
