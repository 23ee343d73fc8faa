"""codemap harmonise on the example's real files: three sites' lab lists mapped with `codemap map`,
reviewed by examples/harmonise/review.py, harmonised through the CLI."""
import runpy
import shutil
from pathlib import Path

import pandas as pd
import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from codemap.cli import app

from .conftest import EXAMPLES

runner = CliRunner()
EXAMPLE = EXAMPLES / "harmonise"
SITES = ["boston", "leeds", "berlin"]

pytestmark = pytest.mark.slow  # maps three lists: the model's ONNX export and LOINC index once


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory, shared_cache) -> dict:
    """The example's commands, as its README gives them: map each site, review by script."""
    folder = tmp_path_factory.mktemp("harmonise")
    for site in SITES:
        result = runner.invoke(app, ["map", str(EXAMPLE / f"{site}.csv"), "--target", "LOINC",
                                     "-o", str(folder / f"{site}.codemap.xlsx"), "-q",
                                     "--cache-dir", str(shared_cache)])
        assert result.exit_code == 0, result.output
    review = runpy.run_path(str(EXAMPLE / "review.py"))["review"]
    return {site: review(folder / f"{site}.codemap.xlsx") for site in SITES}


def _harmonise(args: list[str]):
    return runner.invoke(app, ["harmonise", *args])


@pytest.fixture(scope="module")
def harmonised(reviewed, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("out") / "harmonised"
    result = _harmonise([a for s in SITES for a in ("-s", f"{s}={reviewed[s]}")] + ["-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "same-meaning threshold 0.614" in result.output
    return out


def _sheet(folder: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(folder / f"{name}.csv", dtype=str, keep_default_na=False)


def test_example_end_to_end_writes_every_file(harmonised):
    names = {p.relative_to(harmonised).as_posix() for p in harmonised.rglob("*") if p.is_file()}
    assert {"harmonised.xlsx", "crosswalk.csv", "conflicts.csv", "site_coverage.csv",
            "concept_coverage.csv"} <= names
    assert {f"sssom/{s}.sssom.tsv" for s in SITES} <= names
    assert not any(n.startswith("omop/") for n in names)  # built-in LOINC has no concept ids
    book = load_workbook(harmonised / "harmonised.xlsx")
    assert book.sheetnames == ["crosswalk", "conflicts", "site_coverage", "concept_coverage", "run"]
    sheet = book["crosswalk"]
    assert sheet.freeze_panes == "A2" and sheet.auto_filter.ref
    sssom = (harmonised / "sssom" / "leeds.sssom.tsv").read_text(encoding="utf-8")
    assert 'mapping_set_id: "urn:codemap:harmonised:leeds"' in sssom
    assert "local:CREA\tCreatinine" in sssom and "XMATCH" not in sssom  # rejected: not mapped


def test_crosswalk_one_row_per_concept_with_each_sites_codes(harmonised):
    crosswalk = _sheet(harmonised, "crosswalk").set_index("target_code")
    assert crosswalk.index.is_unique
    hb = crosswalk.loc["718-7"]  # haemoglobin: all three sites, each with its unit
    assert (hb["boston_code"], hb["leeds_code"], hb["berlin_code"]) == ("51222", "HB", "L003")
    assert (hb["boston_unit"], hb["leeds_unit"], hb["sites"]) == ("g/dL", "g/L", "3")
    creat = crosswalk.loc["14682-9"]  # creatinine in µmol/L: not at Boston (mg/dL, 38483-4)
    assert creat["boston_code"] == "" and creat["leeds_code"] == "CREA"
    book = load_workbook(harmonised / "harmonised.xlsx")["crosswalk"]
    header = [c.value for c in book[1]]
    row = next(r for r in book.iter_rows(min_row=2) if r[0].value == "14682-9")
    assert row[header.index("boston_code")].fill.fgColor.rgb.endswith("D9D9D9")  # visibly empty


def test_conflict_local_code_to_several_concepts(harmonised):
    conflicts = _sheet(harmonised, "conflicts")
    many = conflicts[conflicts["kind"] == "code_to_many"]
    assert many[["site", "source_code", "target_code", "other_target_code"]].values.tolist() == [
        ["berlin", "L003", "718-7", "30350-3"]]


def test_conflict_same_meaning_names_to_different_concepts(harmonised):
    conflicts = _sheet(harmonised, "conflicts")
    same = conflicts[conflicts["kind"] == "same_name_other_concept"]
    pairs = set(zip(same["source_code"], same["other_source_code"]))
    assert ("50912", "CREA") in pairs  # Creatinine in mg/dL (Boston) vs µmol/L (Leeds)
    assert ("50893", "CA") in pairs  # "Calcium, Total" vs "Calcium (total)"
    assert not (same["source_code"] == "50971").any()  # potassium: both approved 2823-3
    assert (same["similarity"].astype(float) >= 0.614).all()


def test_conflict_unit_disagrees_with_the_loinc_property(harmonised):
    conflicts = _sheet(harmonised, "conflicts")
    units = conflicts[conflicts["kind"] == "unit_property"]
    glucose = units[units["target_code"] == "2345-7"]
    # Leeds' mmol/L on a Mass concentration code is the odd one out, against both other sites.
    assert set(glucose["site"]) == {"leeds"} and set(glucose["other_site"]) == {"boston", "berlin"}
    assert glucose["detail"].str.contains("MCnc").all()
    assert not units["target_code"].eq("718-7").any()  # g/dL and g/L: both mass concentrations


def test_conflict_deprecated_target_against_a_newer_release(reviewed, tmp_path):
    from codemap.vocab.vocabulary import builtin_loinc

    concepts = builtin_loinc().concepts[["code", "name", "class"]].copy()
    concepts["status"] = concepts["code"].map({"2345-7": "DEPRECATED"}).fillna("ACTIVE")
    concepts["replaced_by"] = concepts["code"].map({"2345-7": "14749-6"}).fillna("")
    release = tmp_path / "loinc_next.csv"
    concepts.to_csv(release, index=False)
    out = tmp_path / "out"
    result = _harmonise(["-s", str(reviewed["boston"]), "-s", str(reviewed["leeds"]),
                         "--target", str(release), "-o", str(out)])
    assert result.exit_code == 0, result.output
    stale = _sheet(out, "conflicts").query("kind == 'deprecated_target'")
    assert set(stale["site"]) == {"boston", "leeds"}
    assert set(stale["other_target_code"]) == {"14749-6"}
    assert stale["detail"].str.contains("replaced by 14749-6").all()


def test_coverage_per_site_and_per_concept(harmonised):
    sites = _sheet(harmonised, "site_coverage").set_index("site")
    assert sites.loc["boston", ["sources", "approved", "rejected", "unchecked", "unmapped"]].tolist() == [
        "18", "16", "1", "1", "2"]
    assert sites.loc["berlin", "flagged"] == "1" and sites.loc["leeds", "rejected"] == "1"
    concepts = _sheet(harmonised, "concept_coverage")
    everywhere = set(concepts.loc[concepts["all_sites"] == "True", "target_code"])
    # haemoglobin, potassium, glucose, haematocrit (a bare "Hematocrit" meets the usual automated
    # count since the component back-off, as the other two sites' rows do)
    assert everywhere == {"718-7", "2823-3", "2345-7", "4544-3"}
    assert concepts.set_index("target_code").loc["14682-9", "missing_at"] == "boston"


def test_from_a_mapping_memory(reviewed, tmp_path):
    memory = tmp_path / "study.db"
    for site in SITES:
        result = runner.invoke(app, ["apply", str(reviewed[site]), "-o", str(tmp_path / f"{site}.csv"),
                                     "--memory", str(memory), "--allow-multiple"])
        assert result.exit_code == 0, result.output
    out = tmp_path / "from-memory"
    result = _harmonise(["--memory", str(memory), "-o", str(out)])
    assert result.exit_code == 0, result.output
    crosswalk = _sheet(out, "crosswalk").set_index("target_code")
    assert crosswalk.loc["718-7", ["boston_code", "leeds_code", "berlin_code"]].tolist() == [
        "51222", "HB", "L003"]
    kinds = set(_sheet(out, "conflicts")["kind"])
    assert {"code_to_many", "same_name_other_concept"} <= kinds


def test_bad_inputs_one_line_exit_2_nothing_written(reviewed, tmp_path):
    out = tmp_path / "out"
    twice = _harmonise(["-s", f"a={reviewed['boston']}", "-s", f"a={reviewed['leeds']}", "-o", str(out)])
    assert twice.exit_code == 2 and "site 'a' is given twice" in twice.output

    no_decision = tmp_path / "leeds.reviewed.xlsx"
    shutil.copy(reviewed["leeds"], no_decision)
    book = load_workbook(no_decision)
    sheet = book["candidates"]
    sheet.delete_cols([c.value for c in sheet[1]].index("decision") + 1)
    book.save(no_decision)
    missing = _harmonise(["-s", str(reviewed["boston"]), "-s", str(no_decision), "-o", str(out)])
    assert missing.exit_code == 2 and "no column 'decision'" in missing.output

    other = tmp_path / "berlin.reviewed.xlsx"
    shutil.copy(reviewed["berlin"], other)
    book = load_workbook(other)
    run = book["run"]
    for row in run.iter_rows(min_row=2):
        if row[0].value == "target_version":
            row[1].value = "2.77"  # as a site mapped onto another LOINC release would record
    book.save(other)
    version = _harmonise(["-s", str(reviewed["boston"]), "-s", str(other), "-o", str(out)])
    assert version.exit_code == 2 and "map every site onto one vocabulary version" in version.output

    for result in (twice, missing, version):
        assert len(result.output.strip().splitlines()) == 1
    assert not out.exists() and not list(tmp_path.glob(".out.*"))


def test_output_folder_honours_the_umask(harmonised):
    """The folder is shared with colleagues like every other output: a new folder's mode (0777
    less the umask), not a private temporary folder's 0700."""
    import os
    import stat

    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(harmonised.stat().st_mode) == 0o777 & ~umask
