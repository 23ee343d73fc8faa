"""The review loop on real files: map → a reviewer edits the workbook → apply to each format →
map a changed list with the mapping memory. Real default model, real LOINC concepts with OMOP ids."""
import io
import shutil
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from codemap.cli import app
from .conftest import DATA, EXAMPLES

OMOP_VOCAB = DATA / "omop_loinc_synthea.csv"
runner = CliRunner()

# Written out here rather than imported, so a change to the writer cannot change the test.
STCM_COLUMNS = ["source_code", "source_concept_id", "source_vocabulary_id", "source_code_description",
                "target_concept_id", "target_vocabulary_id", "valid_start_date", "valid_end_date",
                "invalid_reason"]
USAGI_COLUMNS = ["sourceCode", "sourceName", "sourceFrequency", "sourceAutoAssignedConceptIds",
                 "matchScore", "mappingStatus", "equivalence", "statusSetBy", "statusSetOn",
                 "conceptId", "conceptName", "domainId", "mappingType", "comment", "createdBy",
                 "createdOn", "assignedReviewer"]
SSSOM_REQUIRED = ["subject_id", "predicate_id", "object_id", "mapping_justification"]
ORCID = "orcid:0000-0002-1825-0097"


def invoke(*args):
    result = runner.invoke(app, [str(a) for a in args])
    return result


@pytest.fixture(scope="module")
def mapped(tmp_path_factory):
    """labs.xlsx mapped onto the OMOP LOINC sample with the real default model."""
    folder = tmp_path_factory.mktemp("review")
    out = folder / "labs.codemap.xlsx"
    result = invoke("map", EXAMPLES / "labs.xlsx", "--target", OMOP_VOCAB, "-o", out, "-k", 5,
                    "--cache-dir", folder / "cache", "-q")
    assert result.exit_code == 0, result.output
    return folder, out


def edit_workbook(path: Path, edits: list[tuple[str, str, dict]], append: list[dict] = ()) -> dict:
    """Edit the candidates sheet as a reviewer would: (source_code, rank, {column: value}).
    Returns {(source_code, rank): target_code} of the edited rows, as they were proposed."""
    book = openpyxl.load_workbook(path)
    sheet = book["candidates"]
    header = [c.value for c in sheet[1]]
    col = {name: i for i, name in enumerate(header)}
    proposed = {}
    for row in sheet.iter_rows(min_row=2):
        key = (str(row[col["source_code"]].value), str(row[col["rank"]].value))
        for code, rank, values in edits:
            if key == (code, rank):
                proposed[key] = row[col["target_code"]].value
                for name, value in values.items():
                    row[col[name]].value = value
    for values in append:
        sheet.append([values.get(name) for name in header])
    book.save(path)
    return proposed


def candidates_of(path: Path, code: str) -> list[str]:
    frame = pd.read_excel(path, sheet_name="candidates", dtype=str, engine="calamine")
    return frame.loc[frame["source_code"] == code, "target_code"].tolist()


@pytest.fixture(scope="module")
def reviewed(mapped):
    folder, original = mapped
    path = folder / "labs.reviewed.xlsx"
    shutil.copy(original, path)
    assert "24357-6" not in candidates_of(path, "51486")  # the typed code was not proposed
    proposed = edit_workbook(path, [
        ("50889", "1", {"decision": "approved", "equivalence": "equal", "reviewer": ORCID,
                        "comment": "+1 checked"}),
        ("51222", "1", {"decision": "rejected", "reviewer": "Jane Doe"}),
        ("51222", "2", {"decision": "approved", "equivalence": "equal", "reviewer": "Jane Doe"}),
        ("51637", "3", {"decision": "approved", "equivalence": "narrower", "reviewer": "Jane Doe"}),
        # Leukocytes in urine: the sample has no urine leukocyte count; the reviewer types the
        # urinalysis dipstick panel over the rank-1 candidate (blood).
        ("51486", "1", {"target_code": "24357-6", "decision": "approved", "equivalence": "inexact",
                        "reviewer": "Jane Doe", "comment": "strip test, closest"}),
        ("50858", "1", {"decision": "flagged", "comment": "no acid phosphatase in the subset"}),
        ("50982", "1", {"decision": "ignored"}),
    ], append=[{"source_code": "50960", "target_code": "19123-9", "decision": "approved",
                "reviewer": "Jane Doe"}])
    return folder, path, proposed


def test_full_round_every_format(reviewed):
    folder, path, proposed = reviewed
    outputs = {}
    for fmt in ("omop", "sssom", "usagi", "csv"):
        out = folder / f"labs.{fmt}.tsv"
        result = invoke("apply", path, "-o", out, "--format", fmt, "--approve-above", 0.75,
                        "--unmapped-as-zero")
        assert result.exit_code == 0, result.output
        outputs[fmt] = out
    rank3 = proposed[("51637", "3")]

    omop = pd.read_csv(outputs["omop"], sep="\t", dtype=str, keep_default_na=False)
    assert list(omop.columns) == STCM_COLUMNS
    by_code = omop.groupby("source_code")["target_concept_id"].apply(set).to_dict()
    vocab = pd.read_csv(OMOP_VOCAB, dtype=str, keep_default_na=False).set_index("concept_code")
    assert by_code["50889"] == {vocab.at["1988-5", "concept_id"]}
    assert by_code["51222"] == {vocab.at[proposed[("51222", "2")], "concept_id"]}
    assert by_code["51637"] == {vocab.at[rank3, "concept_id"]}
    assert by_code["51486"] == {vocab.at["24357-6", "concept_id"]}
    assert by_code["50960"] == {vocab.at["19123-9", "concept_id"]}
    assert by_code["50858"] == {"0"}  # flagged: unmapped, written as concept 0 when asked
    assert "50982" not in by_code  # ignored sources are left out
    assert omop.loc[omop["target_concept_id"] == "0", "target_vocabulary_id"].eq("None").all()
    assert omop.loc[omop["target_concept_id"] != "0", "target_vocabulary_id"].eq("LOINC").all()

    text = outputs["sssom"].read_text(encoding="utf-8")
    meta = yaml.safe_load("\n".join(l[2:] for l in text.splitlines() if l.startswith("# ")))
    assert meta["mapping_set_id"] and meta["license"].startswith("https://")
    body = "\n".join(l for l in text.splitlines() if not l.startswith("#"))
    sssom = pd.read_csv(io.StringIO(body), sep="\t", dtype=str, keep_default_na=False)
    assert set(SSSOM_REQUIRED) <= set(sssom.columns)
    for column in ("subject_id", "predicate_id", "object_id", "mapping_justification"):
        prefixes = {value.split(":", 1)[0] for value in sssom[column]}
        assert prefixes <= set(meta["curie_map"]), (column, prefixes)
    row = sssom.set_index("subject_id")
    assert row.at["local:50889", "predicate_id"] == "skos:exactMatch"
    assert row.at["local:50889", "object_id"] == "LOINC:1988-5"
    assert row.at["local:50889", "mapping_justification"] == "semapv:ManualMappingCuration"
    assert row.at["local:50889", "author_id"] == ORCID
    assert row.at["local:51637", "predicate_id"] == "skos:narrowMatch"
    assert row.at["local:51486", "predicate_id"] == "skos:closeMatch"
    assert row.at["local:51486", "confidence"] == ""  # typed by the reviewer: no model score
    auto = row.loc["local:50954"]  # LD, rank 1 at 0.79, nobody reviewed it
    assert auto["mapping_justification"] == "semapv:SemanticSimilarityThresholdMatching"
    # Approved on its score (--approve-above); SSSOM's confidence is the calibrated one (the
    # target's pseudo-query calibration here), a probability.
    assert auto["author_label"] == "" and 0 < float(auto["confidence"]) <= 1

    usagi = pd.read_csv(outputs["usagi"], dtype=str, keep_default_na=False)
    assert list(usagi.columns) == USAGI_COLUMNS
    status = usagi.groupby("sourceCode")["mappingStatus"].first().to_dict()
    assert status["50889"] == "APPROVED" and status["50954"] == "AUTO_MAPPED"
    assert status["50858"] == "FLAGGED" and status["50982"] == "IGNORED"
    assert usagi.set_index("sourceCode").at["51637", "equivalence"] == "NARROWER"

    plain = pd.read_csv(outputs["csv"], dtype=str, keep_default_na=False).set_index("source_code")
    assert plain.at["51486", "proposed"] == "False"
    assert plain.at["51486", "target_name"] == "Urinalysis macro (dipstick) panel - Urine"
    assert plain.at["51637", "rank"] == "3"
    assert plain.at["50889", "comment"] == "'+1 checked"  # a formula-looking comment stays text
    assert plain.at["50954", "automatic"] == "True" and plain.at["50889", "automatic"] == "False"


@pytest.mark.parametrize("edit, message", [
    (("50889", "1", {"decision": "aproved"}), "unknown decision 'aproved'"),
    (("50889", "1", {"decision": "approved", "target_code": "9999-9"}), "'9999-9' is not in"),
    (("50889", "2", {"decision": "approved", "equivalence": "same"}), "unknown equivalence 'same'"),
])
def test_apply_reports_problems_with_rows(mapped, tmp_path, edit, message):
    path = tmp_path / "bad.xlsx"
    shutil.copy(mapped[1], path)
    edit_workbook(path, [edit])
    out = tmp_path / "out.csv"
    result = invoke("apply", path, "-o", out)
    assert result.exit_code == 2
    assert message in result.output and "row " in result.output
    assert not out.exists()
    rejects = pd.read_csv(tmp_path / "out.rejects.csv", dtype=str)
    assert rejects["row"].str.startswith("row ").all()


def test_two_approved_targets_need_allow_multiple(mapped, tmp_path):
    path = tmp_path / "two.xlsx"
    shutil.copy(mapped[1], path)
    edit_workbook(path, [("50889", "1", {"decision": "approved"}), ("50889", "2", {"decision": "approved"})])
    result = invoke("apply", path, "-o", tmp_path / "out.csv")
    assert result.exit_code == 2 and "2 approved targets" in result.output
    result = invoke("apply", path, "-o", tmp_path / "out.csv", "--allow-multiple")
    assert result.exit_code == 0, result.output
    assert len(pd.read_csv(tmp_path / "out.csv", dtype=str)) == 2


def test_omop_needs_concept_ids(mapped, tmp_path):
    result = invoke("apply", mapped[1], "-o", tmp_path / "stcm.tsv", "--format", "omop",
                    "--target", "LOINC")
    assert result.exit_code == 2 and "needs OMOP concept ids" in result.output


def test_memory_prefills_the_next_round(reviewed, tmp_path):
    folder, path, proposed = reviewed
    memory = tmp_path / "mappings.db"
    result = invoke("apply", path, "-o", tmp_path / "round1.csv", "--memory", memory)
    assert result.exit_code == 0, result.output
    # Round 2: the lab renamed one test, and the vocabulary release deprecated one target and
    # dropped another (same file name, so the same vocabulary id).
    labs = pd.read_csv(EXAMPLES / "labs.csv", dtype=str, keep_default_na=False)
    labs.loc[labs["itemid"] == "51222", "label"] = "Hemoglobin, total"
    labs.to_csv(tmp_path / "labs_v2.csv", index=False)
    release = tmp_path / "release2"
    release.mkdir()
    vocab = pd.read_csv(OMOP_VOCAB, dtype=str, keep_default_na=False)
    vocab.loc[vocab["concept_code"] == "1988-5", "invalid_reason"] = "D"
    vocab = vocab[vocab["concept_code"] != "24357-6"]
    vocab.to_csv(release / OMOP_VOCAB.name, index=False)
    out = tmp_path / "labs_v2.codemap.xlsx"
    result = invoke("map", tmp_path / "labs_v2.csv", "--target", release / OMOP_VOCAB.name, "-o", out,
                    "-k", 5, "--cache-dir", folder / "cache", "--memory", memory, "-q")
    assert result.exit_code == 0, result.output
    frame = pd.read_excel(out, sheet_name="candidates", dtype=str, engine="calamine").fillna("")
    remembered = frame[frame["memory"] != ""]
    by = {(r.source_code, r.target_code): r for r in remembered.itertuples()}
    assert by[("50960", "19123-9")].decision == "approved"
    assert by[("50960", "19123-9")].memory.startswith("earlier: approved")
    assert by[("50889", "1988-5")].decision == "flagged" and "deprecated" in by[("50889", "1988-5")].memory
    assert by[("51486", "24357-6")].decision == "flagged"
    assert "no longer in" in by[("51486", "24357-6")].memory
    assert by[("50858", proposed[("50858", "1")])].decision == "flagged"
    assert "51222" not in set(remembered["source_code"])  # renamed: a new source, reviewed again
    assert set(frame.loc[frame["source_code"] == "51222", "decision"]) == {""}
    run = pd.read_excel(out, sheet_name="run", dtype=str, engine="calamine")
    assert dict(zip(run["setting"], run["value"]))["memory_sources"] == "6"


def test_remembered_automatic_approval_stays_automatic():
    """A round-1 `--approve-above` approval comes back through the memory with its reviewer mark:
    applying round 2 must not turn it into a manual approval; a person's name does."""
    from codemap.review.apply import AUTOMATIC_BY, resolve_reviews
    from codemap.vocab import Vocabulary

    concepts = pd.DataFrame({"code": ["2345-7", "2951-2"], "name": ["Glucose", "Sodium"]})
    vocab = Vocabulary("T", "1", concepts, concepts.assign(name_type="", lang=""))
    frame = pd.DataFrame({
        "source_code": ["1", "2"], "target_code": ["2345-7", "2951-2"],
        "decision": ["approved", "approved"], "equivalence": ["", ""],
        "reviewer": [f"{AUTOMATIC_BY} 0.95", "Jane Doe"], "comment": ["", ""],
        "source_row": ["1", "2"], "source_text": ["GLU", "NA"], "target_name": ["Glucose", "Sodium"],
        "score": ["0.97", "0.96"], "rank": ["1", "1"], "sheet_row": [2, 3]})
    reviews, problems = resolve_reviews(frame, vocab, approve_above=None)
    assert problems == []
    assert reviews["automatic"].tolist() == [True, False]
